"""Background jobs: memory work that runs after the turn that asked for it has returned.

A job is a plan (memory_plugin.plans). Started from a sync caller it runs in a daemon thread
of its own, in a copy of the caller's context (so the safety screen, the provenance and the
run's stream writer stay those of the turn); started inside a running event loop it is a task
on that loop. Jobs under one key run one after another, in the order they were started (the
later one waits for the earlier to finish, at most `chain_wait` seconds); jobs under
different keys run side by side. A daemon thread does not hold the process at exit and a
task dies with its loop: a job's work must be safe to lose and to redo (the profile's
journal cursor makes it so). A failure is logged, never raised.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import threading
import time
import weakref
from collections.abc import Hashable
from concurrent.futures import Future
from concurrent.futures import wait as wait_futures
from typing import Any

from langgraph.store.base import BaseStore

from memory_plugin.plans import Plan, arun, run

logger = logging.getLogger(__name__)
CHAIN_WAIT = 600.0
Job = Future[Any] | asyncio.Task[Any]
_runners: weakref.WeakSet[Background] = weakref.WeakSet()


class Background:
    """Background jobs, at most one running per key; `name` labels them (logs, threads)."""

    def __init__(self, name: str, *, chain_wait: float = CHAIN_WAIT) -> None:
        self.name = name
        self.chain_wait = chain_wait
        self._jobs: dict[Hashable, Job] = {}
        self._lock = threading.Lock()
        _runners.add(self)

    def start(self, key: Hashable, store: BaseStore, plan: Plan[Any]) -> None:
        """Run `plan` against `store` after the job running under `key`, if any; returns at
        once and never raises."""
        try:
            with self._lock:
                before = self._jobs.get(key)
                job = self._launch(before, store, plan)
                self._jobs[key] = job
            job.add_done_callback(lambda done: self._forget(key, done))
        except Exception:
            logger.warning("%s: the background job could not start", self.name, exc_info=True)
            plan.close()

    def _launch(self, before: Job | None, store: BaseStore, plan: Plan[Any]) -> Job:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            future: Future[Any] = Future()
            context = contextvars.copy_context()

            def work() -> None:
                future.set_running_or_notify_cancel()
                try:
                    if isinstance(before, Future):
                        wait_futures([before], timeout=self.chain_wait)
                    future.set_result(context.run(run, store, plan))
                except BaseException as exc:
                    _failed(self.name, exc)
                    future.set_exception(exc)

            threading.Thread(target=work, name=f"memory-plugin-{self.name}", daemon=True).start()
            return future
        return loop.create_task(self._arun(before, store, plan, loop))

    async def _arun(
        self,
        before: Job | None,
        store: BaseStore,
        plan: Plan[Any],
        loop: asyncio.AbstractEventLoop,
    ) -> Any:
        earlier: asyncio.Future[Any] | None = None
        if isinstance(before, Future):
            earlier = asyncio.wrap_future(before)
        elif before is not None and before.get_loop() is loop:
            earlier = before
        if earlier is not None and not earlier.done():
            await asyncio.wait({earlier}, timeout=self.chain_wait)
        try:
            return await arun(store, plan)
        except Exception as exc:
            _failed(self.name, exc)
            return None

    def _forget(self, key: Hashable, done: Job) -> None:
        with self._lock:
            if self._jobs.get(key) is done:
                del self._jobs[key]

    def pending(self) -> list[Job]:
        """The jobs not finished yet."""
        with self._lock:
            return [job for job in self._jobs.values() if not job.done()]

    def wait(self, timeout: float | None = 30.0) -> bool:
        """Block until the jobs started by sync callers finish, at most `timeout` seconds in
        all; whether they all did (jobs on an event loop cannot be waited for here)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            running = [job for job in self.pending() if isinstance(job, Future)]
            if not running:
                return True
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                return False
            wait_futures(running, timeout=left)

    async def await_all(self) -> None:
        """Await every job: the tasks on this loop, and the threads of sync callers."""
        loop = asyncio.get_running_loop()
        while True:
            waiting: list[asyncio.Future[Any]] = []
            for job in self.pending():
                if isinstance(job, Future):
                    waiting.append(asyncio.wrap_future(job))
                elif job.get_loop() is loop:
                    waiting.append(job)
            if not waiting:
                return
            await asyncio.wait(waiting)


def _failed(name: str, exc: BaseException) -> None:
    """Log a failed job in one line (its traceback at debug level): the turn has its answer."""
    logger.warning("%s: background job failed: %s: %s", name, type(exc).__name__, exc)
    logger.debug("%s: background job failed", name, exc_info=exc)


def wait_all(name: str | None = None, timeout: float | None = 30.0) -> bool:
    """wait() on every runner of this process (only those labelled `name` when given)."""
    deadline = None if timeout is None else time.monotonic() + timeout
    finished = True
    for runner in list(_runners):
        if name is None or runner.name == name:
            left = None if deadline is None else max(0.0, deadline - time.monotonic())
            finished = runner.wait(left) and finished
    return finished


async def await_every(name: str | None = None) -> None:
    """await_all() on every runner of this process (only those labelled `name` when given)."""
    for runner in list(_runners):
        if name is None or runner.name == name:
            await runner.await_all()
