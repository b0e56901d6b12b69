"""Several consolidation workers started together by one command, one process each.

Processes rather than threads: a scope's work between model calls (building the prompt,
the safety screen, JSON) is Python that holds the interpreter lock, so threads of one process
would take turns; each process also has its own connections, and a process that dies is
exactly what leases recover from. Each worker opens the backend URL itself (so the URL must
name a shared database: SQLite or PostgreSQL), resolves the model spec itself, and starts at
its own share of the scopes.
"""

from __future__ import annotations

import multiprocessing
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from memory_plugin.backends.url import URL_ENV, parse_url
from memory_plugin.scoped.leases import LEASE_SECONDS, LeaseError, Worker, default_worker_id

MAX_WORKERS = 64


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


def run_worker(url: str | None, model: str | None, worker: Worker) -> WorkerOutcome:
    """Run one consolidation worker over the store at `url` (in this process)."""
    from memory_plugin.backends import connect
    from memory_plugin.models import resolve_model
    from memory_plugin.scoped.consolidation import consolidate

    chat = resolve_model(model)
    with connect(url) as backend:
        began = time.perf_counter()
        report = consolidate(backend.store, chat, worker=worker)
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


def run_workers(
    url: str | None,
    model: str | None,
    count: int,
    *,
    worker_id: str | None = None,
    lease_seconds: float = LEASE_SECONDS,
) -> list[WorkerOutcome]:
    """Run `count` workers at once, one process each, each at its own share of the scopes;
    returns their outcomes in worker order."""
    ids = worker_ids(count, worker_id)
    workers = [Worker(wid, lease_seconds, i, count) for i, wid in enumerate(ids)]
    if count > 1 and parse_url(url).kind == "memory":
        raise LeaseError(
            f"several workers need a shared database: give --url (or ${URL_ENV}) a sqlite "
            "or postgresql URL, not memory://"
        )
    context = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(max_workers=count, mp_context=context) as pool:
        futures = [pool.submit(run_worker, url, model, worker) for worker in workers]
        return [future.result() for future in futures]
