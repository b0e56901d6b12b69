"""Work that waits for the end of a thread's turn: a `TurnEnd` request, yielded by a
background plan, returns once the turn's last journal write called `turn_ended` for its
thread (or after its timeout, so a turn that fails or runs long only lets the work go ahead
beside it, and `every_turn_ended` lets it all go on when someone waits for it). Waiting
holds neither the GIL nor anything the turn needs."""

from __future__ import annotations

import asyncio
import threading

from langgraph.store.base import BaseStore

TURN_END_WAIT = 10.0


class TurnEnd:
    """A request that returns once its thread's turn ended (`turn_ended`), or after
    `timeout` seconds; it waits without holding the GIL or anything the turn needs."""

    def __init__(self, thread_id: str | None, timeout: float) -> None:
        self.thread_id = thread_id
        self.timeout = timeout
        self._ended = threading.Event()
        self._waiters: list[tuple[asyncio.AbstractEventLoop, asyncio.Future[None]]] = []
        with _gates_lock:
            _gates.setdefault(thread_id, []).append(self)

    def end(self) -> None:
        """The turn ended: every waiter goes on."""
        with _gates_lock:
            self._ended.set()
            waiters, self._waiters = self._waiters, []
        for loop, future in waiters:
            loop.call_soon_threadsafe(_settle, future)

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


_gates: dict[str | None, list[TurnEnd]] = {}
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
