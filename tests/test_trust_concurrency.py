"""Concurrency without errors (issue 9, point 11): a store shared by many threads never raises,
and 100 writers appending notes to one scope all succeed with positions 1..100, on every
backend, sync and async."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from memory_plugin import Backend, connect
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.notes import Note
from tests.conftest import url_for
from tests.scoped_helpers import ANN, ANN_TEAM, BOB_TEAM, Clock

WRITERS = 100
HISTORY = 300


@pytest.fixture
def busy_threads() -> Iterator[None]:
    """Threads switch every few microseconds, as on a loaded server, so races show up."""
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        yield
    finally:
        sys.setswitchinterval(interval)


def _all_at_once(count: int, work: Callable[[int], Any]) -> list[Any]:
    """Run work(0..count-1) on `count` threads released together; exceptions are returned."""
    start = threading.Barrier(count)

    def one(n: int) -> Any:
        start.wait()
        try:
            return work(n)
        except Exception as exc:
            return exc

    with ThreadPoolExecutor(count) as pool:
        return list(pool.map(one, range(count)))


def _failures(results: list[Any]) -> list[str]:
    return [repr(r) for r in results if isinstance(r, Exception)]


@pytest.mark.slow
def test_a_store_shared_by_many_threads_never_raises(backend: Backend, busy_threads: None) -> None:
    store = backend.store

    def work(n: int) -> int:
        done = 0
        for i in range(30):
            if n % 2:
                store.put(("team", f"t{n}", f"n{i}"), "k", {"n": n, "i": i})
            elif n % 4:
                store.search(("team",), filter={"i": 3}, limit=1_000)
                store.list_namespaces(prefix=("team",))
            else:
                asyncio.run(store.asearch(("team",), filter={"i": 5}, limit=1_000))
                store.get(("team", f"t{n + 1}", f"n{i}"), "k")
            done += 1
        return done

    results = _all_at_once(16, work)
    assert _failures(results) == []
    assert results == [30] * 16
    written = store.search(("team",), limit=10_000)
    assert len(written) == 8 * 30


def _check_positions(notes: list[Note], stored: list[Note]) -> None:
    assert sorted(n.position for n in notes) == list(range(1, WRITERS + 1))
    assert len({n.key for n in notes}) == WRITERS
    assert sorted(n.body for n in stored) == sorted(f"fact {n}" for n in range(WRITERS))
    assert sorted(n.position for n in stored) == list(range(1, WRITERS + 1))


@pytest.fixture
def patient(backend_url: str) -> Iterator[Backend]:
    """The backend, with PostgreSQL's pool waiting up to 30 s for a connection: 120 requests
    at once on its 10 connections, threads switching every microsecond, can queue past the
    default 5 s on a loaded 2-core machine, and these tests check what is written, not how
    fast (a full pool answering within its timeout is tests/test_pool_options.py's)."""
    url = f"{backend_url}?pool_timeout=30" if backend_url.startswith("postgresql") else backend_url
    with connect(url) as opened:
        yield opened


@pytest.mark.slow
def test_hundred_threads_append_notes_to_one_scope(patient: Backend, busy_threads: None) -> None:
    clock = Clock()
    memory = ScopedMemory(patient.store, clock=clock)
    for n in range(HISTORY):
        memory.remember(BOB_TEAM, f"yesterday's note {n}")
    clock.advance(days=1)

    def work(n: int) -> Any:
        if n < WRITERS:
            return memory.remember(ANN_TEAM, f"fact {n}")
        return memory.list_notes(ANN_TEAM)  # readers at the same time

    results = _all_at_once(WRITERS + 20, work)
    assert _failures(results) == []
    stored = [n for n in memory.list_notes(ANN_TEAM) if n.day == "2026-11-30"]
    _check_positions(results[:WRITERS], stored)


async def test_hundred_coroutines_append_notes_to_one_scope(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store, clock=Clock())
    results = await asyncio.gather(
        *(memory.aremember(ANN_TEAM, f"fact {n}") for n in range(WRITERS)),
        return_exceptions=True,
    )
    assert [repr(r) for r in results if isinstance(r, BaseException)] == []
    notes = [r for r in results if isinstance(r, Note)]
    _check_positions(notes, await memory.alist_notes(ANN_TEAM))


@pytest.mark.slow
@pytest.mark.parametrize("kind", ["sqlite", "postgres", "pgbouncer"])
def test_two_app_servers_append_to_one_scope(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    """Two connections to one database, as two app servers have (a memory store is one
    process's alone, so it has no such case)."""
    backend_url = url_for(kind, request, tmp_path)
    with connect(backend_url) as first, connect(backend_url) as second:
        memories = [ScopedMemory(b.store, clock=Clock()) for b in (first, second)]
        results = _all_at_once(WRITERS, lambda n: memories[n % 2].remember(ANN_TEAM, f"fact {n}"))
        assert _failures(results) == []
        _check_positions(results, memories[0].list_notes(ANN_TEAM))


def test_positions_continue_after_deleted_and_existing_notes(backend: Backend) -> None:
    memory = ScopedMemory(backend.store, clock=Clock())
    first = [memory.remember(ANN, f"early {n}") for n in range(3)]
    memory.delete_note(ANN, first[2].key)
    later = _all_at_once(10, lambda n: memory.remember(ANN, f"late {n}"))
    assert _failures(later) == []
    assert sorted(n.position for n in later) == list(range(4, 14))
    assert [n.position for n in memory.list_notes(ANN)] == [1, 2, *range(4, 14)]
