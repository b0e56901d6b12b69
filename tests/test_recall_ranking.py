"""Recall ranking as a user notices it: stemmed words, dates named in the question, the
turns next to a match, and a top n that does not depend on k; on every backend, sync and
async, keyword-only and hybrid."""

from __future__ import annotations

from collections.abc import Callable
from datetime import date

import pytest

from memory_plugin import Backend, connect
from memory_plugin.plans import run
from memory_plugin.scope import personal_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.notes import Note, all_notes_plan
from memory_plugin.scoped.ranking import date_match, named_dates, rank
from memory_plugin.scoped.recall import SIGNALS, candidates_plan
from memory_plugin.settings import MemorySettings
from tests.embeddings import INDEX
from tests.scoped_helpers import ANN, Clock

WIDE = MemorySettings(recall_max_k=50)
HIKES = [
    ("2023-05-08", "Ann went hiking with Bob near the lake"),
    ("2023-06-20", "Ann went hiking with her sister in the hills"),
    ("2023-07-02", "Ann went hiking in the rain with friends"),
]
PET_DAY = [
    ("2023-03-01", "Carol fed the neighbour's dog"),
    ("2023-03-04", "Bob asked whether Ann adopted a pet last month"),
    ("2023-03-04", "Yes, a tabby called Miso, she sleeps all day"),
    ("2023-03-04", "Bob wanted to see photos of the garden"),
]


def _memory(backend: Backend) -> ScopedMemory:
    return ScopedMemory(backend.store, clock=Clock(), defaults=WIDE)


def _bodies(hits: list) -> list[str]:  # type: ignore[type-arg]
    return [hit.note.body for hit in hits]


def test_a_stemmed_form_matches(backend: Backend) -> None:
    memory = _memory(backend)
    memory.remember(ANN, "Bob likes chess")
    memory.remember(ANN, "Ann runs marathons every spring")
    assert _bodies(memory.recall(ANN, "Who is running?"))[0] == "Ann runs marathons every spring"
    assert memory.recall(ANN, "what is the") == []


def test_a_note_from_the_date_named_in_the_question_ranks_first(backend: Backend) -> None:
    memory = _memory(backend)
    memory.import_notes(ANN, HIKES)
    assert memory.recall(ANN, "Who went hiking on 20 June 2023?")[0].note.day == "2023-06-20"
    assert memory.recall(ANN, "Who went hiking in July 2023?")[0].note.day == "2023-07-02"
    assert memory.recall(ANN, "Who went hiking on May 8, 2023?")[0].note.day == "2023-05-08"


def test_the_turn_after_a_match_comes_with_it(backend: Backend) -> None:
    memory = _memory(backend)
    memory.import_notes(ANN, PET_DAY)
    found = _bodies(memory.recall(ANN, "Did Ann adopt a pet?"))
    assert found[0] == "Bob asked whether Ann adopted a pet last month"
    assert "Yes, a tabby called Miso, she sleeps all day" in found
    assert "Carol fed the neighbour's dog" not in found


def test_the_top_n_is_the_same_for_any_k(backend_url: str) -> None:
    with connect(backend_url, index=INDEX) as backend:
        memory = _memory(backend)
        memory.import_notes(
            ANN,
            [
                (date(2023, 1 + n % 12, 1 + n % 28), f"note {n}: {topic} with {who}")
                for n, (topic, who) in enumerate(
                    (t, w)
                    # "a cat with Bob" after a "note N:" label is one the screen refuses
                    # ("cat" beside a label reads as a shell command): bench/RESULTS.md
                    for t in ("hiking", "chess", "painting", "the budget", "a kitten", "trains")
                    for w in ("Ann", "Bob", "Carol", "the team", "her sister", "friends")
                )
            ],
        )
        for query in ("hiking with Ann", "who played chess in March 2023?", "Bob's kitten"):
            full = memory.recall(ANN, query, k=50)
            assert len(full) >= 20
            for k in (1, 3, 8, 10, 20):
                assert memory.recall(ANN, query, k=k) == full[:k]


async def test_async_recall_ranks_dates_and_neighbours(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store, clock=Clock(), defaults=WIDE)
    await memory.aimport_notes(ANN, [*HIKES, *PET_DAY])
    dated = await memory.arecall(ANN, "Who went hiking on 20 June 2023?")
    assert dated[0].note.day == "2023-06-20"
    pet = _bodies(await memory.arecall(ANN, "Did Ann adopt a pet?"))
    assert "Yes, a tabby called Miso, she sleeps all day" in pet[:3]
    full = await memory.arecall(ANN, "hiking", k=50)
    assert await memory.arecall(ANN, "hiking", k=2) == full[:2]


def test_hybrid_recall_finds_a_note_sharing_no_word(backend_url: str) -> None:
    with connect(backend_url, index=INDEX) as backend:
        memory = _memory(backend)
        memory.remember(ANN, "Bob likes chess")
        memory.remember(ANN, "Taxation paperwork sits with the accountant")
        assert _bodies(memory.recall(ANN, "taxatio"))[0] == (
            "Taxation paperwork sits with the accountant"
        )


