"""Every private LangGraph name memory_plugin relies on, imported in one place.

LangGraph may move these between releases; tests/test_compat.py imports each one and names
the installed langgraph version when one has moved.
"""

from langgraph._internal._runnable import RunnableCallable
from langgraph.checkpoint.postgres import _ainternal as pg_async_connections
from langgraph.checkpoint.postgres import _internal as pg_connections
from langgraph.checkpoint.serde.jsonplus import EXT_DELTA_SNAPSHOT
from langgraph.checkpoint.serde.types import _DeltaSnapshot as DeltaSnapshot
from langgraph.runtime import _no_op_stream_writer as no_op_stream_writer

__all__ = [
    "EXT_DELTA_SNAPSHOT",
    "DeltaSnapshot",
    "RunnableCallable",
    "no_op_stream_writer",
    "pg_async_connections",
    "pg_connections",
]
