"""Several consolidation workers started together by one command, one process each.

Processes rather than threads: a scope's work between model calls (building the prompt,
the safety screen, JSON) is Python that holds the interpreter lock, so threads of one process
would take turns; each process also has its own connections, and a process that dies is
exactly what leases recover from. Each worker opens the backend URL itself (so the URL must
name a shared database: SQLite or PostgreSQL; a memory:// store lives inside one process, so
another process would see an empty store of its own and its own lock table), resolves the
model spec itself, and starts at its own share of the scopes.

A worker that dies (killed, out of memory) or stops on an error takes no other worker with
it: the others finish their scopes, then the scopes whose lease the lost worker still holds
are retried by a fresh worker process (`<id>-retry`) as soon as those leases expire, and the
lost worker is reported as failed.

While they work, each worker sends the parent a message per scope it finishes, over the pipe its
outcome comes back on, and the parent hands each to `run_workers`' `progress` callable.
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from multiprocessing.connection import Connection, wait
from multiprocessing.context import SpawnProcess
from typing import TYPE_CHECKING

from memory_plugin.backends.url import URL_ENV, parse_url
from memory_plugin.scoped.leases import (
    LEASE_SECONDS,
    LeaseError,
    Worker,
    default_worker_id,
    leased_scopes,
)

if TYPE_CHECKING:
    from memory_plugin.scoped.consolidation import ScopeResult

Progress = Callable[["ScopeResult"], None]

logger = logging.getLogger(__name__)
MAX_WORKERS = 64
RETRY_SUFFIX = "-retry"


@dataclass(frozen=True)
class WorkerOutcome:
    """What one worker process reports back: its id, summary line, failed scopes, notes
    folded, scopes skipped (another worker held them) and seconds spent consolidating."""

    worker: str
    summary: str
    failed: list[str]
    run_id: str | None
    folded: int
    skipped: int
    seconds: float


def run_worker(
    url: str | None, model: str | None, worker: Worker, progress: Progress | None = None
) -> WorkerOutcome:
    """Run one consolidation worker over the store at `url` (in this process), calling
    `progress` with each scope it finishes."""
    from memory_plugin.connection import connect
    from memory_plugin.models import resolve_model
    from memory_plugin.scoped.consolidation import consolidate

    chat = resolve_model(model)
    with connect(url) as backend:
        began = time.perf_counter()
        report = consolidate(backend.store, chat, progress=progress, worker=worker)
        seconds = time.perf_counter() - began
    return WorkerOutcome(
        worker.id,
        report.summary(),
        [f"{result.label}: {result.error}" for result in report.failed],
        report.run.id if report.run else None,
        report.folded,
        len(report.skipped),
        seconds,
    )


def worker_ids(count: int, base: str | None) -> list[str]:
    """The ids of `count` workers started together: `base` (default: host, pid and a random
    tag) with the worker's number."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_WORKERS:
        raise LeaseError(f"workers must be an integer from 1 to {MAX_WORKERS}, got {count!r}")
    prefix = base or default_worker_id()
    return [prefix] if count == 1 else [f"{prefix}-{i + 1}" for i in range(count)]


def _work(sender: Connection, url: str | None, model: str | None, worker: Worker) -> None:
    """A worker process: sends each scope it finishes, then its outcome or the error that
    stopped it, to the parent."""
    try:
        sender.send(run_worker(url, model, worker, sender.send))
    except Exception as exc:
        sender.send(f"{type(exc).__name__}: {exc}")
    finally:
        sender.close()


def _lost(sent: object, exitcode: int | None) -> str:
    """Why a worker process reported no outcome."""
    if isinstance(sent, str):
        return f"the worker stopped on an error: {sent}"
    if exitcode is not None and exitcode < 0:
        return f"the worker process died (killed by {signal.Signals(-exitcode).name})"
    return f"the worker process exited with status {exitcode} before reporting"


def _start(url: str | None, model: str | None, worker: Worker) -> tuple[Connection, SpawnProcess]:
    """A started worker process and the end of the pipe its outcome comes back on."""
    context = multiprocessing.get_context("spawn")
    receiver, sender = context.Pipe(duplex=False)
    process = context.Process(target=_work, args=(sender, url, model, worker), name=worker.id)
    process.start()
    sender.close()
    return receiver, process