@pytest.mark.parametrize(
    ("query", "periods"),
    [
        ("What did she paint on October 13, 2023?", [(date(2023, 10, 13), date(2023, 10, 13))]),
        ("on 8 May, 2023", [(date(2023, 5, 8), date(2023, 5, 8))]),
        ("the 3rd of nothing on 2023-05-08", [(date(2023, 5, 8), date(2023, 5, 8))]),
        ("in May 2023", [(date(2023, 5, 1), date(2023, 5, 31))]),
        ("in Feb 2024", [(date(2024, 2, 1), date(2024, 2, 29))]),
        ("what happened in 2022?", [(date(2022, 1, 1), date(2022, 12, 31))]),
        ("may I ask what you did?", []),
        ("on February 30, 2023", [(date(2023, 1, 1), date(2023, 12, 31))]),
    ],
)
def test_named_dates(query: str, periods: list[tuple[date, date]]) -> None:
    assert named_dates(query) == periods


def test_date_match_prefers_the_day_then_the_weeks_after() -> None:
    periods = named_dates("on 8 May, 2023")
    assert date_match("2023-05-08", periods) == 1.0
    assert date_match("2023-05-20", periods) == 0.5
    assert date_match("2023-05-07", periods) == 0.0
    assert date_match("2023-06-01", periods) == 0.0
    assert date_match("2023-03-01", named_dates("in 2023")) == 0.5


def _note(day: str, position: int, text: str) -> Note:
    return Note(f"{day}#{position:06d}", f"- {text}", day, position, f"{day}T00:00:00", False, 1)


NOTES = {
    n.key: n
    for n in (
        _note("2023-05-08", 1, "Bob asked about the trip"),
        _note("2023-05-08", 2, "It was in Lisbon"),
        _note("2023-05-08", 3, "Then they talked about food"),
        _note("2023-06-01", 1, "Ann planned a trip"),
    )
}


@pytest.mark.parametrize(
    ("keyword", "semantic", "first"),
    [
        ({"2023-05-08#000001": 2.0, "2023-06-01#000001": 1.0}, {}, "2023-05-08#000001"),
        ({}, {"2023-06-01#000001": 0.9, "2023-05-08#000001": 0.2}, "2023-06-01#000001"),
        ({"2023-05-08#000001": 2.0}, {"2023-06-01#000001": 0.95}, "2023-05-08#000001"),
    ],
)
def test_rank_orders_by_fused_scores_and_is_pure(
    keyword: dict[str, float], semantic: dict[str, float], first: str
) -> None:
    ranked: Callable[[], list[tuple[str, float]]] = lambda: rank(  # noqa: E731
        "the trip", keyword, semantic, NOTES
    )
    assert ranked()[0][0] == first
    assert ranked() == ranked()
    assert [key for key, _ in ranked()] == sorted(
        NOTES, key=lambda key: (-dict(ranked())[key], key)
    )


def test_rank_gives_the_neighbour_a_share_and_the_named_day_a_lift() -> None:
    scores = dict(rank("the trip", {"2023-05-08#000001": 2.0}, {}, NOTES))
    assert scores["2023-05-08#000002"] > scores["2023-06-01#000001"] == 0.0
    assert scores["2023-05-08#000003"] > scores["2023-06-01#000001"]
    dated = dict(rank("the trip on June 1, 2023", {"2023-06-01#000001": 1.0}, {}, NOTES))
    assert dated["2023-06-01#000001"] > 1.0
    ignored = rank("the trip", {"gone#000001": 5.0, "2023-06-01#000001": 1.0}, {}, NOTES)
    assert "gone#000001" not in dict(ignored)


def test_recall_candidates_sets_the_breadth_of_each_search(backend: Backend) -> None:
    notes = [(date(2023, 1, 1 + n), f"project milestone {n}") for n in range(30)]
    narrow = ScopedMemory(
        backend.store, clock=Clock(), defaults=MemorySettings(recall_max_k=50, recall_candidates=10)
    )
    narrow.import_notes(ANN, notes)
    assert len(narrow.recall(ANN, "project milestone", k=20)) == 10
    assert len(_memory(backend).recall(ANN, "project milestone", k=20)) == 20


def test_recall_ranks_places_as_it_would_the_notes_and_skips_deleted_ones(
    backend_url: str,
) -> None:
    """Recall places neighbours by their keys without reading them: the scores are those of
    ranking the live notes read in full, and a deleted neighbour neither returns nor lifts."""
    query = "Did Ann adopt a pet in March 2023?"
    with connect(backend_url, index=INDEX) as backend:
        memory = _memory(backend)
        notes = memory.import_notes(ANN, [*HIKES, *PET_DAY])
        gone = next(note for note in notes if note.body.startswith("Yes, a tabby"))
        memory.delete_note(ANN, gone.key)
        scope = personal_scope(ANN)
        found = run(backend.store, candidates_plan(scope, query, SIGNALS, 100, 2))
        live = {note.key: note for note in run(backend.store, all_notes_plan(scope))}
        hits = memory.recall(ANN, query, k=50)
    assert gone.key not in found.notes and gone.key not in {hit.note.key for hit in hits}
    assert set(found.notes) == set(live) and len(live) == len(notes) - 1
    assert [(hit.note, hit.score) for hit in hits] == [
        (live[key], score) for key, score in rank(query, found.keyword, found.semantic, live)
    ]
