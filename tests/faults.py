"""A real store with faults switched on and off: down, slow, read-only, full.

`FaultyStore(backend.store)` forwards every operation to the real store until a fault is set;
then the chosen operations fail the way a real backend fails (or stall, for `slow`). It is a
plain BaseStore, so conditional writes go through its `batch` too.
"""

from __future__ import annotations

import asyncio
import errno
import sqlite3
import time
from collections.abc import Iterable
from typing import Any, Literal

from langgraph.store.base import BaseStore, GetOp, ListNamespacesOp, Op, PutOp, Result, SearchOp

Fault = Literal["down", "slow", "read_only", "full"]
FAULTS: tuple[Fault, ...] = ("down", "slow", "read_only", "full")


def _error(fault: Fault) -> Exception:
    if fault == "down":
        return ConnectionError("connection refused: the memory store is down")
    if fault == "read_only":
        return sqlite3.OperationalError("attempt to write a readonly database")
    return OSError(errno.ENOSPC, "database or disk is full")


class FaultyStore(BaseStore):
    """A store whose operations can be made to fail; `calls` counts operations by type."""

    def __init__(self, inner: BaseStore, *, slow_seconds: float = 2.0) -> None:
        self.inner = inner
        self.fault: Fault | None = None
        self.slow_seconds = slow_seconds
        self.only: tuple[type[Op], ...] | None = None
        self.calls: dict[str, int] = {}

    @property
    def index_config(self) -> Any:  # type: ignore[override]
        """The wrapped store's vector index configuration."""
        return getattr(self.inner, "index_config", None)

    def set(self, fault: Fault | None, *, only: Iterable[type[Op]] | None = None) -> None:
        """Switch a fault on (None: off); `only` limits it to these operation types."""
        self.fault = fault
        self.only = tuple(only) if only is not None else None

    def _hits(self, ops: Iterable[Op]) -> bool:
        if self.fault is None:
            return False
        kinds = self.only or (
            (PutOp,)
            if self.fault in ("read_only", "full")
            else (GetOp, SearchOp, PutOp, ListNamespacesOp)
        )
        return any(isinstance(op, kinds) for op in ops)

    def _count(self, ops: list[Op]) -> None:
        for op in ops:
            self.calls[type(op).__name__] = self.calls.get(type(op).__name__, 0) + 1

    def batch(self, ops: Iterable[Op]) -> list[Result]:
        """Forward to the real store, or fail as the fault says."""
        ops = list(ops)
        self._count(ops)
        if self._hits(ops):
            assert self.fault is not None
            if self.fault == "slow":
                time.sleep(self.slow_seconds)
            else:
                raise _error(self.fault)
        return self.inner.batch(ops)

    async def abatch(self, ops: Iterable[Op]) -> list[Result]:
        """Async twin of batch."""
        ops = list(ops)
        self._count(ops)
        if self._hits(ops):
            assert self.fault is not None
            if self.fault == "slow":
                await asyncio.sleep(self.slow_seconds)
            else:
                raise _error(self.fault)
        return await self.inner.abatch(ops)