def _run_processes(
    url: str | None, model: str | None, workers: Sequence[Worker], progress: Progress | None
) -> dict[str, WorkerOutcome | str]:
    """Run each worker in a process of its own until every one has ended, handing each scope
    a worker finishes to `progress`; for each worker id, its outcome or why it has none."""
    from memory_plugin.scoped.consolidation import ScopeResult

    pending: dict[Connection, tuple[str, SpawnProcess]] = {}
    ended: dict[str, WorkerOutcome | str] = {}
    try:
        for worker in workers:
            receiver, process = _start(url, model, worker)
            pending[receiver] = (worker.id, process)
        while pending:
            for ready in wait(list(pending)):
                assert isinstance(ready, Connection)
                try:
                    sent: object = ready.recv()
                except EOFError:
                    sent = None
                if isinstance(sent, ScopeResult):
                    if progress:
                        progress(sent)
                    continue
                wid, process = pending.pop(ready)
                process.join()
                found = sent if isinstance(sent, WorkerOutcome) else _lost(sent, process.exitcode)
                ended[wid] = found
    finally:
        for _, left in pending.values():
            left.kill()
            left.join()
    return ended


def _await_leases(url: str | None, lost: dict[str, str]) -> dict[str, list[tuple[str, ...]]]:
    """The scopes whose lease each lost worker still holds, returned once they expired (none
    when the leases cannot be read: the scopes then wait for the next run)."""
    from memory_plugin.connection import connect

    try:
        with connect(url) as backend:
            held = {wid: leased_scopes(backend.store, wid) for wid in lost}
    except Exception as exc:
        logger.warning("could not read the lost workers' leases; their scopes wait: %s", exc)
        return {wid: [] for wid in lost}
    seconds = max([0.0, *(left for scopes in held.values() for left in scopes.values())])
    for wid, reason in lost.items():
        logger.warning(
            "worker %s was lost (%s); retrying the %d scopes it held when their leases "
            "expire, in %.0f s",
            wid,
            reason,
            len(held[wid]),
            seconds,
        )
    time.sleep(seconds)
    return {wid: sorted(scopes) for wid, scopes in held.items()}


def _outcome(worker_id: str, ended: WorkerOutcome | str, note: str = "") -> WorkerOutcome:
    """A worker's outcome; for a lost worker, a failed one naming why (and `note`)."""
    if isinstance(ended, WorkerOutcome):
        return ended
    return WorkerOutcome(worker_id, ended + note, [ended], None, 0, 0, 0.0)


def _retried(scopes: list[tuple[str, ...]] | None, retry: Worker) -> str:
    """What a lost worker's summary adds about the scopes it held."""
    if not scopes:
        return ""
    labels = ", ".join("/".join(ns[1:]) for ns in scopes)
    return f"; it held {labels}, retried by {retry.id} once the lease expired"


def run_workers(
    url: str | None,
    model: str | None,
    count: int,
    *,
    worker_id: str | None = None,
    lease_seconds: float = LEASE_SECONDS,
    progress: Progress | None = None,
) -> list[WorkerOutcome]:
    """Run `count` workers at once, one process each, each at its own share of the scopes;
    returns their outcomes in worker order, then those of the retries of lost workers'
    scopes (a lost worker's outcome is failed, naming why). A lease shorter than the model
    timeout of the job's base settings in the store at `url` is refused before any worker
    starts (LeaseTooShortError). `progress` is called (in this process) with each scope a
    worker finishes, as it finishes."""
    from memory_plugin.connection import connect
    from memory_plugin.models import resolve_model
    from memory_plugin.scoped.consolidation import check_job_lease

    ids = worker_ids(count, worker_id)
    workers = [Worker(wid, lease_seconds, i, count) for i, wid in enumerate(ids)]
    retries = {wid: Worker(wid + RETRY_SUFFIX, lease_seconds) for wid in ids}
    if count > 1 and parse_url(url).kind == "memory":
        raise LeaseError(
            f"several workers need a shared database: give --url (or ${URL_ENV}) a sqlite "
            "or postgresql URL, not memory://"
        )
    with connect(url) as backend:
        check_job_lease(backend.store, lease_seconds)
    resolve_model(model)
    ended = _run_processes(url, model, workers, progress)
    lost = {wid: found for wid, found in ended.items() if isinstance(found, str)}
    held = _await_leases(url, lost) if lost else {}
    again = [replace(retries[wid], only=frozenset(held[wid])) for wid in lost if held[wid]]
    retried = _run_processes(url, model, again, progress) if again else {}
    return [_outcome(wid, ended[wid], _retried(held.get(wid), retries[wid])) for wid in ids] + [
        _outcome(worker.id, retried[worker.id]) for worker in again
    ]
