"""Keyword and vector search in the database, on every backend, sync and async: stemming,
stopwords, deleted notes, scopes, reopening, and triggers kept in step with LangGraph's own
puts and deletes."""

from __future__ import annotations

import sqlite3
from collections.abc import Generator
from pathlib import Path
from typing import Any

import psycopg
import pytest
from langgraph.store.sqlite import SqliteStore

from memory_plugin import Backend, aconnect, connect
from memory_plugin.backends import keywords, vectors
from memory_plugin.backends.search import KeywordSearch, LiveKeys, Scored, VectorSearch
from memory_plugin.backends.steps import drive
from memory_plugin.plans import arun, run
from memory_plugin.scope import personal_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.notes import NOTE_INDEX, NOTES, update_note_plan
from tests.embeddings import INDEX
from tests.faults import FaultyStore
from tests.scoped_helpers import ANN, BOB, Clock

FACTS = [
    "Ann runs along the river every morning",
    "Ann's sister is a pediatric nurse in Basel",
    "The quarterly report is due on Friday",
    "Ann prefers green tea to coffee",
]
ANN_NOTES = personal_scope(ANN).child(NOTES)
BOB_NOTES = personal_scope(BOB).child(NOTES)
SQLITE_SEARCH_TABLES = (
    "memory_note_rows",
    "memory_note_stats",
    "memory_note_terms",
    "memory_claims",
    "memory_search_migrations",
)


def _ask(request: KeywordSearch | VectorSearch) -> Generator[Any, Any, list[Scored]]:
    found: list[Scored] = yield request
    return found


def keys(store: Any, query: str, namespace: tuple[str, ...] = ANN_NOTES) -> list[str]:
    """The keys a keyword search returns, best first."""
    return [s.key for s in run(store, _ask(KeywordSearch(namespace, query, 10)))]


def test_a_stemmed_word_matches_and_stopwords_alone_match_nothing(backend: Backend) -> None:
    memory = ScopedMemory(backend.store, clock=Clock())
    notes = [memory.remember(ANN, fact) for fact in FACTS]
    assert keys(backend.store, "who is running by the rivers?") == [notes[0].key]
    assert keys(backend.store, "reports") == [notes[2].key]
    assert keys(backend.store, "what is it that was there") == []
    found = run(backend.store, _ask(KeywordSearch(ANN_NOTES, "Ann nurse", 10)))
    assert found[0].key == notes[1].key and found[0].value is not None
    assert found[0].value["text"] == "- " + FACTS[1]
    assert [s.score for s in found] == sorted((s.score for s in found), reverse=True)
    assert all(s.score > 0 for s in found) and len(found) == 3


def test_deleted_and_other_scopes_notes_never_come_back(backend: Backend) -> None:
    memory = ScopedMemory(backend.store, clock=Clock())
    kept = memory.remember(ANN, "green tea in the morning")
    gone = memory.remember(ANN, "green tea at night")
    memory.remember(BOB, "green tea all day")
    memory.delete_note(ANN, gone.key)
    assert keys(backend.store, "green tea") == [kept.key]
    assert len(keys(backend.store, "green tea", BOB_NOTES)) == 1


def test_the_index_keeps_step_with_langgraph_puts_and_deletes(backend: Backend) -> None:
    store = backend.store
    store.put(ANN_NOTES, "2023-05-08#000001", {"text": "- sailing on Lake Zurich"})
    store.put(ANN_NOTES, "2023-05-08#000002", {"text": "- hiking in the Alps"})
    assert keys(store, "sail") == ["2023-05-08#000001"]
    store.put(ANN_NOTES, "2023-05-08#000001", {"text": "- rowing on Lake Zurich"})
    assert keys(store, "sail") == []
    assert keys(store, "rowed") == ["2023-05-08#000001"]
    store.put(ANN_NOTES, "2023-05-08#000002", {"text": "", "deleted": True})
    assert keys(store, "hiking") == []
    store.delete(ANN_NOTES, "2023-05-08#000001")
    assert keys(store, "Zurich") == []


