"""Jobs that wait for their turn's end (memory_plugin.context_management.turn_end): on a thread
whose run reports its end, a sync caller's job (its thread included) is not started before
that end, starts once it
comes without anyone waiting, starts at the gate's timeout when the end is never reported, and
starts when someone waits for the jobs."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langgraph.store.memory import InMemoryStore

from memory_plugin.context_management import turn_end
from memory_plugin.context_management.turn_end import TurnJobs, run_ended, run_started
from memory_plugin.plans import Plan


def recorded(done: list[str], label: str) -> Plan[None]:
    """A job that records that it ran."""
    yield from ()
    done.append(label)


def soon(done: list[str], seconds: float = 5.0) -> bool:
    """Whether `done` holds something within `seconds`."""
    deadline = time.monotonic() + seconds
    while not done and time.monotonic() < deadline:
        time.sleep(0.01)
    return bool(done)


@pytest.fixture
def thread() -> Iterator[str]:
    """A thread whose run reports its end, ended after the test if it did not."""
    name = f"held-{time.monotonic_ns()}"
    run_started(name)
    yield name
    if turn_end.reports_end(name):
        run_ended(name)


def test_a_job_starts_only_once_its_run_ended(thread: str) -> None:
    done: list[str] = []
    jobs = TurnJobs("held-end")
    jobs.start_after_turn("k", InMemoryStore(), recorded(done, "ran"), thread)
    time.sleep(0.2)
    assert done == []
    assert "memory-plugin-held-end" not in {t.name for t in threading.enumerate()}
    run_ended(thread)
    assert soon(done) and done == ["ran"]
    assert jobs.wait(5)


def test_a_job_whose_run_never_reports_its_end_starts_at_the_timeout(
    thread: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(turn_end, "TURN_END_WAIT", 0.3)
    done: list[str] = []
    jobs = TurnJobs("held-timeout")
    jobs.start_after_turn("k", InMemoryStore(), recorded(done, "ran"), thread)
    assert soon(done) and done == ["ran"]
    assert turn_end.reports_end(thread)


def test_waiting_for_the_jobs_starts_those_still_held(thread: str) -> None:
    done: list[str] = []
    jobs = TurnJobs("held-wait")
    for n in range(3):
        jobs.start_after_turn(("k", n), InMemoryStore(), recorded(done, f"ran {n}"), thread)
    assert jobs.wait(5)
    assert sorted(done) == ["ran 0", "ran 1", "ran 2"]


def test_jobs_under_one_key_run_in_the_order_they_were_started(thread: str) -> None:
    done: list[Any] = []
    jobs = TurnJobs("held-order")
    for n in range(5):
        jobs.start_after_turn("k", InMemoryStore(), recorded(done, f"ran {n}"), thread)
    run_ended(thread)
    assert jobs.wait(5)
    assert done == [f"ran {n}" for n in range(5)]
