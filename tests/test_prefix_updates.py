"""Issue 37, point 3: memory removed that only a `<memory_update>` told (not the session's
system message) drops that update and those after it: the removed text leaves the next model
call, the system message and every message before the dropped update's turn are sent as
before (the provider's prompt cache keeps them), and memory still held is told again.

Driven through the prebuilt graph by tests/test_removals.py's runner (invoke and ainvoke,
every backend, the console's REST door and a tool deleting mid-turn).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from urllib.parse import quote

import pytest
from langchain_core.messages import BaseMessage, HumanMessage

from memory_plugin import Backend
from memory_plugin.context_management.updates import TAG
from memory_plugin.scoped import ScopedMemory
from tests.test_removals import (
    ANN,
    KEPT,
    SECRET,
    Rest,
    Run,
    Scenario,
    Scripted,
    Turn,
    adrive,
    call,
    drive,
    kept_note,
)

LATER = "Ann's badge colour is teal"


def asked(messages: list[BaseMessage], words: str) -> int:
    """The index of the user message that ends with `words` (what the user typed)."""
    return next(
        i
        for i, message in enumerate(messages)
        if isinstance(message, HumanMessage) and str(message.content).endswith(words)
    )


def kept_before(model: Scripted, words: str) -> None:
    """The latest request holds no removed text, sends the previous request's system message
    and every message before the user's `words` unchanged, and the update there is gone."""
    before, after = model.sent[-2], model.sent[-1]
    k = asked(after, words)
    assert SECRET in model.request(2) and SECRET not in model.request()
    assert KEPT in str(after[0].content)
    assert [m.model_dump_json() for m in after[:k]] == [m.model_dump_json() for m in before[:k]]
    assert f"<{TAG}>" in str(before[k].content) and after[k].content == words


def told_note_deleted_over_rest(store: Any, model: Scripted) -> Scenario:
    yield kept_note(store)
    yield Turn("hello")
    note = yield ScopedMemory(store).remember_plan(ANN, f"Ann's locker code is {SECRET}")
    yield Turn("second")
    yield ScopedMemory(store).remember_plan(ANN, LATER)
    yield Turn("third")
    yield Rest("DELETE", f"/api/personal/notes/{quote(note.key)}")
    yield Turn("fourth")
    kept_before(model, "second")
    latest = model.sent[-1]
    assert LATER in str(latest[asked(latest, "fourth")].content)
    assert model.request().count(LATER) == 1


def told_note_deleted_by_a_tool_mid_turn(store: Any, model: Scripted) -> Scenario:
    yield kept_note(store)
    yield Turn("hello")
    note = yield ScopedMemory(store).remember_plan(ANN, f"Ann's locker code is {SECRET}")
    model.script[:] = [call("close_ticket", 1, key=note.key), "Closed it."]
    yield Turn("Close that ticket.")
    kept_before(model, "Close that ticket.")
    yield Turn("thanks")
    assert SECRET not in model.request()
    assert model.sent[-1][0].content == model.sent[0][0].content


CASES: list[Callable[[Any, Scripted], Scenario]] = [
    told_note_deleted_over_rest,
    told_note_deleted_by_a_tool_mid_turn,
]


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
def test_removal_of_told_memory_keeps_the_request_before_it(
    backend: Backend, case: Callable[[Any, Scripted], Scenario]
) -> None:
    """Under invoke, on every backend."""
    drive(case, Run(backend))


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
async def test_removal_of_told_memory_keeps_the_request_before_it_async(
    abackend: Backend, case: Callable[[Any, Scripted], Scenario]
) -> None:
    """Under ainvoke, on every backend."""
    await adrive(case, Run(abackend))
