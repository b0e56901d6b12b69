"""The consolidation run log and "run now": the last runs with their results, and one
scope consolidated on demand.

`consolidate()` (nightly: the CLI, the LangGraph cron graph) records every run; so does
`consolidate_scope()`, which runs the nightly rules (minimum age, caps, the validated write
path, the maintenance model) for one personal or team scope at once, with trigger "manual".
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Required, TypedDict, Unpack

from langchain_core.language_models import BaseChatModel
from langgraph.store.base import BaseStore

from memory_plugin.errors import MemoryPluginError
from memory_plugin.models.maintenance import MaintenanceModel, maintenance_of
from memory_plugin.plans import Plan, arun, run
from memory_plugin.provenance import origin
from memory_plugin.scope import thread_scope
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scoped.consolidation import (
    ConsolidationReport,
    ScopeResult,
    one_scope_plan,
    recorded_plan,
)
from memory_plugin.scoped.leases import Worker, default_worker_id
from memory_plugin.scoped.run_records import (
    KEEP_RUNS,
    RUNS,
    JobRun,
    RunLimitError,
    ScopeRun,
    check_keep,
    list_plan,
    new_run,
    run_clock,
)
from memory_plugin.settings import LayeredSettings

__all__ = [
    "KEEP_RUNS",
    "RUNS",
    "JobRun",
    "RunLimitError",
    "ScopeRun",
    "ScopedMemoryOffError",
    "aconsolidate_scope",
    "alist_runs",
    "consolidate_scope",
    "list_runs",
]


class ScopedMemoryOffError(MemoryPluginError):
    """Run now was asked for a scope where scoped memory is turned off."""


def list_runs(store: BaseStore, *, limit: int = 20) -> list[JobRun]:
    """The newest `limit` consolidation runs (1 to 1,000), newest first."""
    return run(store, list_plan(limit))


async def alist_runs(store: BaseStore, *, limit: int = 20) -> list[JobRun]:
    """Async twin of list_runs."""
    return await arun(store, list_plan(limit))


def _scope_plan(
    ctx: MemoryContext,
    settings: LayeredSettings,
    maintenance: MaintenanceModel,
    now: datetime,
) -> Plan[ConsolidationReport]:
    report = ConsolidationReport()
    scope = thread_scope(ctx)
    worker = Worker(id=f"manual:{default_worker_id()}")
    outcome = yield from one_scope_plan(scope, ctx, settings, maintenance, now, worker)
    if outcome == "held":
        busy = "the nightly job is consolidating this scope now; try again in a few minutes"
        report.add(ScopeResult(scope.namespace, "failed", error=busy), 0)
    elif outcome is not None:
        report.add(*outcome)
    return report


def _manual_plan(
    record: JobRun,
    ctx: MemoryContext,
    settings: LayeredSettings,
    maintenance: MaintenanceModel,
    keep: int,
) -> Plan[ConsolidationReport]:
    """Refuse a scope where scoped memory is off (nothing recorded), else run it recorded."""
    effective = yield from settings.effective_plan(ctx)
    if not effective.values.scoped_memory:
        raise ScopedMemoryOffError(
            "scoped memory is turned off for this scope (setting scoped_memory); "
            "there is nothing to consolidate"
        )
    started = datetime.fromisoformat(record.started_at)
    work = _scope_plan(ctx, settings, maintenance, started)
    return (yield from recorded_plan(record, work, keep, run_clock(started)))


class ManualRun(TypedDict, total=False):
    """A manual run's options: the user who asked (`by`, required), the `settings` to read
    (default: the store's layers), the run's start (`now`) and how many runs to keep."""

    by: Required[str | None]
    settings: LayeredSettings | None
    now: datetime | None
    keep_runs: int


def _manual(
    store: BaseStore,
    model: BaseChatModel | MaintenanceModel,
    ctx: MemoryContext,
    options: ManualRun,
) -> tuple[JobRun, Plan[ConsolidationReport]]:
    thread_scope(ctx)
    keep = check_keep(options.get("keep_runs", KEEP_RUNS))
    started = options.get("now") or datetime.now(UTC)
    record = new_run("consolidation", "manual", options["by"], started)
    layered = options.get("settings") or LayeredSettings(store)
    return record, _manual_plan(record, ctx, layered, maintenance_of(model), keep)


def _result(record: JobRun, report: ConsolidationReport) -> JobRun:
    """The run as recorded, or as it ended when the record could not be saved."""
    if report.run is not None:
        return report.run
    scopes = [ScopeRun.of(r.namespace, r.status, r.folded, r.error) for r in report.scopes]
    return record.finish(scopes, report.summary(), datetime.now(UTC))


def consolidate_scope(
    store: BaseStore,
    model: BaseChatModel | MaintenanceModel,
    ctx: MemoryContext,
    **options: Unpack[ManualRun],
) -> JobRun:
    """Run now: consolidate the scope `ctx`'s thread writes (personal, or team for a shared
    thread) by the nightly rules, recorded as a manual run by user `by`."""
    record, plan = _manual(store, model, ctx, options)
    with origin(source="job", job="consolidation", job_run=record.id, actor=options["by"]):
        return _result(record, run(store, plan))


async def aconsolidate_scope(
    store: BaseStore,
    model: BaseChatModel | MaintenanceModel,
    ctx: MemoryContext,
    **options: Unpack[ManualRun],
) -> JobRun:
    """Async twin of consolidate_scope."""
    record, plan = _manual(store, model, ctx, options)
    with origin(source="job", job="consolidation", job_run=record.id, actor=options["by"]):
        return _result(record, await arun(store, plan))
