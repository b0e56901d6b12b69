"""Issue 37, point 3: on a call whose request changes anyway (a removal's new snapshot, or a
`<memory_update>` dropped for a removal), the shipped graph compacts from
`compaction_on_break_ratio` of the window, keeping the latest exchange: the request is billed
in full there anyway, and the calls after it start from a small one. Without the removal,
below that share, or with too little before the latest exchange (under
`masking_min_clear_ratio` of the window), nothing is compacted on that call.

Driven through `create_memory_graph` (invoke and ainvoke) and `create_agent` with
MemoryMiddleware (ainvoke) by tests/test_removals.py's runner, on every backend; the removal is
the console's REST door deleting a note.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest
from langchain.agents import create_agent

from memory_plugin import Backend, MemoryContext, MemorySettings, create_memory_graph
from memory_plugin.background import await_every, wait_all
from memory_plugin.context_management.compaction import DIVIDERS
from memory_plugin.offline.model import OfflineModel
from memory_plugin.prebuilt.middleware import MemoryMiddleware
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server.app import create_app
from memory_plugin.tokens import counter_for
from tests.console_seed import TOKENS
from tests.test_removals import (
    ANN,
    KEPT,
    SECRET,
    SYSTEM,
    Rest,
    Run,
    Scenario,
    Scripted,
    Turn,
    adrive,
    drive,
    kept_note,
)

WINDOW = 10_000
SETTINGS = MemorySettings()
ON_BREAK = SETTINGS.compaction_on_break_ratio * WINDOW
WORDS = "word " * 800  # about a tenth of the window a question
BIKE = "9375ZK"  # letters no hex id (a uuid) can hold
PAST = 4  # questions before the last call: its input is past the on-break share
BELOW = 1  # its input is below that share
CONFIG: dict[str, Any] = {"configurable": {"thread_id": "t1"}}


@dataclass
class Windowed(Run):
    """The shipped graph (or `create_agent` with MemoryMiddleware) on its default settings,
    its model reporting a small window and the offline model writing summaries and flush
    notes."""

    def __post_init__(self) -> None:
        self.model.profile = {"max_input_tokens": WINDOW}
        if self.middleware:
            memory = MemoryMiddleware(
                self.model,
                settings=SETTINGS,
                system_prompt=SYSTEM,
                maintenance_model=OfflineModel(),
            )
            self.graph = create_agent(
                self.model,
                middleware=[memory],
                checkpointer=self.backend.checkpointer,
                store=self.backend.store,
                context_schema=MemoryContext,
            )
        else:
            self.graph = create_memory_graph(
                self.model,
                store=self.backend.store,
                checkpointer=self.backend.checkpointer,
                settings=SETTINGS,
                system_prompt=SYSTEM,
                maintenance_model=OfflineModel(),
            )
        self.app = create_app(
            self.backend.store, tokens=TOKENS, checkpointer=self.backend.checkpointer
        )


def question(n: int, size: int = 1) -> Turn:
    return Turn(f"question {n}: {WORDS * size}")


def sent_tokens(model: Scripted) -> int:
    return counter_for(None).count(model.sent[-1])


def thread(
    questions: int, removal: str | None, last_size: int = 1
) -> Callable[[Any, Scripted], Scenario]:
    """`questions` turns (the last `last_size` times as long), then, after a removal of
    `removal` memory (a note the session's snapshot showed, or one only a `<memory_update>`
    told) or none, one more turn."""

    def scenario(store: Any, model: Scripted) -> Scenario:
        yield kept_note(store)
        shown = yield ScopedMemory(store).remember_plan(ANN, f"Ann's locker code is {SECRET}")
        yield question(0, last_size if questions == 1 else 1)
        told = yield ScopedMemory(store).remember_plan(ANN, f"Ann's bike lock is {BIKE}")
        for n in range(1, questions):
            yield question(n, last_size if n == questions - 1 else 1)
        assert SECRET in model.request()
        if removal is not None:
            note = shown if removal == "shown" else told
            yield Rest("DELETE", f"/api/personal/notes/{quote(note.key)}")
        yield Turn("and now?")
        if removal == "shown":
            assert SECRET not in model.request() and KEPT in model.request()
        elif removal == "told":
            assert (
                BIKE in model.request(2) and BIKE not in model.request() and KEPT in model.request()
            )

    return scenario


def compacted_on_the_removal(runner: Windowed, compactions: int) -> None:
    assert compactions == 1, "the removal's call compacted"
    assert len(runner.model.sent) == PAST + 1
    request = runner.model.request()
    assert sent_tokens(runner.model) < ON_BREAK, "the call was sent the compacted thread"
    assert f"question {PAST - 1}: {WORDS}" in request, "the latest exchange is kept verbatim"
    assert f"question 0: {WORDS}" not in request, "what came before it is summarized"


def not_compacted(runner: Windowed, compactions: int, questions: int) -> None:
    assert compactions == 0
    assert len(runner.model.sent) == questions + 1
    assert f"question 0: {WORDS}" in runner.model.request()


def past_without_removal(runner: Windowed, compactions: int) -> None:
    not_compacted(runner, compactions, PAST)
    assert sent_tokens(runner.model) >= ON_BREAK, "the thread was past the on-break share"


def below_with_removal(runner: Windowed, compactions: int) -> None:
    not_compacted(runner, compactions, BELOW)
    assert sent_tokens(runner.model) < ON_BREAK


def little_before_the_latest_exchange(runner: Windowed, compactions: int) -> None:
    not_compacted(runner, compactions, 2)
    assert sent_tokens(runner.model) >= ON_BREAK, "the thread was past the on-break share"


CASES: list[tuple[str, int, str | None, int, Callable[[Windowed, int], None]]] = [
    ("snapshot_note_removed_past_the_share", PAST, "shown", 1, compacted_on_the_removal),
    ("told_note_removed_past_the_share", PAST, "told", 1, compacted_on_the_removal),
    ("no_removal_past_the_share", PAST, None, 1, past_without_removal),
    ("snapshot_note_removed_below_the_share", BELOW, "shown", 1, below_with_removal),
    ("told_note_removed_little_before_the_latest", 2, "told", 3, little_before_the_latest_exchange),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize(("name", "questions", "removal", "size", "check"), CASES, ids=IDS)
def test_a_removal_compacts_on_its_call(
    backend: Backend,
    name: str,
    questions: int,
    removal: str | None,
    size: int,
    check: Callable[[Windowed, int], None],
) -> None:
    """Under invoke, on every backend."""
    runner = Windowed(backend, model=Scripted())
    drive(thread(questions, removal, size), runner)
    assert wait_all()
    dividers = runner.graph.get_state(CONFIG).values["memory_context"].get(DIVIDERS)
    check(runner, len(dividers or []))


@pytest.mark.parametrize("middleware", [False, True], ids=["graph", "middleware"])
@pytest.mark.parametrize(("name", "questions", "removal", "size", "check"), CASES, ids=IDS)
async def test_a_removal_compacts_on_its_call_async(
    abackend: Backend,
    name: str,
    questions: int,
    removal: str | None,
    size: int,
    check: Callable[[Windowed, int], None],
    middleware: bool,
) -> None:
    """Under ainvoke, on every backend, through the graph and through `create_agent` with
    MemoryMiddleware."""
    runner = Windowed(abackend, middleware=middleware, model=Scripted())
    await adrive(thread(questions, removal, size), runner)
    await await_every()
    dividers = (await runner.graph.aget_state(CONFIG)).values["memory_context"].get(DIVIDERS)
    check(runner, len(dividers or []))
