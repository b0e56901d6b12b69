"""The object `connect` returns: a store and a checkpointer opened together."""

from __future__ import annotations

import asyncio
import contextlib
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, field
from types import TracebackType
from typing import Self

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore

from memory_plugin.backends.url import BackendKind
from memory_plugin.background import await_every, wait_all
from memory_plugin.errors import BackendError

DRAIN_SECONDS = 10.0


@dataclass
class Opened:
    """What a backend module opened."""

    store: BaseStore
    checkpointer: BaseCheckpointSaver[str]
    vector_search: bool


@dataclass
class Backend:
    """A LangGraph store and checkpointer on one backend.

    From `connect`: close with `close()` or `with`. From `aconnect`: `aclose()` or `async with`.
    """

    kind: BackendKind
    url: str
    store: BaseStore
    checkpointer: BaseCheckpointSaver[str]
    vector_search: bool
    _stack: ExitStack[bool | None] | AsyncExitStack[bool | None] = field(repr=False)

    def close(self) -> None:
        """Release connections opened by `connect`, once background memory work (a profile
        update still running after its turn) has finished, at most DRAIN_SECONDS."""
        if isinstance(self._stack, AsyncExitStack):
            raise BackendError("this backend came from aconnect: use `await aclose()`")
        wait_all(timeout=DRAIN_SECONDS)
        self._stack.close()

    async def aclose(self) -> None:
        """Release connections, whichever of connect or aconnect opened them, once background
        memory work has finished (at most DRAIN_SECONDS)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(await_every(), DRAIN_SECONDS)
        if isinstance(self._stack, AsyncExitStack):
            await self._stack.aclose()
        else:
            self._stack.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
