"""Consolidation run records: what each run did, kept in the store under the plugin's root.

Runs live in their own namespace (`memory_plugin/jobs/consolidation`), never inside a user's
or a team's scope, keyed by a sortable id (`<started_at compact>-<random>`). A run is saved
when it starts (status "running") and again when it ends; after the final save only the
newest `keep` runs are kept. Saving is best-effort: a failure is logged and never fails the
job it records.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Literal, cast

from langgraph.store.base import PutOp

from memory_plugin.errors import MemoryPluginError
from memory_plugin.plans import Plan, all_items_plan
from memory_plugin.scope import scope_from_namespace
from memory_plugin.scope.namespaces import namespace

logger = logging.getLogger(__name__)

RUNS = namespace("jobs", "consolidation")
KEEP_RUNS = 100
"""How many consolidation runs the log keeps by default; older ones are deleted."""
MAX_LIST = 1_000
_PAGE = 500

Trigger = Literal["nightly", "manual"]
RunStatus = Literal["running", "succeeded", "failed", "partial"]


class RunLimitError(MemoryPluginError, ValueError):
    """A run listing's `limit` or a log's `keep` is out of range."""


@dataclass(frozen=True)
class ScopeRun:
    """One scope's outcome in a run: which scope, and what consolidation did to it."""

    namespace: tuple[str, ...]
    kind: Literal["personal", "team"]
    workspace_id: str | None
    user_id: str | None
    org_id: str | None
    status: str
    folded: int = 0
    error: str | None = None

    @classmethod
    def of(
        cls, ns: tuple[str, ...], status: str, folded: int = 0, error: str | None = None
    ) -> ScopeRun:
        """The record of a personal or team scope's outcome, its owners read from `ns`."""
        scope, ctx = scope_from_namespace(ns)
        kind: Literal["personal", "team"] = "team" if scope.kind == "team" else "personal"
        return cls(ns, kind, ctx.workspace_id, ctx.user_id, ctx.org_id, status, folded, error)

    def to_json(self) -> dict[str, Any]:
        """The record as JSON."""
        return {
            "namespace": list(self.namespace),
            "kind": self.kind,
            "workspace_id": self.workspace_id,
            "user_id": self.user_id,
            "org_id": self.org_id,
            "status": self.status,
            "folded": self.folded,
            "error": self.error,
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> ScopeRun:
        """A record read back from the store."""
        return cls(
            tuple(value["namespace"]),
            value["kind"],
            value.get("workspace_id"),
            value.get("user_id"),
            value.get("org_id"),
            value["status"],
            int(value.get("folded") or 0),
            value.get("error"),
        )


@dataclass(frozen=True)
class JobRun:
    """One run of a memory job: when, why, by whom, and each scope's outcome."""

    id: str
    job: str
    trigger: Trigger
    by: str | None
    started_at: str
    finished_at: str | None
    status: RunStatus
    summary: str
    folded: int
    scopes: tuple[ScopeRun, ...]
    worker: str | None = None
    """The worker that ran it (leases name it too)."""
    skipped: tuple[tuple[str, ...], ...] = ()
    """Scopes it skipped because another worker held their lease."""

    def to_json(self) -> dict[str, Any]:
        """The run as JSON (what the store keeps and the REST API answers)."""
        return {
            "id": self.id,
            "job": self.job,
            "trigger": self.trigger,
            "by": self.by,
            "started_at": self.started_at,
            "finished_at": self.finished_at,
            "status": self.status,
            "summary": self.summary,
            "folded": self.folded,
            "scopes": [scope.to_json() for scope in self.scopes],
            "worker": self.worker,
            "skipped": [list(ns) for ns in self.skipped],
        }

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> JobRun:
        """A run read back from the store."""
        return cls(
            id=value["id"],
            job=value["job"],
            trigger=value["trigger"],
            by=value.get("by"),
            started_at=value["started_at"],
            finished_at=value.get("finished_at"),
            status=value["status"],
            summary=value.get("summary") or "",
            folded=int(value.get("folded") or 0),
            scopes=tuple(ScopeRun.from_json(scope) for scope in value.get("scopes") or ()),
            worker=value.get("worker"),
            skipped=tuple(tuple(ns) for ns in value.get("skipped") or ()),
        )

    def finish(
        self,
        scopes: Iterable[ScopeRun],
        summary: str,
        finished_at: datetime,
        skipped: Iterable[tuple[str, ...]] = (),
    ) -> JobRun:
        """The run as it ended: failed when every scope it processed failed, partial when
        some did, else succeeded; `skipped`: the scopes another worker held."""
        done = tuple(scopes)
        failed = sum(1 for scope in done if scope.status == "failed")
        status: RunStatus = "succeeded"
        if failed:
            status = "failed" if failed == len(done) else "partial"
        return replace(
            self,
            finished_at=finished_at.isoformat(),
            status=status,
            summary=summary,
            folded=sum(scope.folded for scope in done),
            scopes=done,
            skipped=tuple(skipped),
        )

    def crashed(self, exc: BaseException, finished_at: datetime) -> JobRun:
        """The run as it ended when the job itself raised."""
        return replace(
            self,
            finished_at=finished_at.isoformat(),
            status="failed",
            summary=f"The run failed: {type(exc).__name__}: {exc}",
        )


def new_run(
    job: str, trigger: Trigger, by: str | None, started_at: datetime, worker: str | None = None
) -> JobRun:
    """A run that starts now, with a fresh sortable id, by `worker`."""
    stamp = started_at.strftime("%Y%m%dT%H%M%S%fZ")
    return JobRun(
        id=f"{stamp}-{secrets.token_hex(4)}",
        job=job,
        trigger=trigger,
        by=by,
        started_at=started_at.isoformat(),
        finished_at=None,
        status="running",
        summary="Running.",
        folded=0,
        scopes=(),
        worker=worker,
    )


def run_clock(start: datetime) -> Callable[[], datetime]:
    """A clock that starts at `start` and runs at the speed of real time."""
    began = time.monotonic()
    return lambda: start + timedelta(seconds=time.monotonic() - began)


def _check(value: int, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= MAX_LIST:
        raise RunLimitError(f"{what} must be an integer from 1 to {MAX_LIST}, got {value!r}")
    return value


def _all_plan() -> Plan[list[Any]]:
    """Every stored run item, in no particular order."""
    return (yield from all_items_plan(RUNS, page=_PAGE))


def list_plan(limit: int = 20) -> Plan[list[JobRun]]:
    """The newest `limit` runs, newest first; a record that cannot be read is skipped."""
    _check(limit, "limit")
    items = yield from _all_plan()
    runs = []
    for item in sorted(items, key=lambda item: cast(str, item.key), reverse=True):
        try:
            runs.append(JobRun.from_json(item.value))
        except (KeyError, TypeError, ValueError):
            logger.warning("skipping an unreadable consolidation run record %r", item.key)
        if len(runs) == limit:
            break
    return runs


def save_plan(run: JobRun, keep: int | None = None) -> Plan[bool]:
    """Save a run, then (with `keep`) delete all but the newest `keep` runs; best-effort:
    returns False, with the failure logged, when the store refuses."""
    try:
        yield [PutOp(RUNS, run.id, run.to_json(), index=False)]
        if keep is not None:
            items = yield from _all_plan()
            old = sorted((cast(str, item.key) for item in items), reverse=True)[keep:]
            if old:
                yield [PutOp(RUNS, key, None) for key in old]
    except Exception:
        logger.warning(
            "could not record consolidation run %s (%s); the job is not affected",
            run.id,
            run.status,
            exc_info=True,
        )
        return False
    return True


def check_keep(keep: int) -> int:
    """`keep` itself when it is a usable number of runs to keep, else RunLimitError."""
    return _check(keep, "keep_runs")
