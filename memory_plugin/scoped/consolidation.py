"""Nightly consolidation: fold notes older than the minimum age into each scope's document.

Per scope: collect unconsolidated notes older than `consolidation_min_age_days` (at most
`consolidation_max_notes` notes and `consolidation_max_chars` characters), ask the model for
the full updated document, save it through the same validated path as update_memory
(recording which notes it folds in), then mark exactly those notes consolidated. The model's
reply is checked first (`memory_plugin.models.replies.checked_rewrite`): an empty reply, a bare code
fence, a refusal, one that loses the document's facts (most of its words or names, at any
size), one that folds in none of the notes, or text the safety screen refuses fails the
scope's run. A scope whose run fails keeps its document and every note
unmarked for the next run; the failure is logged, reported with its reason and emitted as a
`consolidation_failed` memory event. A crash after the save and before
the marks is finished by the next run: the saved document names the notes it folded in, so
they are marked without being folded a second time. At most `consolidation_max_scopes`
scopes are processed per run; the rest wait. Several workers may run at once over one
store: each scope is taken under a lease (memory_plugin.scoped.leases), so one worker at a
time consolidates it, and a scope another worker holds is skipped and recorded as such.
A lease shorter than the model timeout (`consolidation_timeout_seconds`) is refused before the
run starts (LeaseTooShortError; the job's base settings) or, where a scope's own settings give
a longer timeout, fails that scope unread (see memory_plugin.scoped.leases).
Each run is recorded in the run log (memory_plugin.scoped.job_runs), and the documents it
writes carry its provenance (source "job", job "consolidation", the run's id).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Literal

from langchain_core.language_models import BaseChatModel
from langgraph.store.base import BaseStore, ListNamespacesOp, MatchCondition

from memory_plugin.events import emit
from memory_plugin.models.maintenance import MaintenanceModel, maintenance_of
from memory_plugin.models.replies import RejectedReply, checked_rewrite, coverage
from memory_plugin.plans import ModelCall, Plan, arun, run
from memory_plugin.provenance import origin
from memory_plugin.scope import Scope, scope_from_namespace
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.namespaces import ROOT
from memory_plugin.scoped.documents import read_plan, write_plan
from memory_plugin.scoped.leases import (
    LeaseError,
    LeaseLostError,
    LeaseTooShortError,
    Worker,
    check_lease,
)
from memory_plugin.scoped.naming import NAME
from memory_plugin.scoped.notes import NOTES, Note, all_notes_plan, update_note_plan
from memory_plugin.scoped.prompts import consolidation_messages
from memory_plugin.scoped.run_records import (
    KEEP_RUNS,
    JobRun,
    ScopeRun,
    check_keep,
    new_run,
    run_clock,
    save_plan,
)
from memory_plugin.settings import EffectiveSettings, LayeredSettings, MemorySettings

logger = logging.getLogger(__name__)
Status = Literal["consolidated", "recovered", "failed", "nothing"]
WHAT = "the consolidated memory document"


@dataclass(frozen=True)
class ScopeResult:
    """What one scope's consolidation did."""

    namespace: tuple[str, ...]
    status: Status
    folded: int = 0
    recovered: int = 0
    waiting: int = 0
    too_new: int = 0
    document_version: int | None = None
    error: str | None = None

    @property
    def label(self) -> str:
        """The scope as people read it (workspace, then personal/user or team)."""
        return "/".join(self.namespace[1:])


@dataclass
class ConsolidationReport:
    """The outcome of one consolidation run."""

    scopes: list[ScopeResult] = field(default_factory=list)
    scopes_waiting: int = 0
    too_new: dict[int, int] = field(default_factory=dict)
    skipped: list[tuple[str, ...]] = field(default_factory=list)
    """Scopes skipped because another worker held their lease."""
    run: JobRun | None = None
    """The run's record in the run log (None when it could not be saved)."""

    def add(self, result: ScopeResult, min_age_days: int) -> None:
        """Count a scope's outcome: listed unless it had nothing to do, its too-new notes
        counted under the minimum age that held them back."""
        if result.too_new:
            self.too_new[min_age_days] = self.too_new.get(min_age_days, 0) + result.too_new
        if result.status != "nothing":
            self.scopes.append(result)

    @property
    def folded(self) -> int:
        """Notes folded into documents in this run."""
        return sum(result.folded for result in self.scopes)

    @property
    def failed(self) -> list[ScopeResult]:
        """Scopes whose run failed; their notes stay unmarked."""
        return [result for result in self.scopes if result.status == "failed"]

    def summary(self) -> str:
        """One line for people."""
        done = [r for r in self.scopes if r.status in ("consolidated", "recovered")]
        waiting = sum(r.waiting for r in self.scopes)
        text = f"Folded {self.folded} notes into {len(done)} of {len(self.scopes)} scopes"
        if self.failed:
            reasons = "; ".join(f"{r.label}: {r.error}" for r in self.failed)
            text += f"; {len(self.failed)} failed and will be retried ({reasons})"
        if waiting or self.scopes_waiting:
            text += f"; {waiting} notes and {self.scopes_waiting} scopes wait for the next run"
        if self.skipped:
            text += f"; {len(self.skipped)} scopes skipped: another worker held them"
        for days, notes in sorted(self.too_new.items()):
            are = "note is" if notes == 1 else "notes are"
            text += f"; {notes} {are} newer than {days} day{'' if days == 1 else 's'}"
        busy = self.failed or waiting or self.scopes_waiting or self.skipped
        if not (self.folded or busy or self.too_new):
            text += "; no notes are waiting to be folded"
        return text + "."


