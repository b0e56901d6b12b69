"""The recall audit: recall@k of the fused recall order against an exact search, on real
stores (every backend, with a vector index), sync and async, and `memory-plugin recall-audit`
on a SQLite file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_plugin import Backend, LayeredSettings, aconnect, connect
from memory_plugin.errors import MemoryWriteError
from memory_plugin.offline.local_embeddings import default_index
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.audit import arecall_audit, recall_audit, sample_queries
from tests.embeddings import INDEX
from tests.scoped_helpers import ANN, ANN_TEAM, BOB, Clock
from tests.test_cli import cli

TOPICS = ("tax filing", "hiking trip", "garden tomatoes", "team offsite", "piano lessons")


def seed(memory: ScopedMemory, clock: Clock, ctx: object = ANN, count: int = 30) -> None:
    """Notes on a few topics, one a day (so no two are neighbours on the same day)."""
    for n in range(count):
        topic = TOPICS[n % len(TOPICS)]
        memory.remember(ctx, f"{topic} detail number {n} about the {topic} plan")  # type: ignore[arg-type]
        clock.advance(days=1)


@pytest.fixture
def indexed(backend_url: str) -> Backend:
    with connect(backend_url, index=INDEX) as opened:
        yield opened


def test_fused_recall_equals_exact_search_when_breadth_covers_the_scope(
    indexed: Backend,
) -> None:
    clock = Clock()
    seed(ScopedMemory(indexed.store, clock=clock), clock)
    report = recall_audit(indexed.store, ANN, per_scope=10)
    (scope,) = report.scopes
    assert scope.notes == 30 and len(scope.queries) == 10
    assert [report.recall(k) for k in (5, 10, 20)] == [1.0, 1.0, 1.0]
    assert report.table().splitlines()[-1].split() == ["overall", "30", "10", *["1.000"] * 3]


def test_a_too_small_candidate_breadth_shows_below_one(indexed: Backend) -> None:
    clock = Clock()
    seed(ScopedMemory(indexed.store, clock=clock), clock)
    queries = ["tax filing plan", "hiking trip detail", "piano lessons plan"]
    narrow = recall_audit(indexed.store, ANN, queries=queries, candidates=2)
    wide = recall_audit(indexed.store, ANN, queries=queries)
    assert wide.recall(5) == 1.0
    assert narrow.recall(5) is not None and narrow.recall(5) < 1.0  # type: ignore[operator]
    assert narrow.recall(20) < wide.recall(20)  # type: ignore[operator]


def test_the_audit_uses_the_scopes_recall_candidates_setting(indexed: Backend) -> None:
    clock = Clock()
    seed(ScopedMemory(indexed.store, clock=clock), clock)
    LayeredSettings(indexed.store).update("platform", ANN, set={"recall_candidates": 10})
    queries = ["tax filing plan", "hiking trip detail", "piano lessons plan"]
    narrow = recall_audit(indexed.store, ANN, queries=queries)
    wide = recall_audit(indexed.store, ANN, queries=queries, candidates=100)
    assert wide.recall(20) == 1.0
    assert narrow.recall(20) < 1.0  # type: ignore[operator]


async def test_the_async_audit(backend_url: str) -> None:
    clock = Clock()
    async with await aconnect(backend_url, index=INDEX) as opened:
        memory = ScopedMemory(opened.store, clock=clock)
        for n in range(12):
            await memory.aremember(ANN, f"{TOPICS[n % 5]} detail number {n}")
            clock.advance(days=1)
        wide = await arecall_audit(opened.store, ANN, per_scope=4)
        narrow = await arecall_audit(opened.store, ANN, per_scope=4, candidates=1)
    assert [wide.recall(k) for k in (5, 10, 20)] == [1.0, 1.0, 1.0]
    assert len(narrow.scopes[0].queries) == 4 and narrow.recall(5) < 1.0  # type: ignore[operator]


def test_a_sample_of_scopes(indexed: Backend) -> None:
    clock = Clock()
    memory = ScopedMemory(indexed.store, clock=clock)
    for ctx in (ANN, BOB, ANN_TEAM):
        seed(memory, clock, ctx, count=6)
    report = recall_audit(indexed.store, sample=2, queries=["tax filing", "hiking trip"])
    assert len(report.scopes) == 2 and len({s.scope for s in report.scopes}) == 2
    assert all(s.notes == 6 and len(s.queries) == 2 for s in report.scopes)
    every = recall_audit(indexed.store, sample=10)
    assert len(every.scopes) == 3


def test_sampled_queries_come_from_the_notes_and_are_seeded() -> None:
    clock = Clock()
    with connect("memory://") as opened:
        memory = ScopedMemory(opened.store, clock=clock)
        seed(memory, clock, count=8)
        notes = memory.list_notes(ANN)
    queries = sample_queries(notes, 5, seed=1)
    assert len(queries) == 5 and queries == sample_queries(notes, 5, seed=1)
    assert all(1 <= len(q.split()) <= 6 for q in queries)
    assert all(any(q in note.body for note in notes) for q in queries)


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"queries": ["  "]}, "at least one non-empty query"),
        ({"sample": 2}, "not both"),
        ({"per_scope": 0}, "queries per scope must be at least 1"),
    ],
)
def test_bad_requests_are_refused(kwargs: dict[str, object], message: str) -> None:
    with connect("memory://") as opened, pytest.raises(MemoryWriteError, match=message):
        recall_audit(opened.store, ANN, **kwargs)  # type: ignore[arg-type]
    with connect("memory://") as opened, pytest.raises(MemoryWriteError, match="at least 1"):
        recall_audit(opened.store, sample=0)


@pytest.mark.slow
def test_the_cli_audits_a_sqlite_file(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    clock = Clock()
    with connect(url, index=default_index()) as opened:
        seed(ScopedMemory(opened.store, clock=clock), clock, count=12)
    done = cli(tmp_path, "recall-audit", "--url", url, "--user", "ann", "--workspace", "acme")
    assert done.returncode == 0, done.stderr
    header, _, overall = done.stdout.strip().splitlines()
    assert header.split() == ["scope", "notes", "queries", "recall@5", "recall@10", "recall@20"]
    assert overall.split() == ["overall", "12", "12", "1.000", "1.000", "1.000"]
    (tmp_path / "queries.txt").write_text("tax filing\n\npiano lessons plan\n")
    done = cli(
        tmp_path,
        "recall-audit",
        "--url",
        url,
        "--sample",
        "1",
        "--queries",
        "queries.txt",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    data = json.loads(done.stdout)
    assert data["overall"] == {"5": 1.0, "10": 1.0, "20": 1.0}
    assert [q["query"] for q in data["scopes"][0]["queries"]] == [
        "tax filing",
        "piano lessons plan",
    ]
    done = cli(
        tmp_path,
        "recall-audit",
        "--url",
        url,
        "--user",
        "ann",
        "--workspace",
        "acme",
        "--candidates",
        "1",
        "--json",
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["overall"]["5"] < 1.0


@pytest.mark.slow
def test_the_cli_refuses_unclear_requests(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    done = cli(tmp_path, "recall-audit", "--url", url)
    assert done.returncode == 2 and "give --user (one scope) or --sample N" in done.stderr
    done = cli(tmp_path, "recall-audit", "--url", url, "--sample", "1", "--queries", "nope.txt")
    assert done.returncode == 2 and "cannot read nope.txt" in done.stderr


def test_without_an_index_a_query_matching_no_word_is_left_out() -> None:
    clock = Clock()
    with connect("memory://") as opened:
        seed(ScopedMemory(opened.store, clock=clock), clock, count=6)
        report = recall_audit(opened.store, ANN, queries=["tax filing", "zzzz qqqq"])
    assert [q.query for q in report.scopes[0].queries] == ["tax filing"]
    assert report.recall(5) == 1.0
