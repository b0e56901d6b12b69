"""Background jobs: memory work that runs after the turn that asked for it has returned.

A job is a plan (memory_plugin.plans). Started from a sync caller it runs in a daemon thread
of its own, in a copy of the caller's context (so the safety screen, the provenance and the
run's stream writer stay those of the turn); started inside a running event loop it is a task
on that loop. A sync job may be held (`held_until`): its thread is then started later, by a
launcher thread, once its hold lets it go or at the hold's timeout, so the caller's thread
never pays for it. Jobs under one key run one after another, in the order they were started (the
later one waits for the earlier to finish, at most `chain_wait` seconds); jobs under
different keys run side by side. A failure is logged, never raised.

Nothing is lost at exit, whether or not the backend was closed (its connections stay open
until then): at interpreter exit the process waits for the jobs of sync callers, at most the
exit_wait_seconds setting (30 s), and logs what it gave up on. When an event loop closes with
jobs on it (asyncio.run cancels every task left when its coroutine returns), each job declines
that cancellation and the loop waits for it, at most as long; a request of the job cancelled
with the other tasks (a model call in a task of its own) is sent again, so a job's work must be
safe to redo (the profile's journal cursor makes it so).
"""

from __future__ import annotations

import asyncio
import concurrent.futures.thread  # noqa: F401  (its exit hook must be registered before ours)
import contextvars
import heapq
import itertools
import logging
import queue
import threading
import time
import weakref
from collections.abc import Callable, Coroutine, Hashable
from concurrent.futures import Future
from concurrent.futures import wait as wait_futures
from typing import Any

from langgraph.store.base import BaseStore

from memory_plugin.plans import Drive, Plan, run
from memory_plugin.settings.timeout import exit_wait

logger = logging.getLogger(__name__)
CHAIN_WAIT = 600.0
Job = Future[Any] | asyncio.Task[Any]
Start = Callable[[], None]
Hold = Callable[[Start], None]
"""Given a held sync job's thread start, calls it later, from any thread."""
_runners: weakref.WeakSet[Background] = weakref.WeakSet()
_exit_wait: float | None = None


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

    def _launch(
        self, before: Job | None, store: BaseStore, plan: Plan[Any], hold: Hold | None = None
    ) -> Job:
        """The job running `plan`; a sync caller's thread is started by `hold` when given."""
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

            thread = threading.Thread(target=work, name=f"memory-plugin-{self.name}", daemon=True)
            if hold is None:
                thread.start()
            else:
                hold(lambda: self._begin(thread, future))
            return future
        return JobTask(self.name, self._arun(before, store, plan, loop), loop)

    def _begin(self, thread: threading.Thread, future: Future[Any]) -> None:
        """Start a held job's thread, once (its hold and its timeout may both call)."""
        if thread.ident is not None:
            return
        try:
            thread.start()
        except Exception as exc:
            _failed(self.name, exc)
            future.set_exception(exc)

    async def _arun(
        self,
        before: Job | None,
        store: BaseStore,
        plan: Plan[Any],
        loop: asyncio.AbstractEventLoop,
    ) -> Any:
        drive = Drive(store, plan)
        while True:
            try:
                return await self._drive(before, drive, loop)
            except asyncio.CancelledError:
                task = asyncio.current_task()
                if not isinstance(task, JobTask) or not task.closing or task.cancelling():
                    raise

    async def _drive(
        self, before: Job | None, drive: Drive[Any], loop: asyncio.AbstractEventLoop
    ) -> Any:
        earlier: asyncio.Future[Any] | None = None
        if isinstance(before, Future):
            earlier = asyncio.wrap_future(before)
        elif before is not None and before.get_loop() is loop:
            earlier = before
        if earlier is not None and not earlier.done():
            await asyncio.wait({earlier}, timeout=self.chain_wait)
        try:
            return await drive.arun()
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