def test_marking_notes_consolidated_keeps_their_search_results(backend: Backend) -> None:
    memory = ScopedMemory(backend.store, clock=Clock())
    notes = [memory.remember(ANN, fact) for fact in FACTS]
    query = KeywordSearch(ANN_NOTES, "Ann tea nurse river", 10)
    before = [(s.key, round(s.score, 9)) for s in run(backend.store, _ask(query))]
    change = {"consolidated": True, "consolidated_into": 1}
    for note in notes:
        assert run(backend.store, update_note_plan(personal_scope(ANN), note.key, change))
    after = run(backend.store, _ask(query))
    assert [(s.key, round(s.score, 9)) for s in after] == before
    assert len(after) == 3 and all(s.value and s.value["consolidated"] for s in after)
    memory.delete_note(ANN, notes[0].key)
    assert keys(backend.store, "river") == []


def test_a_store_from_before_the_unused_gin_index_was_dropped_is_upgraded(
    request: pytest.FixtureRequest,
) -> None:
    postgres_url = _durable_url("postgres", request)
    with connect(postgres_url) as backend:
        note = ScopedMemory(backend.store, clock=Clock()).remember(ANN, "Ann keeps bees")
    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute("CREATE INDEX memory_note_fts_tsv ON memory_note_fts USING gin (tsv)")
        conn.execute("DELETE FROM memory_search_migrations WHERE v >= 3")
    with connect(postgres_url) as backend:
        assert keys(backend.store, "bee") == [note.key]
        change = {"consolidated": True}
        assert run(backend.store, update_note_plan(personal_scope(ANN), note.key, change))
        assert keys(backend.store, "bee") == [note.key]
    with psycopg.connect(postgres_url) as conn:
        assert conn.execute("SELECT to_regclass('memory_note_fts_tsv')").fetchone() == (None,)
        versions = conn.execute("SELECT v FROM memory_search_migrations ORDER BY v").fetchall()
        assert versions == [(1,), (2,), (3,), (4,)]


def test_a_wrapped_store_searches_in_python_with_the_same_stemming(backend: Backend) -> None:
    memory = ScopedMemory(FaultyStore(backend.store), clock=Clock())
    notes = [memory.remember(ANN, fact) for fact in FACTS]
    assert keys(FaultyStore(backend.store), "running rivers") == [notes[0].key]
    assert keys(FaultyStore(backend.store), "the of and") == []


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_results_are_identical_after_reopening(kind: str, request: pytest.FixtureRequest) -> None:
    url = _durable_url(kind, request)
    with connect(url) as backend:
        memory = ScopedMemory(backend.store, clock=Clock())
        for n in range(30):
            memory.remember(ANN, f"{FACTS[n % 4]} (entry {n})")
        before = run(backend.store, _ask(KeywordSearch(ANN_NOTES, "Ann tea report", 20)))
    with connect(url) as backend:
        after = run(backend.store, _ask(KeywordSearch(ANN_NOTES, "Ann tea report", 20)))
    assert [(s.key, round(s.score, 9)) for s in after] == [
        (s.key, round(s.score, 9)) for s in before
    ]
    assert len(after) == 20


def _durable_url(kind: str, request: pytest.FixtureRequest) -> str:
    from tests.conftest import url_for

    return url_for(kind, request, request.getfixturevalue("tmp_path"))


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_notes_written_before_the_index_existed_are_indexed_once(
    kind: str, request: pytest.FixtureRequest
) -> None:
    url = _durable_url(kind, request)
    with connect(url) as backend:
        memory = ScopedMemory(backend.store, clock=Clock())
        note = memory.remember(ANN, "Ann keeps bees on the roof")
    _drop_search_tables(kind, url)
    with connect(url) as backend:
        assert keys(backend.store, "beekeeping bee") == [note.key]
        memory = ScopedMemory(backend.store, clock=Clock())
        assert memory.remember(ANN, "Ann sells honey").position == 2
        assert len(keys(backend.store, "bees honey")) == 2