def _pending(notes: list[Note], folded: set[str], cutoff: str) -> tuple[list[Note], int]:
    """The unfolded notes old enough to fold, and how many unfolded ones are too new."""
    unfolded = [n for n in notes if not n.consolidated and n.key not in folded]
    old = [n for n in unfolded if n.day <= cutoff]
    return old, len(unfolded) - len(old)


def _batch(notes: list[Note], settings: MemorySettings) -> list[Note]:
    batch: list[Note] = []
    chars = 0
    for note in notes[: settings.consolidation_max_notes]:
        chars += len(note.render())
        if chars > settings.consolidation_max_chars:
            break
        batch.append(note)
    return batch


def _cutoff(now: datetime, settings: MemorySettings) -> str:
    return (now.date() - timedelta(days=settings.consolidation_min_age_days)).isoformat()


def mark_plan(scope: Scope, keys: list[str], version: int, now: datetime) -> Plan[int]:
    """Mark notes consolidated into a document version; returns how many were marked."""
    change = {
        "consolidated": True,
        "consolidated_at": now.isoformat(),
        "consolidated_into": version,
    }
    marked = 0
    for key in keys:
        if (yield from update_note_plan(scope, key, change)) is not None:
            marked += 1
    return marked


def scope_plan(
    scope: Scope,
    settings: MemorySettings,
    model: BaseChatModel,
    now: datetime,
    worker: Worker | None = None,
) -> Plan[ScopeResult]:
    """Consolidate one scope (see the module docstring); with `worker`, its lease on the
    scope is renewed after the model answers, and the scope fails unrenewed."""
    document = yield from read_plan(scope)
    notes = yield from all_notes_plan(scope)
    folded = set(document.folded) if document else set()
    unmarked_folded = [n.key for n in notes if n.key in folded and not n.consolidated]
    recovered = 0
    if unmarked_folded and document:
        recovered = yield from mark_plan(scope, unmarked_folded, document.version, now)
    pending, too_new = _pending(notes, folded, _cutoff(now, settings))
    batch = _batch(pending, settings)
    if not batch:
        status: Status = "recovered" if recovered else "nothing"
        return ScopeResult(scope.namespace, status, recovered=recovered, too_new=too_new)
    current = document.text if document else ""
    messages = consolidation_messages(current, batch, settings.document_soft_limit_chars)
    reply = yield ModelCall(model, messages, timeout=settings.consolidation_timeout_seconds)
    text = checked_rewrite(reply, previous=current, what=WHAT)
    if not any(coverage(note.text, text).holds() for note in batch):
        raise RejectedReply(WHAT, f"it folds in none of the {len(batch)} notes")
    if worker is not None and not (yield worker.take(scope)):
        raise LeaseLostError(
            "another worker took this scope while the model answered (the lease of "
            f"{worker.lease_seconds:g} s expired); nothing was written"
        )
    keys = tuple(note.key for note in batch)
    write = yield from write_plan(
        scope,
        text,
        settings,
        model,
        expected=document.version if document else None,
        folded=keys,
        now=now,
    )
    version = write.document.version
    yield from mark_plan(scope, list(keys), version, now)
    return ScopeResult(
        scope.namespace,
        "consolidated",
        folded=len(batch),
        recovered=recovered,
        waiting=len(pending) - len(batch),
        too_new=too_new,
        document_version=version,
    )


