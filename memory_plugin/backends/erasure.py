"""Removals on backends that keep old copies of rows in their files (SQLite's write-ahead
log): what counts as one, and the plan step that purges those copies.

A batch that deletes an item (a put of None) is a removal, whatever the item. A rewrite that
drops text (forget's document lines and profile bullets, a bounded entry removed) looks like
any other update, so the plan that makes it yields `Purge()` after it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Protocol, runtime_checkable

from langgraph.store.base import BaseStore, Op, PutOp


@runtime_checkable
class Purging(Protocol):
    """A store that purges removed rows from its files."""

    def purge_removed(self) -> None:
        """Leave no copy of removed rows in the store's files."""

    async def apurge_removed(self) -> None:
        """Async twin of purge_removed."""


def removes(ops: Iterable[Op]) -> bool:
    """Whether a batch of store operations deletes an item."""
    return any(isinstance(op, PutOp) and op.value is None for op in ops)


class Purge:
    """A plan step after writes that removed text: the store purges the old copies (a no-op
    on stores that keep none)."""

    def run(self, store: BaseStore) -> None:
        """Purge with the store's sync methods."""
        if isinstance(store, Purging):
            store.purge_removed()

    async def arun(self, store: BaseStore) -> None:
        """Purge with the store's async methods."""
        if isinstance(store, Purging):
            await store.apurge_removed()
