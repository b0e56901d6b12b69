"""The write generation: how a run knows, without a round trip, that no store of this process
wrote memory since it last read the versions.

Every store `connect` opens (in-memory, SQLite, PostgreSQL) and our own conditional and
claimed inserts move the generation once a write to a versioned namespace is done (after its
commit: a reader that took the generation before its version read and finds it unchanged
later saw every write of this process). Writes of other processes, and of store objects this
package did not open, do not move it.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Iterable
from typing import Any, TypeVar, cast

from langgraph.store.base import Op, PutOp

from memory_plugin.backends.versions import UNVERSIONED, Namespace

F = TypeVar("F", bound=Callable[..., Any])

_lock = threading.Lock()
_generation = 0


def generation() -> int:
    """The number of writes to versioned namespaces this process has seen done."""
    return _generation


def wrote() -> None:
    """Note that a write to a versioned namespace is done."""
    global _generation
    with _lock:
        _generation += 1


def wrote_ops(ops: Iterable[Op]) -> None:
    """Note a batch's writes, if it put or deleted an item of a versioned namespace."""
    if any(isinstance(op, PutOp) and op.namespace[: len(UNVERSIONED)] != UNVERSIONED for op in ops):
        wrote()


def noted(namespace_of: Callable[..., Namespace]) -> Callable[[F], F]:
    """A write function (sync or async) that notes its write once done, when the namespace
    `namespace_of` finds in its arguments is versioned (its own SQL bypasses the batch)."""

    def wrap(write: F) -> F:
        def note(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
            if namespace_of(*args, **kwargs)[: len(UNVERSIONED)] != UNVERSIONED:
                wrote()

        if inspect.iscoroutinefunction(write):

            @functools.wraps(write)
            async def awritten(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await write(*args, **kwargs)
                finally:
                    note(args, kwargs)

            return cast(F, awritten)

        @functools.wraps(write)
        def written(*args: Any, **kwargs: Any) -> Any:
            try:
                return write(*args, **kwargs)
            finally:
                note(args, kwargs)

        return cast(F, written)

    return wrap
