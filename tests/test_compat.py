"""The private LangGraph names memory_plugin uses still exist where compat imports them."""

from __future__ import annotations

import importlib
from importlib.metadata import version


def test_every_private_langgraph_name_imports() -> None:
    """A moved name fails here, naming the installed langgraph version."""
    try:
        compat = importlib.import_module("memory_plugin.compat")
    except ImportError as exc:
        raise AssertionError(
            f"a private name moved in langgraph {version('langgraph')} "
            f"(langgraph-checkpoint {version('langgraph-checkpoint')}): {exc}"
        ) from exc
    for name in compat.__all__:
        assert getattr(compat, name) is not None, (
            f"{name} missing in langgraph {version('langgraph')}"
        )
    assert callable(compat.pg_connections.get_connection)
    assert callable(compat.pg_async_connections.get_connection)
