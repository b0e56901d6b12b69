"""Work that waits for the end of a thread's turn: a `TurnEnd` request, yielded by a
background plan (`after_turn`), returns once its thread's turn ended (`turn_ended`), or after
its timeout, so a turn that fails or runs long only lets the work go ahead beside it, and
`every_turn_ended` lets it all go on when someone waits for it. Waiting holds neither the
GIL nor anything the turn needs.

A turn ends when the graph's run ends where the graph reports it (`run_started` and
`run_ended`, from the shipped graph's run-end callback, memory_plugin.context_management.
run_end), so the work starts once invoke or ainvoke returns; in a graph that does not report
its runs (a user's own graph with our nodes), when the turn's last journal write is done
(`journal_written`)."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Hashable
from typing import Any, TypeVar

from langgraph.store.base import BaseStore

from memory_plugin.background import Background, Hold, Job, held_until
from memory_plugin.plans import Plan

TURN_END_WAIT = 10.0
T = TypeVar("T")


class TurnEnd:
    """A request that returns once its thread's turn ended (`turn_ended`), or after
    `timeout` seconds; it waits without holding the GIL or anything the turn needs."""

    def __init__(self, thread_id: str | None, timeout: float) -> None:
        self.thread_id = thread_id
        self.timeout = timeout
        self._ended = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        self._then: list[Callable[[], None]] = []
        with _gates_lock:
            _gates.setdefault(thread_id, []).append(self)

    def end(self) -> None:
        """The turn ended: every waiter goes on."""
        with _gates_lock:
            self._ended.set()
            waiters, self._waiters = self._waiters, []
            then, self._then = self._then, []
        for loop, future in waiters:
            loop.call_soon_threadsafe(_settle, future)
        for callback in then:
            callback()

    def then(self, callback: Callable[[], None]) -> None:
        """Call `callback` once the turn ended (now, if it has)."""
        with _gates_lock:
            if not self._ended.is_set():
                self._then.append(callback)
                return
        callback()

    def run(self, store: BaseStore) -> None:
        """Wait for the turn's end (the store is not used)."""
        self._ended.wait(self.timeout)
        self._forget()

    async def arun(self, store: BaseStore) -> None:
        """Async twin of run."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()
        with _gates_lock:
            if not self._ended.is_set():
                self._waiters.append((loop, future))
            else:
                future.set_result(None)
        await asyncio.wait({future}, timeout=self.timeout)
        self._forget()

    def _forget(self) -> None:
        with _gates_lock:
            gates = _gates.get(self.thread_id, [])
            if self in gates:
                gates.remove(self)
                if not gates:
                    del _gates[self.thread_id]


class TurnJobs(Background):
    """Background jobs that may wait for their turn's end: waiting for them (a backend
    closing, wait_for_profiles, the process exiting) lets those still waiting go on first."""

    def __init__(self, name: str) -> None:
        super().__init__(name)
        self._holds: dict[int, Hold] = {}

    def start_after_turn(
        self, key: Hashable, store: BaseStore, plan: Plan[Any], thread_id: str | None
    ) -> None:
        """Start `plan` as a job that waits for the end of `thread_id`'s turn first; where the
        thread's run reports its end, a sync caller's job thread is only started then."""
        gate = TurnEnd(thread_id, TURN_END_WAIT)
        held = after_turn(gate, plan)
        if reports_end(thread_id):
            self._holds[id(held)] = held_until(gate.then, TURN_END_WAIT)
        try:
            self.start(key, store, held)
        finally:
            self._holds.pop(id(held), None)

    def _launch(
        self, before: Job | None, store: BaseStore, plan: Plan[Any], hold: Hold | None = None
    ) -> Job:
        return super()._launch(before, store, plan, hold or self._holds.get(id(plan)))

    def wait(self, timeout: float | None = 30.0) -> bool:
        """Background.wait, once no job waits for a turn's end."""
        every_turn_ended()
        return super().wait(timeout)

    async def await_all(self) -> None:
        """Background.await_all, once no job waits for a turn's end."""
        every_turn_ended()
        await super().await_all()


def after_turn(gate: TurnEnd, plan: Plan[T]) -> Plan[T]:
    """`plan` once `gate`'s turn ended."""
    yield gate
    return (yield from plan)


_gates: dict[str | None, list[TurnEnd]] = {}
_runs: dict[str | None, int] = {}
_gates_lock = threading.Lock()


def _settle(future: asyncio.Future[None]) -> None:
    if not future.done():
        future.set_result(None)


def turn_ended(thread_id: str | None) -> None:
    """Let the work waiting for this thread's turn to end go on."""
    with _gates_lock:
        gates = _gates.pop(thread_id, [])
    for gate in gates:
        gate.end()


def every_turn_ended() -> None:
    """Let all the work waiting for a turn to end go on (someone waits for it to finish)."""
    with _gates_lock:
        gates = [gate for waiting in _gates.values() for gate in waiting]
        _gates.clear()
    for gate in gates:
        gate.end()


def run_started(thread_id: str | None) -> None:
    """A run of a graph that reports its end started on this thread."""
    with _gates_lock:
        _runs[thread_id] = _runs.get(thread_id, 0) + 1


def run_ended(thread_id: str | None) -> None:
    """That run ended (its result returned or its error raised): the turn ended."""
    with _gates_lock:
        left = _runs.get(thread_id, 0) - 1
        if left > 0:
            _runs[thread_id] = left
        else:
            _runs.pop(thread_id, None)
    turn_ended(thread_id)


def reports_end(thread_id: str | None) -> bool:
    """Whether a run on this thread will say when it ends (`run_ended`)."""
    with _gates_lock:
        return thread_id in _runs


def journal_written(thread_id: str | None) -> None:
    """The turn's last journal write is done: the turn ended, unless its run will say so."""
    if not reports_end(thread_id):
        turn_ended(thread_id)