def failed_result(scope: Scope, exc: Exception) -> ScopeResult:
    """A failed scope's result; the reason is logged (with the traceback when unexpected)."""
    rejected = isinstance(exc, RejectedReply)
    error = str(exc) if rejected else f"{type(exc).__name__}: {exc}"
    result = ScopeResult(scope.namespace, "failed", error=error)
    logger.warning(
        "consolidation of %s failed; its notes stay unmarked for the next run: %s",
        result.label,
        error,
        exc_info=not isinstance(exc, RejectedReply | LeaseError),
    )
    return result


def report_event(scope: Scope, result: ScopeResult) -> None:
    """The scope's outcome as a memory event (a no-op outside a graph run)."""
    if result.status == "failed":
        emit(
            NAME,
            "consolidation_failed",
            scope.kind,
            namespace=result.label,
            reason=result.error,
        )
        return
    emit(
        NAME,
        "consolidated",
        scope.kind,
        namespace=result.label,
        folded=result.folded,
        recovered=result.recovered,
        document_version=result.document_version,
    )


def note_scopes_plan() -> Plan[list[tuple[Scope, MemoryContext]]]:
    """Every scope that has notes, with a context that reaches it."""
    found: list[tuple[str, ...]] = []
    while True:
        (page,) = yield [
            ListNamespacesOp(
                match_conditions=(
                    MatchCondition("prefix", (ROOT,)),
                    MatchCondition("suffix", (NOTES,)),
                ),
                limit=1_000,
                offset=len(found),
            )
        ]
        found.extend(page)
        if len(page) < 1_000:
            break
    scopes = []
    for ns in sorted(found):
        try:
            scopes.append(scope_from_namespace(tuple(ns[:-1])))
        except Exception:
            logger.warning("skipping notes at %s: not a personal or team scope", ns)
    return scopes


def one_scope_plan(
    scope: Scope,
    ctx: MemoryContext,
    settings: LayeredSettings,
    maintenance: MaintenanceModel,
    now: datetime,
    worker: Worker,
) -> Plan[tuple[ScopeResult, int] | Literal["held"] | None]:
    """Consolidate one scope under its effective settings, with the model they name, holding
    `worker`'s lease on it; None when scoped memory is off there, "held" when another
    worker's lease on it is valid. A failure is the scope's result, never raised. With the
    result comes `consolidation_min_age_days` there, for the summary's "too new" count."""
    try:
        if not (yield worker.take(scope)):
            return "held"
    except Exception as exc:
        result = failed_result(scope, exc)
        report_event(scope, result)
        return result, 0
    outcome = yield from _held_scope_plan(scope, ctx, settings, maintenance, now, worker)
    yield from _drop_plan(worker, scope)
    if outcome is not None and outcome[0].status != "nothing":
        report_event(scope, outcome[0])
    return outcome


def _held_scope_plan(
    scope: Scope,
    ctx: MemoryContext,
    settings: LayeredSettings,
    maintenance: MaintenanceModel,
    now: datetime,
    worker: Worker,
) -> Plan[tuple[ScopeResult, int] | None]:
    try:
        effective = yield from settings.effective_plan(ctx)
        if not effective.values.scoped_memory:
            return None
        timeout = effective.values.consolidation_timeout_seconds
        if worker.lease_seconds < timeout:
            raise LeaseTooShortError(worker.lease_seconds, timeout, scoped=True)
        chosen = maintenance(effective.values)
        assert chosen is not None
        result = yield from scope_plan(scope, effective.values, chosen, now, worker)
    except Exception as exc:
        return failed_result(scope, exc), 0
    return result, effective.values.consolidation_min_age_days


def _drop_plan(worker: Worker, scope: Scope) -> Plan[None]:
    """Give the scope's lease back; best-effort (an unreturned lease expires)."""
    try:
        yield worker.drop(scope)
    except Exception:
        logger.warning("could not release the lease of %s; it expires", scope.namespace)


def lease_check_plan(
    settings: LayeredSettings, lease_seconds: float, option: str = "lease_seconds"
) -> Plan[EffectiveSettings]:
    """The job's base settings (the platform's, with the environment), once the lease is
    checked against their `consolidation_timeout_seconds` (LeaseTooShortError, naming the
    lease as `option`, when it is shorter); reads only."""
    platform = yield from settings.effective_plan(MemoryContext())
    check_lease(lease_seconds, platform.values.consolidation_timeout_seconds, option=option)
    return platform


def check_job_lease(
    store: BaseStore,
    lease_seconds: float,
    *,
    settings: LayeredSettings | None = None,
    option: str = "lease_seconds",
) -> None:
    """Refuse a lease shorter than the model timeout of the job's base settings over `store`
    (LeaseTooShortError naming both and the fix) before anything runs; writes nothing."""
    run(store, lease_check_plan(settings or LayeredSettings(store), lease_seconds, option))