class JobTask(asyncio.Task[Any]):
    """The task of a job started inside an event loop. It declines the cancellation of every
    task of a loop that is closing (asyncio.run's, when its coroutine returns: the loop is not
    running then), so the loop waits for it, at most `exit_seconds()`; its requests that were
    cancelled meanwhile are sent again."""

    def __init__(
        self, name: str, coro: Coroutine[Any, Any, Any], loop: asyncio.AbstractEventLoop
    ) -> None:
        super().__init__(coro, loop=loop, name=f"memory-plugin-{name}")
        self.job = name
        self.closing = False

    def cancel(self, msg: Any | None = None) -> bool:
        """Cancel the job, unless its loop is closing: then finish it first (bounded)."""
        loop = self.get_loop()
        if self.closing or loop.is_running():
            return super().cancel(msg)
        self.closing = True
        timer = loop.call_later(exit_seconds(), self._give_up)
        self.add_done_callback(lambda _: timer.cancel())
        return False

    def _give_up(self) -> None:
        _gave_up([self.job], "as its event loop closed")
        super().cancel()


class _Launcher:
    """A daemon thread that runs held jobs' thread starts: each once its hold calls back, or
    at its deadline if that comes first."""

    def __init__(self) -> None:
        self._queue: queue.SimpleQueue[Start | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._deadlines: list[tuple[float, int, Start]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def later(self, start: Start, timeout: float, then: Callable[[Start], None]) -> None:
        """Run `start` once `then` calls back (from any thread), at most `timeout` s from now."""
        entry = (time.monotonic() + timeout, next(self._order), start)
        with self._lock:
            heapq.heappush(self._deadlines, entry)
            earliest = self._deadlines[0] is entry
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="memory-plugin-launcher", daemon=True
                )
                self._thread.start()
        if earliest:
            self._queue.put(None)
        then(lambda: self._queue.put(start))

    def _run(self) -> None:
        while True:
            with self._lock:
                due = self._deadlines[0][0] if self._deadlines else None
            left = None if due is None else max(0.0, due - time.monotonic())
            try:
                start = self._queue.get(timeout=left)
            except queue.Empty:
                start = None
            if start is not None:
                self._forget(start)
                start()
            for late in self._late():
                late()

    def _forget(self, start: Start) -> None:
        with self._lock:
            kept = [entry for entry in self._deadlines if entry[2] is not start]
            if len(kept) != len(self._deadlines):
                heapq.heapify(kept)
                self._deadlines = kept

    def _late(self) -> list[Start]:
        now, late = time.monotonic(), []
        with self._lock:
            while self._deadlines and self._deadlines[0][0] <= now:
                late.append(heapq.heappop(self._deadlines)[2])
        return late


_launcher = _Launcher()


def held_until(then: Callable[[Start], None], timeout: float) -> Hold:
    """A hold whose job thread the launcher starts once `then` calls back, or after
    `timeout` seconds: the caller's thread never starts it."""

    def hold(start: Start) -> None:
        _launcher.later(start, timeout, then)

    return hold


def _failed(name: str, exc: BaseException) -> None:
    """Log a failed job in one line (its traceback at debug level): the turn has its answer."""
    logger.warning("%s: background job failed: %s: %s", name, type(exc).__name__, exc)
    logger.debug("%s: background job failed", name, exc_info=exc)


def _gave_up(names: list[str], when: str) -> None:
    """Say on the log (stderr when logging is not set up) which jobs were given up."""
    jobs = "job" if len(names) == 1 else "jobs"
    logger.warning(
        "memory: gave up waiting for %d background %s (%s) after %g s %s",
        len(names),
        jobs,
        ", ".join(sorted(set(names))),
        exit_seconds(),
        when,
    )


def wait_at_exit(seconds: float) -> None:
    """Set how long the process waits for background jobs at exit (connect does, from the
    exit_wait_seconds setting)."""
    global _exit_wait
    _exit_wait = seconds


def exit_seconds() -> float:
    """How long the process waits for background jobs at exit: what `wait_at_exit` set, else
    the exit_wait_seconds setting of the environment, else its default."""
    return exit_wait() if _exit_wait is None else _exit_wait


def _drain_at_exit() -> None:
    """Wait for the jobs of sync callers, at most `exit_seconds()`, and log those given up."""
    if not wait_all(timeout=exit_seconds()):
        names = [r.name for r in list(_runners) for job in r.pending() if isinstance(job, Future)]
        _gave_up(names, "at exit")


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


# Before the executors of concurrent.futures stop (a job may still use one) and before the
# interpreter waits for its non-daemon threads.
threading._register_atexit(_drain_at_exit)  # type: ignore[attr-defined]
