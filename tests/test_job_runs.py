"""The consolidation run log and "run now", on every backend, sync and async."""

from __future__ import annotations

import logging
from collections.abc import Iterable
from typing import Any

import pytest
from langgraph.store.base import BaseStore, ListNamespacesOp, Op, SearchOp

from memory_plugin import Backend, LayeredSettings, MemoryContext
from memory_plugin.prebuilt.consolidation_graph import build_consolidation_graph
from memory_plugin.scope import reachable_namespace
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped import consolidation as consolidation_module
from memory_plugin.scoped.consolidation import aconsolidate, consolidate
from memory_plugin.scoped.job_runs import (
    RUNS,
    JobRun,
    RunLimitError,
    ScopedMemoryOffError,
    ScopeRun,
    aconsolidate_scope,
    alist_runs,
    consolidate_scope,
    list_runs,
)
from memory_plugin.scoped.run_records import list_plan
from tests.fakes import merging_model
from tests.faults import FaultyStore
from tests.scoped_helpers import ANN, ANN_TEAM, BOB, Clock, failing_model


def seed(store: BaseStore, clock: Clock, ctx: MemoryContext, *facts: str) -> ScopedMemory:
    """Notes ten days old in ctx's scope (old enough to fold), then the clock back to now."""
    memory = ScopedMemory(store, clock=clock)
    clock.advance(days=-10)
    for fact in facts or ("Prefers tea", "Works on the IFRS 9 report"):
        memory.remember(ctx, fact)
    clock.advance(days=10)
    return memory


async def aseed(store: BaseStore, clock: Clock, ctx: MemoryContext, *facts: str) -> ScopedMemory:
    """Async twin of seed."""
    memory = ScopedMemory(store, clock=clock)
    clock.advance(days=-10)
    for fact in facts or ("Prefers tea", "Works on the IFRS 9 report"):
        await memory.aremember(ctx, fact)
    clock.advance(days=10)
    return memory


class RunLogFaults(FaultyStore):
    """Faults that hit only the run log's namespace; every other operation goes through."""

    def _hits(self, ops: Iterable[Op]) -> bool:
        def in_log(op: Op) -> bool:
            ns = op.namespace_prefix if isinstance(op, SearchOp) else getattr(op, "namespace", ())
            return tuple(ns[: len(RUNS)]) == RUNS

        return any(in_log(op) for op in ops) and self.fault is not None