def consolidation_plan(
    settings: LayeredSettings,
    model: BaseChatModel | MaintenanceModel,
    now: datetime,
    progress: Callable[[ScopeResult], None] | None,
    worker: Worker,
    platform: EffectiveSettings,
) -> Plan[ConsolidationReport]:
    """Consolidate every scope with pending notes, up to the per-run scope cap (of the
    `platform` settings), each with the model its settings name (`maintenance_model`), else
    `model`, under `worker`'s lease on it; the scopes are walked from the worker's starting
    point."""
    maintenance = maintenance_of(model)
    candidates = yield from note_scopes_plan()
    report = ConsolidationReport()
    processed = 0
    for scope, ctx in worker.order(candidates):
        if processed >= platform.values.consolidation_max_scopes:
            report.scopes_waiting += 1
            continue
        outcome = yield from one_scope_plan(scope, ctx, settings, maintenance, now, worker)
        if outcome == "held":
            report.skipped.append(scope.namespace)
            continue
        if outcome is None:
            continue
        result, days = outcome
        report.add(result, days)
        if result.status == "nothing":
            continue
        processed += 1
        if progress:
            progress(result)
    return report


def recorded_plan(
    run: JobRun, work: Plan[ConsolidationReport], keep: int, clock: Callable[[], datetime]
) -> Plan[ConsolidationReport]:
    """Do `work`, recording it as `run`: "running" first, the outcome at the end (saved
    best-effort: a store that refuses the record fails nothing)."""
    yield from save_plan(run)
    try:
        report = yield from work
    except Exception as exc:
        yield from save_plan(run.crashed(exc, clock()), keep)
        raise
    scopes = [ScopeRun.of(r.namespace, r.status, r.folded, r.error) for r in report.scopes]
    final = run.finish(scopes, report.summary(), clock(), skipped=report.skipped)
    report.run = final if (yield from save_plan(final, keep)) else None
    return report


def nightly_plan(
    record: JobRun,
    settings: LayeredSettings,
    model: BaseChatModel | MaintenanceModel,
    started: datetime,
    progress: Callable[[ScopeResult], None] | None,
    keep: int,
    worker: Worker,
) -> Plan[ConsolidationReport]:
    """A nightly run as `record`: the lease is checked against the base settings' model
    timeout first (refused, nothing written, not even the record), then the run is recorded."""
    platform = yield from lease_check_plan(settings, worker.lease_seconds)
    work = consolidation_plan(settings, model, started, progress, worker, platform)
    return (yield from recorded_plan(record, work, keep, run_clock(started)))


def _nightly(
    store: BaseStore,
    model: BaseChatModel,
    settings: LayeredSettings | None,
    now: datetime | None,
    progress: Callable[[ScopeResult], None] | None,
    keep_runs: int,
    worker: Worker | None,
) -> tuple[JobRun, Plan[ConsolidationReport]]:
    started = now or datetime.now(UTC)
    worker = worker or Worker()
    keep = check_keep(keep_runs)
    record = new_run("consolidation", "nightly", None, started, worker=worker.id)
    layered = settings or LayeredSettings(store)
    return record, nightly_plan(record, layered, model, started, progress, keep, worker)


def consolidate(
    store: BaseStore,
    model: BaseChatModel,
    *,
    settings: LayeredSettings | None = None,
    now: datetime | None = None,
    progress: Callable[[ScopeResult], None] | None = None,
    keep_runs: int = KEEP_RUNS,
    worker: Worker | None = None,
) -> ConsolidationReport:
    """Run nightly consolidation over every scope in the store, recorded in the run log
    (the newest `keep_runs` runs are kept), as `worker` (default: a fresh id, 5-minute
    leases): several may run at once over one store, each scope taken by one at a time."""
    record, plan = _nightly(store, model, settings, now, progress, keep_runs, worker)
    with origin(source="job", job="consolidation", job_run=record.id):
        return run(store, plan)


async def aconsolidate(
    store: BaseStore,
    model: BaseChatModel,
    *,
    settings: LayeredSettings | None = None,
    now: datetime | None = None,
    progress: Callable[[ScopeResult], None] | None = None,
    keep_runs: int = KEEP_RUNS,
    worker: Worker | None = None,
) -> ConsolidationReport:
    """Async twin of consolidate."""
    record, plan = _nightly(store, model, settings, now, progress, keep_runs, worker)
    with origin(source="job", job="consolidation", job_run=record.id):
        return await arun(store, plan)
