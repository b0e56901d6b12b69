"""Issue 37, point 3: on a call whose request changes anyway (a removal's new snapshot, or a
`<memory_update>` dropped for a removal), the shipped graph compacts from
`masking_min_clear_ratio` below the compaction trigger: the compaction the next turns would
bring lands on the break there is instead of breaking the provider's prompt cache again.
Without the removal, or further below the trigger, nothing is compacted on that call.

Driven through `create_memory_graph` by tests/test_removals.py's runner (invoke and ainvoke,
every backend); the removal is the console's REST door deleting a note.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import pytest

from memory_plugin import Backend, MemorySettings, create_memory_graph
from memory_plugin.background import await_every, wait_all
from memory_plugin.context_management.compaction import DIVIDERS
from memory_plugin.offline.model import OfflineModel
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
TRIGGER = SETTINGS.summarization_trigger_ratio * WINDOW
EARLY = (SETTINGS.summarization_trigger_ratio - SETTINGS.masking_min_clear_ratio) * WINDOW
WORDS = "word " * 800  # about a tenth of the window a question
BIKE = "9375ZK"  # letters no hex id (a uuid) can hold
IN_BAND = 7  # questions before the last call: its input is within the early share
BELOW = 6  # one fewer: its input is further below the trigger than that
CONFIG: dict[str, Any] = {"configurable": {"thread_id": "t1"}}


@dataclass
class Windowed(Run):
    """The shipped graph on its default settings, its model reporting a small window and the
    offline model writing summaries and flush notes."""

    def __post_init__(self) -> None:
        self.model.profile = {"max_input_tokens": WINDOW}
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


def question(n: int) -> Turn:
    return Turn(f"question {n}: {WORDS}")


def sent_tokens(model: Scripted) -> int:
    return counter_for(None).count(model.sent[-1])


def thread(questions: int, removal: str | None) -> Callable[[Any, Scripted], Scenario]:
    """`questions` turns, then, after a removal of `removal` memory (a note the session's
    snapshot showed, or one only a `<memory_update>` told) or none, one more turn."""

    def scenario(store: Any, model: Scripted) -> Scenario:
        yield kept_note(store)
        shown = yield ScopedMemory(store).remember_plan(ANN, f"Ann's locker code is {SECRET}")
        yield question(0)
        told = yield ScopedMemory(store).remember_plan(ANN, f"Ann's bike lock is {BIKE}")
        for n in range(1, questions):
            yield question(n)
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
    assert len(runner.model.sent) == IN_BAND + 1
    assert sent_tokens(runner.model) < EARLY, "the call was sent the compacted thread"


def not_compacted(runner: Windowed, compactions: int, questions: int) -> None:
    assert compactions == 0
    assert len(runner.model.sent) == questions + 1
    assert sent_tokens(runner.model) < TRIGGER, "the call itself was below the trigger"


def in_band_without_removal(runner: Windowed, compactions: int) -> None:
    not_compacted(runner, compactions, IN_BAND)
    assert sent_tokens(runner.model) >= EARLY, "the thread was within the early share"


def below_with_removal(runner: Windowed, compactions: int) -> None:
    not_compacted(runner, compactions, BELOW)


CASES: list[tuple[str, int, str | None, Callable[[Windowed, int], None]]] = [
    ("snapshot_note_removed_just_under_the_trigger", IN_BAND, "shown", compacted_on_the_removal),
    ("told_note_removed_just_under_the_trigger", IN_BAND, "told", compacted_on_the_removal),
    ("no_removal_just_under_the_trigger", IN_BAND, None, in_band_without_removal),
    ("snapshot_note_removed_further_below", BELOW, "shown", below_with_removal),
    ("told_note_removed_further_below", BELOW, "told", below_with_removal),
]
IDS = [case[0] for case in CASES]


@pytest.mark.parametrize(("name", "questions", "removal", "check"), CASES, ids=IDS)
def test_a_removal_near_the_trigger_compacts_on_its_call(
    backend: Backend,
    name: str,
    questions: int,
    removal: str | None,
    check: Callable[[Windowed, int], None],
) -> None:
    """Under invoke, on every backend."""
    runner = Windowed(backend, model=Scripted())
    drive(thread(questions, removal), runner)
    assert wait_all()
    dividers = runner.graph.get_state(CONFIG).values["memory_context"].get(DIVIDERS)
    check(runner, len(dividers or []))


@pytest.mark.parametrize(("name", "questions", "removal", "check"), CASES, ids=IDS)
async def test_a_removal_near_the_trigger_compacts_on_its_call_async(
    abackend: Backend,
    name: str,
    questions: int,
    removal: str | None,
    check: Callable[[Windowed, int], None],
) -> None:
    """Under ainvoke, on every backend."""
    runner = Windowed(abackend, model=Scripted())
    await adrive(thread(questions, removal), runner)
    await await_every()
    dividers = (await runner.graph.aget_state(CONFIG)).values["memory_context"].get(DIVIDERS)
    check(runner, len(dividers or []))
