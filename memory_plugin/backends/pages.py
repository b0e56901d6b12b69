"""Checkpoints listed a page at a time: the SQLite savers hold their connection's lock while
they read, and a caller's code between two checkpoints must not run under it (the lock is the
store's too; see memory_plugin.backends.sqlite)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import CheckpointTuple

PAGE = 32
"""Checkpoints read under the lock at once."""

Read = Callable[[RunnableConfig | None, int], list[CheckpointTuple]]
ARead = Callable[[RunnableConfig | None, int], Awaitable[list[CheckpointTuple]]]


def _size(left: int | None) -> int:
    return PAGE if left is None else min(PAGE, left)


def pages(
    read: Read, before: RunnableConfig | None, limit: int | None
) -> Iterator[CheckpointTuple]:
    """The checkpoints `read(before, size)` gives newest first, at most `limit`, each page
    read whole before any is yielded."""
    left = limit
    while left is None or left > 0:
        size = _size(left)
        page = read(before, size)
        yield from page
        if len(page) < size:
            return
        left = None if left is None else left - size
        before = page[-1].config


async def apages(
    read: ARead, before: RunnableConfig | None, limit: int | None
) -> AsyncIterator[CheckpointTuple]:
    """Async twin of pages."""
    left = limit
    while left is None or left > 0:
        size = _size(left)
        page = await read(before, size)
        for saved in page:
            yield saved
        if len(page) < size:
            return
        left = None if left is None else left - size
        before = page[-1].config