def test_nightly_run_is_recorded_with_each_scopes_result(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    seed(backend.store, clock, ANN)
    seed(backend.store, clock, ANN_TEAM, "Release train every second Tuesday")
    original = consolidation_module.scope_plan
    during: list[JobRun] = []

    def fail_team(scope, *args):  # type: ignore[no-untyped-def]
        during.extend((yield from list_plan(5)))
        if scope.kind == "team":
            raise RuntimeError("team store offline")
        return (yield from original(scope, *args))

    monkeypatch.setattr(consolidation_module, "scope_plan", fail_team)
    report = consolidate(backend.store, merging_model(), now=clock())
    assert during and {run.status for run in during} == {"running"}
    assert during[0].summary == "Running." and during[0].finished_at is None
    (run,) = list_runs(backend.store)
    assert report.run == run and during[0].id == run.id
    assert (run.job, run.trigger, run.by, run.status) == (
        "consolidation",
        "nightly",
        None,
        "partial",
    )
    assert run.folded == 2 and run.summary == report.summary()
    assert run.finished_at is not None and run.started_at <= run.finished_at
    scopes = {scope.kind: scope for scope in run.scopes}
    assert scopes["personal"] == ScopeRun(
        ("memory_plugin", "ws", "acme", "personal", "ann"),
        "personal",
        "acme",
        "ann",
        None,
        "consolidated",
        2,
        None,
    )
    team = scopes["team"]
    assert (team.workspace_id, team.user_id, team.status, team.folded) == (
        "acme",
        None,
        "failed",
        0,
    )
    assert "team store offline" in (team.error or "")


async def test_async_nightly_run_all_failed(abackend: Backend) -> None:
    clock = Clock()
    await aseed(abackend.store, clock, ANN)
    report = await aconsolidate(abackend.store, failing_model(), now=clock())
    (run,) = await alist_runs(abackend.store)
    assert report.run == run
    assert (run.trigger, run.status, run.folded) == ("nightly", "failed", 0)
    (scope,) = run.scopes
    assert scope.status == "failed" and "model provider unreachable" in (scope.error or "")
    assert run.to_json()["scopes"][0]["namespace"] == list(scope.namespace)


def test_a_run_with_nothing_to_do_is_recorded_as_succeeded(backend: Backend) -> None:
    report = consolidate(backend.store, merging_model())
    (run,) = list_runs(backend.store)
    assert (run.status, run.folded, run.scopes) == ("succeeded", 0, ())
    assert (
        run.summary
        == report.summary()
        == ("Folded 0 notes into 0 of 0 scopes; no notes are waiting to be folded.")
    )


def test_list_runs_newest_first_and_only_the_last_runs_are_kept(backend: Backend) -> None:
    clock = Clock()
    ids = []
    for _ in range(5):
        clock.advance(minutes=1)
        report = consolidate(backend.store, merging_model(), now=clock(), keep_runs=3)
        assert report.run is not None
        ids.append(report.run.id)
    assert ids == sorted(ids)
    assert [run.id for run in list_runs(backend.store)] == ids[:1:-1]
    assert [run.id for run in list_runs(backend.store, limit=2)] == ids[:2:-1]
    kept = backend.store.search(RUNS, limit=100)
    assert sorted(item.key for item in kept) == ids[2:]
    for limit in (0, 1_001, "3", True):
        with pytest.raises(RunLimitError, match="limit must be an integer from 1 to 1000"):
            list_runs(backend.store, limit=limit)  # type: ignore[arg-type]
    with pytest.raises(RunLimitError, match="keep_runs"):
        consolidate(backend.store, merging_model(), keep_runs=0)
    assert len(list_runs(backend.store)) == 3


def test_a_whole_run_that_crashes_is_recorded_as_failed(backend: Backend) -> None:
    store = FaultyStore(backend.store)
    store.set("down", only=(ListNamespacesOp,))
    with pytest.raises(ConnectionError):
        consolidate(store, merging_model())
    (run,) = list_runs(backend.store)
    assert run.status == "failed" and run.finished_at is not None
    assert run.summary == (
        "The run failed: ConnectionError: connection refused: the memory store is down"
    )


@pytest.mark.parametrize("team", [False, True], ids=["personal", "team"])
def test_run_now_consolidates_only_that_scope(backend: Backend, team: bool) -> None:
    clock = Clock()
    memory = seed(backend.store, clock, ANN)
    seed(backend.store, clock, BOB, "Bob likes rust")
    seed(backend.store, clock, ANN_TEAM, "Release train every second Tuesday")
    target = ANN_TEAM if team else ANN
    run = consolidate_scope(backend.store, merging_model(), target, by="ann", now=clock())
    assert (run.trigger, run.by, run.status) == ("manual", "ann", "succeeded")
    (scope,) = run.scopes
    expected = ("team", None, 1) if team else ("personal", "ann", 2)
    assert (scope.kind, scope.user_id, scope.folded) == expected
    assert scope.workspace_id == "acme" and run.folded == expected[2]
    assert list_runs(backend.store) == [run]
    document = memory.read_document(target)
    assert document is not None and document.provenance is not None
    assert document.provenance.job_run == run.id and document.provenance.actor == "ann"
    others = [ANN, BOB] if team else [BOB, ANN_TEAM]
    for other in others:
        assert memory.read_document(other) is None
        assert not any(note.consolidated for note in memory.list_notes(other))


async def test_async_run_now_for_a_team(abackend: Backend) -> None:
    clock = Clock()
    memory = await aseed(abackend.store, clock, ANN_TEAM, "Release train every second Tuesday")
    await aseed(abackend.store, clock, ANN)
    run = await aconsolidate_scope(abackend.store, merging_model(), ANN_TEAM, by="ann")
    assert (run.trigger, run.by, run.folded, run.scopes[0].kind) == ("manual", "ann", 1, "team")
    assert await alist_runs(abackend.store) == [run]
    assert await memory.aread_document(ANN) is None
    team = await memory.aread_document(ANN_TEAM)
    assert team is not None and team.text == "- Release train every second Tuesday"


def test_run_now_respects_the_minimum_age_and_says_so(backend: Backend) -> None:
    memory = ScopedMemory(backend.store)
    memory.remember(ANN, "Asked about pandas today")
    run = consolidate_scope(backend.store, merging_model(), ANN, by="ann")
    assert (run.status, run.folded, run.scopes) == ("succeeded", 0, ())
    assert "1 note is newer than 7 days" in run.summary
    assert not any(note.consolidated for note in memory.list_notes(ANN))


def test_run_now_refuses_a_scope_with_scoped_memory_off(backend: Backend) -> None:
    clock = Clock()
    seed(backend.store, clock, ANN)
    LayeredSettings(backend.store).update("user", ANN, set={"scoped_memory": False})
    with pytest.raises(ScopedMemoryOffError, match="scoped memory is turned off"):
        consolidate_scope(backend.store, merging_model(), ANN, by="ann", now=clock())
    assert list_runs(backend.store) == []
    with pytest.raises(Exception, match="user_id"):
        consolidate_scope(backend.store, merging_model(), MemoryContext(), by="ann")
    assert list_runs(backend.store) == []


@pytest.mark.parametrize("fault", ["down", "read_only", "full"])
def test_a_run_log_that_cannot_be_written_fails_nothing(
    backend: Backend, fault: Any, caplog: pytest.LogCaptureFixture
) -> None:
    clock = Clock()
    memory = seed(backend.store, clock, ANN)
    store = RunLogFaults(backend.store)
    store.set(fault)
    with caplog.at_level(logging.WARNING, "memory_plugin.scoped.run_records"):
        report = consolidate(store, merging_model(), now=clock())
    assert report.folded == 2 and report.run is None and not report.failed
    assert "could not record consolidation run" in caplog.text
    assert all(note.consolidated for note in memory.list_notes(ANN))
    seed(backend.store, clock, ANN, "Moved to Zurich")
    run = consolidate_scope(store, merging_model(), ANN, by="ann", now=clock())
    assert (run.status, run.folded, run.trigger) == ("succeeded", 1, "manual")
    document = memory.read_document(ANN)
    assert document is not None and "Zurich" in document.text
    store.set(None)
    assert list_runs(store) == []
    assert store.calls.get("PutOp", 0) > 0


async def test_async_run_log_failure_fails_nothing(abackend: Backend) -> None:
    clock = Clock()
    memory = await aseed(abackend.store, clock, ANN)
    store = RunLogFaults(abackend.store)
    store.set("down")
    report = await aconsolidate(store, merging_model(), now=clock())
    assert report.folded == 2 and report.run is None
    run = await aconsolidate_scope(store, merging_model(), ANN, by="ann", now=clock())
    assert run.status == "succeeded" and run.folded == 0
    assert all(note.consolidated for note in await memory.alist_notes(ANN))


def test_nightly_document_versions_carry_the_runs_provenance(backend: Backend) -> None:
    clock = Clock()
    memory = seed(backend.store, clock, ANN)
    memory.write_document(ANN, "# Ann")
    report = consolidate(backend.store, merging_model(), now=clock())
    assert report.run is not None
    document = memory.read_document(ANN)
    assert document is not None and document.version == 2
    provenance = document.provenance
    assert provenance is not None
    assert (provenance.source, provenance.job, provenance.job_run, provenance.actor) == (
        "job",
        "consolidation",
        report.run.id,
        None,
    )
    newest, first = memory.history(ANN)
    assert newest.provenance == provenance
    assert first.provenance is not None and first.provenance.source != "job"


def test_the_cron_graph_reports_its_run(backend: Backend) -> None:
    clock = Clock()
    seed(backend.store, clock, ANN)
    out = build_consolidation_graph(merging_model(), store=backend.store).invoke({})
    (run,) = list_runs(backend.store)
    assert out["run_id"] == run.id and run.trigger == "nightly" and run.folded == 2


def test_an_unreadable_record_is_skipped(backend: Backend) -> None:
    consolidate(backend.store, merging_model())
    backend.store.put(RUNS, "99999999T000000000000Z-garbage", {"id": 3})
    (run,) = list_runs(backend.store)
    assert run.trigger == "nightly"


@pytest.mark.parametrize("user", ["ann", "jobs", "consolidation"])
def test_the_run_log_lies_outside_every_users_reach(user: str) -> None:
    assert RUNS == ("memory_plugin", "jobs", "consolidation")
    for prefix in (RUNS, RUNS[:2]):
        assert not reachable_namespace(prefix, user, workspaces=["jobs", "consolidation"])