def _drop_search_tables(kind: str, url: str) -> None:
    if kind == "sqlite":
        conn = sqlite3.connect(url.removeprefix("sqlite:///"))
        for trigger in ("insert", "update", "delete"):
            conn.execute(f"DROP TRIGGER memory_note_index_{trigger}")
        for table in SQLITE_SEARCH_TABLES:
            conn.execute(f"DROP TABLE {table}")
        conn.commit()
        conn.close()
        return
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TRIGGER memory_note_fts_sync ON store")
        conn.execute(
            "DROP TABLE memory_note_fts, memory_note_stats, memory_note_terms, memory_claims"
        )
        conn.execute("DELETE FROM memory_search_migrations")


async def test_async_keyword_search_matches_sync(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store, clock=Clock())
    notes = [await memory.aremember(ANN, fact) for fact in FACTS]
    await memory.adelete_note(ANN, notes[3].key)
    found = await arun(abackend.store, _ask(KeywordSearch(ANN_NOTES, "running tea", 10)))
    assert [s.key for s in found] == [notes[0].key]
    assert await arun(abackend.store, _ask(KeywordSearch(ANN_NOTES, "the", 10))) == []


def _fill(memory: ScopedMemory, count: int) -> None:
    memory.import_notes(
        ANN, [("2023-05-08", f"Ann fact number {n} about topic {n % 7}") for n in range(count)]
    )
    memory.import_notes(
        BOB, [("2023-05-08", f"Bob fact number {n} about topic {n % 7}") for n in range(count)]
    )


def test_vector_search_returns_the_whole_limit_from_one_scope(backend_url: str) -> None:
    with connect(backend_url, index=INDEX) as backend:
        _fill(ScopedMemory(backend.store), 120)
        namespace = personal_scope(ANN).child(NOTE_INDEX)
        found = run(backend.store, _ask(VectorSearch(namespace, "fact about topic 3", 100)))
        few = run(backend.store, _ask(VectorSearch(namespace, "fact about topic 3", 5)))
    assert len(found) == 100 and len({s.key for s in found}) == 100
    assert all(s.value is not None and s.value["text"].startswith("Ann") for s in found)
    assert [s.score for s in found] == sorted((s.score for s in found), reverse=True)
    assert [round(s.score, 6) for s in few] == [round(s.score, 6) for s in found[:5]]


async def test_async_vector_search_and_no_index_fails(backend_url: str) -> None:
    async with aconnect(backend_url, index=INDEX) as backend:
        memory = ScopedMemory(backend.store)
        await memory.aimport_notes(ANN, [("2023-05-08", f"Ann fact {n}") for n in range(50)])
        namespace = personal_scope(ANN).child(NOTE_INDEX)
        found = await arun(backend.store, _ask(VectorSearch(namespace, "Ann fact 7", 45)))
    assert len(found) == 45 and found[0].value == {"text": "Ann fact 7", "day": "2023-05-08"}
    async with aconnect(backend_url) as plain:
        with pytest.raises(ValueError, match="no vector index"):
            await arun(plain.store, _ask(VectorSearch(namespace, "Ann", 5)))


def _scaled(texts: list[str]) -> list[list[float]]:
    return [[3.0 * x for x in vector] for vector in INDEX["embed"](texts)]  # type: ignore[operator]


def test_vector_scores_are_cosine_whatever_the_vectors_length(
    backend_url: str, request: pytest.FixtureRequest
) -> None:
    """Unit vectors take SQLite's faster L2 path, longer ones its cosine path: same answer."""
    results = []
    for n, embed in enumerate((INDEX["embed"], _scaled)):
        url = backend_url
        if n and url.startswith("sqlite"):
            url = url.replace("memory.db", "scaled.db")
        elif n and url.startswith("postgres"):
            url = _durable_url("postgres", request)
        with connect(url, index={**INDEX, "embed": embed}) as backend:
            memory = ScopedMemory(backend.store)
            memory.import_notes(ANN, [("2023-05-08", fact) for fact in FACTS])
            namespace = personal_scope(ANN).child(NOTE_INDEX)
            found = run(backend.store, _ask(VectorSearch(namespace, "river run", 4)))
        results.append([(s.key, round(s.score, 4)) for s in found])
    assert results[0] == results[1]
    assert results[0][0][0].endswith("#000001") and len(results[0]) == 4


