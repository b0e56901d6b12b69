"""Daemon threads reused for calls that may never return (timed model calls).

A call goes to an idle worker, or to a new one when none is idle, so a hung call holds only
its own worker and never a later call; workers are daemon threads, so a hung one does not
block the interpreter's exit, and an idle one ends after `IDLE_SECONDS`.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

IDLE_SECONDS = 60.0

Job = tuple[Future[Any], Callable[[], Any]]

_lock = threading.Lock()
_idle: list[_Worker] = []


class _Worker:
    def __init__(self) -> None:
        self.jobs: queue.SimpleQueue[Job] = queue.SimpleQueue()
        threading.Thread(target=self._loop, name="memory-plugin-model", daemon=True).start()

    def _loop(self) -> None:
        while True:
            try:
                future, call = self.jobs.get(timeout=IDLE_SECONDS)
            except queue.Empty:
                with _lock:
                    if self in _idle:
                        _idle.remove(self)
                        return
                continue
            if future.set_running_or_notify_cancel():
                _settle(future, call, self._rest)
            else:
                self._rest()
            del future, call

    def _rest(self) -> None:
        """Take calls again (before the caller is told, so its next call finds this one)."""
        with _lock:
            _idle.append(self)


def _settle(future: Future[Any], call: Callable[[], Any], rest: Callable[[], None]) -> None:
    try:
        result = call()
    except BaseException as exc:
        rest()
        future.set_exception(exc)
    else:
        rest()
        future.set_result(result)


def submit(call: Callable[[], Any]) -> Future[Any]:
    """`call`'s result, computed in an idle daemon worker or a new one."""
    future: Future[Any] = Future()
    with _lock:
        worker = _idle.pop() if _idle else None
    (worker or _Worker()).jobs.put((future, call))
    return future
