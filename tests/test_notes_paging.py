"""Notes page by page, day by day ("Load older"), and one note by key: every backend, sync
and async. The days are found without reading every note of the scope."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import pytest
from langgraph.store.base import BaseStore, Op, Result, SearchOp

from memory_plugin import Backend
from memory_plugin.errors import InvalidArgumentError
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.notes import NotesPage
from tests.scoped_helpers import ANN, ANN_TEAM, BOB

WRITTEN = [
    ("2026-11-02", "Joined Acme"),
    ("2026-11-05", "Moved to Zurich"),
    ("2026-11-05", "Has a dog called Bruno"),
    ("2026-11-09", "Only fact of a day that gets deleted"),
    ("2026-11-12", "Prefers tea"),
    ("2026-11-20", "Runs on Sundays"),
    ("2026-11-20", "Learns Italian"),
    ("2026-11-20", "Plays chess"),
    ("2026-11-28", "Works on the billing service"),
]
EXPECTED = [
    ("2026-11-28", ["Works on the billing service"]),
    ("2026-11-20", ["Plays chess", "Learns Italian", "Runs on Sundays"]),
    ("2026-11-12", ["Prefers tea"]),
    ("2026-11-05", ["Has a dog called Bruno", "Moved to Zurich"]),
    ("2026-11-02", ["Joined Acme"]),
]


def bodies(page: NotesPage) -> list[tuple[str, list[str]]]:
    return [(day, [note.body for note in notes]) for day, notes in page.days]


def seeded(memory: ScopedMemory, ctx: Any = ANN) -> None:
    notes = memory.import_notes(ctx, WRITTEN)
    memory.delete_note(ctx, notes[3].key)


class Recorder:
    """Records the store operations a call makes (sync and async)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, store: BaseStore) -> None:
        self.ops: list[Op] = []
        cls = type(store)
        batch, abatch = cls.batch, cls.abatch

        def record(this: BaseStore, ops: Iterable[Op]) -> list[Op]:
            ops = list(ops)
            if this is store:
                self.ops.extend(ops)
            return ops

        def recording_batch(this: BaseStore, ops: Iterable[Op]) -> list[Result]:
            return batch(this, record(this, ops))

        async def recording_abatch(this: BaseStore, ops: Iterable[Op]) -> list[Result]:
            return await abatch(this, record(this, ops))

        monkeypatch.setattr(cls, "batch", recording_batch)
        monkeypatch.setattr(cls, "abatch", recording_abatch)

    def unfiltered_searches(self) -> list[SearchOp]:
        return [op for op in self.ops if isinstance(op, SearchOp) and not op.filter]


def test_pages_reach_the_end_exactly(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    memory = ScopedMemory(backend.store)
    seeded(memory)
    recorder = Recorder(monkeypatch, backend.store)
    first = memory.notes_page(ANN, days=2)
    assert bodies(first) == EXPECTED[:2]
    assert first.older == "2026-11-20"
    second = memory.notes_page(ANN, before=first.older, days=2)
    assert bodies(second) == EXPECTED[2:4]
    assert second.older == "2026-11-05"
    last = memory.notes_page(ANN, before=second.older, days=2)
    assert bodies(last) == EXPECTED[4:]
    assert last.older is None
    assert recorder.unfiltered_searches() == []


def test_a_page_that_ends_on_the_oldest_day_has_no_older(backend: Backend) -> None:
    memory = ScopedMemory(backend.store)
    seeded(memory)
    whole = memory.notes_page(ANN, days=5)
    assert bodies(whole) == EXPECTED
    assert whole.older is None
    assert memory.notes_page(ANN, before="2026-11-02").days == []
    assert memory.notes_page(ANN, before="2026-11-03", days=31).older is None


async def test_pages_async_in_a_team_scope(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store)
    notes = await memory.aimport_notes(ANN_TEAM, WRITTEN)
    await memory.adelete_note(ANN_TEAM, notes[3].key)
    seen: list[tuple[str, list[str]]] = []
    before: str | None = None
    pages = 0
    while True:
        page = await memory.anotes_page(ANN_TEAM, before=before, days=1)
        seen.extend(bodies(page))
        pages += 1
        if page.older is None:
            break
        before = page.older
    assert seen == EXPECTED
    assert pages == len(EXPECTED)
    assert (await memory.anotes_page(ANN, days=31)).days == []


def test_other_users_see_no_page_and_no_note(backend: Backend) -> None:
    memory = ScopedMemory(backend.store)
    seeded(memory)
    key = memory.notes_page(ANN, days=1).days[0][1][0].key
    assert memory.notes_page(BOB, days=31) == NotesPage([], None)
    assert memory.get_note(BOB, key) is None


async def test_get_note_by_key(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store)
    notes = await memory.aimport_notes(ANN, WRITTEN)
    await memory.adelete_note(ANN, notes[3].key)
    found = await memory.aget_note(ANN, notes[1].key)
    assert found is not None and found.body == "Moved to Zurich"
    assert found.provenance is not None
    assert await memory.aget_note(ANN, notes[3].key) is None
    assert await memory.aget_note(ANN, "2030-01-01#000001") is None
    assert await memory.aget_note(ANN, notes[0].key) == notes[0]


@pytest.mark.parametrize(
    ("arguments", "named"),
    [
        ({"days": 0}, "days"),
        ({"days": 32}, "days"),
        ({"days": True}, "days"),
        ({"days": "3"}, "days"),
        ({"before": "2026-13-01"}, "before"),
        ({"before": "yesterday"}, "before"),
        ({"before": "20261130"}, "before"),
        ({"before": 20261130}, "before"),
        ({"before": "2026-11-30T00:00:00"}, "before"),
    ],
)
async def test_bad_page_arguments_are_refused_before_any_read(
    abackend: Backend, monkeypatch: pytest.MonkeyPatch, arguments: dict[str, Any], named: str
) -> None:
    memory = ScopedMemory(abackend.store)
    recorder = Recorder(monkeypatch, abackend.store)
    with pytest.raises(InvalidArgumentError, match=named):
        memory.notes_page(ANN, **arguments)
    with pytest.raises(InvalidArgumentError, match=named):
        await memory.anotes_page(ANN, **arguments)
    assert recorder.ops == []


def test_bad_note_keys_are_refused(backend: Backend) -> None:
    memory = ScopedMemory(backend.store)
    for key in ("", None, 7):
        with pytest.raises(InvalidArgumentError, match="key"):
            memory.get_note(ANN, key)  # type: ignore[arg-type]
