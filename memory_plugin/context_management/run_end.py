"""The run-end callback of the shipped graph: it tells memory_plugin.context_management.turn_end
when a run of the graph starts and ends, so the background work a turn started (the flush note,
the profile's consolidation) begins once invoke, ainvoke or a stream has returned.

It is a local handler of the graph's own run (`with_run_end` binds it with `with_config`, merged
with the caller's callbacks): it sees that run's start and its end or error, nothing of the
nodes, models and tools under it, and the same when the graph runs as a subgraph."""

from __future__ import annotations

import threading
from typing import Any, TypeVar
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler, CallbackManager
from langgraph.pregel import Pregel

from memory_plugin.context_management.turn_end import run_ended, run_started

G = TypeVar("G", bound=Pregel[Any, Any, Any, Any])


class RunEnd(BaseCallbackHandler):
    """Reports its graph's runs, each by its thread id, to turn_end."""

    run_inline = True

    def __init__(self) -> None:
        self._threads: dict[UUID, str | None] = {}
        self._lock = threading.Lock()

    def on_chain_start(
        self,
        serialized: dict[str, Any] | None,
        inputs: Any,
        *,
        run_id: UUID,
        metadata: dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> None:
        """A run of the graph started: its thread's turn ends with it."""
        thread = (metadata or {}).get("thread_id")
        thread_id = str(thread) if thread else None
        with self._lock:
            self._threads[run_id] = thread_id
        run_started(thread_id)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """The run returned: its thread's turn ended."""
        self._ended(run_id)

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """The run raised (or its stream was closed): its thread's turn ended."""
        self._ended(run_id)

    def _ended(self, run_id: UUID) -> None:
        with self._lock:
            if run_id not in self._threads:
                return
            thread_id = self._threads.pop(run_id)
        run_ended(thread_id)


def with_run_end(graph: G) -> G:
    """`graph` (a copy of its class) reporting its runs' ends to turn_end."""
    return graph.with_config(callbacks=CallbackManager(handlers=[RunEnd()]))