def _live(keys: tuple[str, ...]) -> Generator[Any, Any, set[str]]:
    found: set[str] = yield LiveKeys(ANN_NOTES, keys)
    return found


def test_live_keys_names_the_live_notes_only(backend: Backend) -> None:
    memory = ScopedMemory(backend.store, clock=Clock())
    notes = [memory.remember(ANN, fact) for fact in FACTS]
    memory.delete_note(ANN, notes[1].key)
    asked = (*(note.key for note in notes), "2000-01-01#000001")
    assert run(backend.store, _live(asked)) == {notes[0].key, notes[2].key, notes[3].key}
    assert run(backend.store, _live(())) == set()


async def test_async_live_keys_match_sync(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store, clock=Clock())
    notes = [await memory.aremember(ANN, fact) for fact in FACTS]
    await memory.adelete_note(ANN, notes[0].key)
    found = await arun(abackend.store, _live(tuple(note.key for note in notes)))
    assert found == {note.key for note in notes[1:]}


def _nearest(store: Any, query: str, limit: int) -> list[tuple[str, float]]:
    namespace = personal_scope(ANN).child(NOTE_INDEX)
    return [(s.key, s.score) for s in run(store, _ask(VectorSearch(namespace, query, limit)))]


@pytest.mark.extra("local")  # the vector cache needs numpy
def test_sqlite_cached_vectors_answer_as_a_full_scan_after_other_connections_write(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A scope's vectors cached in one process stay exact when another connection adds
    and deletes notes: same keys, scores and order as sqlite-vec's full scan."""
    monkeypatch.setattr(vectors, "CACHED_MIN", 20)
    url = f"sqlite:///{tmp_path / 'cached.db'}"
    with connect(url, index=INDEX) as reader, connect(url, index=INDEX) as writer:
        _fill(ScopedMemory(writer.store), 80)
        scanned = _nearest(reader.store, "fact about topic 3", 10)
        cached = _nearest(reader.store, "fact about topic 3", 10)
        assert cached == scanned and vectors._caches[reader.store].matrices
        other = ScopedMemory(writer.store)
        other.delete_note(ANN, cached[0][0])
        added = other.remember(ANN, "fact about topic 3")
        again = [_nearest(reader.store, "fact about topic 3", 10) for _ in range(3)]
        with monkeypatch.context() as scan:
            scan.setattr(vectors, "np", None)
            full = _nearest(reader.store, "fact about topic 3", 10)
    assert again == [full] * 3
    assert full[0][0] == added.key and cached[0][0] not in dict(full)


@pytest.mark.extra("local")  # the vector cache needs numpy
async def test_async_sqlite_cached_vectors_match_the_full_scan(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "CACHED_MIN", 20)
    namespace = personal_scope(ANN).child(NOTE_INDEX)
    async with aconnect(f"sqlite:///{tmp_path / 'cached.db'}", index=INDEX) as backend:
        memory = ScopedMemory(backend.store)
        await memory.aimport_notes(ANN, [("2023-05-08", f"Ann fact {n}") for n in range(60)])
        request = VectorSearch(namespace, "Ann fact 7", 12)
        cached = [await arun(backend.store, _ask(request)) for _ in range(2)][-1]
        await memory.adelete_note(ANN, cached[0].key)
        again = [await arun(backend.store, _ask(request)) for _ in range(3)]
        with monkeypatch.context() as scan:
            scan.setattr(vectors, "np", None)
            full = await arun(backend.store, _ask(request))
    assert vectors._caches[backend.store].matrices
    assert [[(s.key, s.score) for s in one] for one in again] == [
        [(s.key, s.score) for s in full]
    ] * 3
    assert full and cached[0].key not in {s.key for s in full}


@pytest.mark.extra("local")  # the vector cache needs numpy
def test_sqlite_vectors_over_the_cache_budget_are_scanned(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vectors, "CACHED_MIN", 20)
    with connect(f"sqlite:///{tmp_path / 'budget.db'}", index=INDEX) as backend:
        _fill(ScopedMemory(backend.store), 40)
        monkeypatch.setattr(vectors, "BUDGET", 1_000)
        over = [_nearest(backend.store, "fact about topic 5", 8) for _ in range(3)]
        assert not vectors._caches[backend.store].matrices
        monkeypatch.setattr(vectors, "BUDGET", 2**30)
        within = [_nearest(backend.store, "fact about topic 5", 8) for _ in range(2)]
        assert vectors._caches[backend.store].matrices
    assert over == [within[0]] * 3 and within[0] == within[1] and len(within[0]) == 8


ANN_HISTORY = [("2023-05-08", fact) for fact in FACTS] + [
    ("2023-05-09", "Ann drank green tea by the river with her sister"),
    ("2023-05-10", "The report on river cleanup is due"),
]
BOB_HISTORY = [
    ("2023-05-08", f"Bob {'drinks tea ' * (1 + n % 4)}and writes report {n} at the river")
    for n in range(60)
] + [("2023-05-09", f"Bob sorted invoices for client {n}") for n in range(40)]
SIDE_QUERIES = ["Ann tea river", "report due Friday", "sister nurse", "green tea morning"]


def _scores(found: list[Scored]) -> list[tuple[str, float]]:
    return [(s.key, round(s.score, 9)) for s in found]


def _ann_results(store: Any) -> list[list[tuple[str, float]]]:
    return [_scores(run(store, _ask(KeywordSearch(ANN_NOTES, q, 5)))) for q in SIDE_QUERIES]


async def _aann_results(store: Any) -> list[list[tuple[str, float]]]:
    return [_scores(await arun(store, _ask(KeywordSearch(ANN_NOTES, q, 5)))) for q in SIDE_QUERIES]


def test_a_scopes_keyword_results_never_depend_on_another_scope(backend: Backend) -> None:
    """The side channel: Bob's notes, added or deleted, change nothing of Ann's search."""
    memory = ScopedMemory(backend.store, clock=Clock())
    memory.import_notes(ANN, ANN_HISTORY)
    alone = _ann_results(backend.store)
    bob = memory.import_notes(BOB, BOB_HISTORY)
    beside = _ann_results(backend.store)
    for note in bob[:30]:
        memory.delete_note(BOB, note.key)
    assert beside == alone and _ann_results(backend.store) == alone
    assert [len(found) for found in alone] == [5, 2, 2, 3]
    assert len(keys(backend.store, "tea report", BOB_NOTES)) == 10


async def test_async_keyword_results_never_depend_on_another_scope(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store, clock=Clock())
    await memory.aimport_notes(ANN, ANN_HISTORY)
    alone = await _aann_results(abackend.store)
    await memory.aimport_notes(BOB, BOB_HISTORY)
    assert await _aann_results(abackend.store) == alone
    assert [len(found) for found in alone] == [5, 2, 2, 3]


def test_sqlite_scores_keywords_as_the_memory_backend_does(tmp_path: Any) -> None:
    """Same analyser (Snowball English, stopwords dropped), same BM25, same statistics."""
    results = []
    for url in ("memory://", f"sqlite:///{tmp_path / 'memory.db'}"):
        with connect(url) as backend:
            memory = ScopedMemory(backend.store, clock=Clock())
            notes = memory.import_notes(ANN, ANN_HISTORY)
            memory.import_notes(BOB, BOB_HISTORY)
            memory.delete_note(ANN, notes[-1].key)
            results.append(_ann_results(backend.store))
    assert results[0] == results[1]
    assert results[0][1] == [(notes[2].key, results[0][1][0][1])]


def _fts5_era(path: str) -> None:
    """Turn the store's search tables into the FTS5 ones the code before per-scope
    statistics created (tests/data/sqlite_fts5_search.sql), its notes indexed there."""
    conn = sqlite3.connect(path)
    for trigger in ("insert", "update", "delete"):
        conn.execute(f"DROP TRIGGER memory_note_index_{trigger}")
    for table in SQLITE_SEARCH_TABLES[:3] + SQLITE_SEARCH_TABLES[4:]:
        conn.execute(f"DROP TABLE {table}")
    conn.executescript((Path(__file__).parent / "data" / "sqlite_fts5_search.sql").read_text())
    conn.commit()
    notes = "SELECT count(*) FROM store WHERE prefix GLOB 'memory_plugin.*.notes'"
    indexed = conn.execute("SELECT count(*) FROM memory_note_fts").fetchone()
    assert indexed == conn.execute(notes).fetchone() and indexed[0] >= len(ANN_HISTORY)
    conn.close()


def _sqlite_objects(path: str) -> set[str]:
    conn = sqlite3.connect(path)
    names = {name for (name,) in conn.execute("SELECT name FROM sqlite_master")}
    conn.close()
    return names


def test_a_sqlite_store_from_before_per_scope_statistics_is_upgraded(tmp_path: Any) -> None:
    path = str(tmp_path / "memory.db")
    with connect(f"sqlite:///{path}") as backend:
        memory = ScopedMemory(backend.store, clock=Clock())
        memory.import_notes(ANN, ANN_HISTORY)
        expected = _ann_results(backend.store)
        bob = memory.remember(BOB, "Bob drinks tea by the river")
    _fts5_era(path)
    with connect(f"sqlite:///{path}") as backend:
        assert _ann_results(backend.store) == expected
        memory = ScopedMemory(backend.store, clock=Clock())
        later = memory.remember(BOB, "Bob writes the tea report")
        assert later.position == bob.position + 1
        assert keys(backend.store, "tea", BOB_NOTES) == [bob.key, later.key]
    names = _sqlite_objects(path)
    assert "memory_note_fts" not in names and "memory_note_fts_insert" not in names
    assert {"memory_note_terms", "memory_note_index_insert"} <= names


async def test_an_upgraded_sqlite_store_searches_alike_through_aconnect(tmp_path: Any) -> None:
    path = str(tmp_path / "memory.db")
    with connect(f"sqlite:///{path}") as backend:
        ScopedMemory(backend.store, clock=Clock()).import_notes(ANN, ANN_HISTORY)
        expected = _ann_results(backend.store)
    _fts5_era(path)
    async with aconnect(f"sqlite:///{path}") as backend:
        assert await _aann_results(backend.store) == expected


def _common_words_note(n: int) -> str:
    """Notes where `alpha` is in 90%, `epsilon` 40%, `beta` a third, `gamma` 2%, of lengths
    1-13 words (so scores vary), `alpha` twice in some."""
    words = [f"delta{n % 200}"] + [f"filler{(n * k) % 17}" for k in range(n % 9)]
    words += ["alpha"] * (bool(n % 10) + (n % 11 == 0))
    words += ["beta"] * (n % 3 == 0) + ["gamma"] * (n % 50 == 7) + ["epsilon"] * (n % 5 in (1, 2))
    return " ".join(words)


COMMON_HISTORY = [(f"2023-05-{1 + n // 100:02d}", _common_words_note(n)) for n in range(1_500)]
COMMON_QUERIES = [
    "gamma alpha",
    "gamma beta alpha",
    "delta7 alpha",
    "delta7 delta8 beta alpha epsilon",
    "beta epsilon",
    "alpha",
    "alpha epsilon",
]


def _exact(found: list[Scored]) -> list[tuple[str, float]]:
    return [(s.key, s.score) for s in found]


def _common_results(store: Any) -> list[list[tuple[str, float]]]:
    return [
        _exact(run(store, _ask(KeywordSearch(ANN_NOTES, query, limit))))
        for query in COMMON_QUERIES
        for limit in (1, 10, 100)
    ]


@pytest.mark.slow
@pytest.mark.parametrize("share", [keywords.SHARE, 0.0, 1e9])
def test_sqlite_leaves_out_common_words_postings_with_the_same_results(
    share: float, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A word in most of the scope's notes is read only for the notes the others shortlist
    when notes holding it alone cannot reach the limit; results and scores stay the memory
    backend's to the last digit, whichever words are left out (`SHARE` 0: none; 1e9: too
    many, so the bound fails and every posting is read), and when every posting is read
    into Python (`DIRECT`: below that many postings)."""
    with connect("memory://") as backend:
        ScopedMemory(backend.store, clock=Clock()).import_notes(ANN, COMMON_HISTORY)
        expected = _common_results(backend.store)
    reads: list[set[str]] = []
    shortlist = keywords._shortlist_steps

    def counted(scope: int, bounds: Any, left: set[str], avg_len: float, limit: int) -> Any:
        reads.append(set(left))
        return (yield from shortlist(scope, bounds, left, avg_len, limit))

    monkeypatch.setattr(keywords, "SHARE", share)
    monkeypatch.setattr(keywords, "_shortlist_steps", counted)
    with connect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        ScopedMemory(backend.store, clock=Clock()).import_notes(ANN, COMMON_HISTORY)
        assert _common_results(backend.store) == expected
        shortlisted = len(reads)
        monkeypatch.setattr(keywords, "DIRECT", 0)
        assert _common_results(backend.store) == expected
        monkeypatch.setattr(keywords, "DIRECT", 10**9)
        assert _common_results(backend.store) == expected
    assert len(reads) >= 2 * shortlisted >= len(COMMON_QUERIES)
    assert [len(found) for found in expected[:6]] == [1, 10, 100, 1, 10, 100]
    assert len({tuple(found) for found in expected}) == len(expected)
    left_out = [left for left in reads if left]
    if share == 0.0:
        assert not left_out
    elif share == 1e9:
        assert reads[reads.index({"epsilon"}) + 1] == set()
    else:
        assert left_out and all("alpha" in left for left in left_out)


@pytest.mark.slow
async def test_async_sqlite_leaves_out_common_words_alike(tmp_path: Any) -> None:
    with connect("memory://") as backend:
        ScopedMemory(backend.store, clock=Clock()).import_notes(ANN, COMMON_HISTORY)
        expected = _common_results(backend.store)
    async with aconnect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        await ScopedMemory(backend.store, clock=Clock()).aimport_notes(ANN, COMMON_HISTORY)
        found = [
            _exact(await arun(backend.store, _ask(KeywordSearch(ANN_NOTES, query, limit))))
            for query in COMMON_QUERIES
            for limit in (1, 10, 100)
        ]
    assert found == expected


WAITING_HISTORY = COMMON_HISTORY[:240]


def _sqlite_counts(store: Any) -> tuple[int, int]:
    """The scope's notes whose postings wait in their rows, and its postings written."""
    prefix = ".".join(ANN_NOTES)
    waiting = "SELECT count(*) FROM memory_note_rows WHERE prefix = ? AND pending IS NOT NULL"
    postings = "SELECT count(*) FROM memory_note_terms"
    ((held,),) = store.conn.execute(waiting, (prefix,)).fetchall()
    ((written,),) = store.conn.execute(postings).fetchall()
    return held, written


def _appended_one_at_a_time(store: Any, seen: list[tuple[int, int]]) -> list[Any]:
    """Append WAITING_HISTORY a note at a time, deleting a note every 7 and rewriting one by a
    LangGraph put every 11 (left unanalysed until the next search), searching every 60;
    `seen` gets the SQLite counts before each search."""
    memory = ScopedMemory(store, clock=Clock())
    written, results = [], []
    for n, note in enumerate(WAITING_HISTORY):
        written += memory.import_notes(ANN, [note])
        if n % 7 == 6:
            memory.delete_note(ANN, written[n - 2].key)
        item = store.get(ANN_NOTES, written[n - 1].key) if n % 11 == 10 else None
        if item and not item.value.get("deleted"):
            store.put(ANN_NOTES, item.key, {**item.value, "text": f"{note[1]} gamma"})
        if n % 60 == 59:
            if isinstance(store, SqliteStore):
                seen.append(_sqlite_counts(store))
            results.append(_common_results(store))
    return results


@pytest.mark.parametrize("hold", [keywords.HOLD, 1, 10**9])
def test_postings_waiting_in_the_notes_rows_search_as_if_written(
    hold: int, tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An append's postings wait in its notes' rows until the scope holds more than `HOLD`
    waiting notes (one append then writes them all): results and scores stay the memory
    backend's to the last digit while notes wait, after they are written, when a waiting
    note is deleted or rewritten, and through the shortlist (`DIRECT` 0)."""
    with connect("memory://") as backend:
        expected = _appended_one_at_a_time(backend.store, [])
    monkeypatch.setattr(keywords, "HOLD", hold)
    seen: list[tuple[int, int]] = []
    with connect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        assert _appended_one_at_a_time(backend.store, seen) == expected
        monkeypatch.setattr(keywords, "DIRECT", 0)
        assert _common_results(backend.store) == expected[-1]
    assert len(seen) == 4 and all(len(found) == 10 for found in expected[-1][1::3])
    if hold == 10**9:  # nothing written but what a search analysed (after a rewrite)
        assert seen[0][1] == 0
        assert all(held > 30 for held, _ in seen)
    else:
        assert all(held <= hold and written > 0 for held, written in seen)
        assert hold == 1 or all(held > 0 for held, _ in seen)


async def test_async_appends_hold_postings_alike(tmp_path: Any) -> None:
    with connect("memory://") as backend:
        memory = ScopedMemory(backend.store, clock=Clock())
        for note in WAITING_HISTORY[:100]:
            memory.import_notes(ANN, [note])
        expected = _common_results(backend.store)
    async with aconnect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        memory = ScopedMemory(backend.store, clock=Clock())
        for note in WAITING_HISTORY[:100]:
            await memory.aimport_notes(ANN, [note])
        found = [
            _exact(await arun(backend.store, _ask(KeywordSearch(ANN_NOTES, query, limit))))
            for query in COMMON_QUERIES
            for limit in (1, 10, 100)
        ]
        prefix = ".".join(ANN_NOTES)
        waiting = "SELECT count(*) FROM memory_note_rows WHERE prefix = ? AND pending IS NOT NULL"
        ((held,),) = await backend.store.conn.execute_fetchall(waiting, (prefix,))
    assert found == expected
    assert held == 100 % (keywords.HOLD + 1)


def test_a_search_reads_one_snapshot_while_another_store_writes_the_waiting_postings(
    tmp_path: Any,
) -> None:
    """Another connection's appends land between a search's statements and write the postings
    of the notes that waited: the search still scores the scope as it was when it began, with
    no note counted twice."""
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    with connect(url) as backend, connect(url) as other:
        memory = ScopedMemory(backend.store, clock=Clock())
        for note in WAITING_HISTORY[:40]:
            memory.import_notes(ANN, [note])
        held = _sqlite_counts(backend.store)[0]
        assert 0 < held <= keywords.HOLD
        more = WAITING_HISTORY[40 : 40 + keywords.HOLD + 1 - held]  # the last writes them all
        query = "alpha beta delta7"
        expected = _exact(run(backend.store, _ask(KeywordSearch(ANN_NOTES, query, 10))))
        writer = ScopedMemory(other.store, clock=Clock())
        conn, appended = backend.store.conn, []

        def execute(sql: str, args: Any) -> Any:
            rows = conn.execute(sql, args).fetchall()
            if sql is keywords._WAITING and not appended:
                for note in more:
                    appended.extend(writer.import_notes(ANN, [note]))
            return rows

        steps = keywords.search_steps(".".join(ANN_NOTES), query, 10)
        with backend.store.lock:
            found = drive(steps, execute, conn.executemany)
        assert [(key, score) for key, score, _ in found] == expected
        assert len(appended) == len(more) and _sqlite_counts(backend.store)[0] == 0
        after = _exact(run(backend.store, _ask(KeywordSearch(ANN_NOTES, query, 10))))
        assert after != expected
