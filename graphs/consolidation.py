"""Nightly consolidation, served by langgraph.json for LangGraph Server cron jobs.

The job reaches every scope of the server's store, so a run is refused to an authenticated
user who is neither an operator nor LangGraph Studio; runs with no authenticated user (a
server without auth) proceed. Operators are the identities with `"operator": true` in the
token file of graphs/auth.py ($MEMORY_AUTH_TOKENS): a cron run carries only the identity of
the operator who created the cron.
"""

import json
import os
from pathlib import Path
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph import END, START, StateGraph
from langgraph_sdk import Auth

from memory_plugin.prebuilt.consolidation_graph import (
    ConsolidationState,
    build_consolidation_graph,
)
from memory_plugin.scope.identity import user_field

AUTH_USER_KEY = "langgraph_auth_user"
TOKENS_ENV = "MEMORY_AUTH_TOKENS"


def operator_identities() -> set[str]:
    """The identities of the operator tokens in $MEMORY_AUTH_TOKENS (none without the file)."""
    path = os.environ.get(TOKENS_ENV)
    if not path:
        return set()
    table = json.loads(Path(path).read_text())
    return {user["identity"] for user in table.values() if user.get("operator") is True}


def operators_only(state: ConsolidationState, config: RunnableConfig) -> dict[str, Any]:
    """Refuse the run unless its authenticated user (if any) is an operator or Studio."""
    user = (config.get("configurable") or {}).get(AUTH_USER_KEY)
    studio = isinstance(user, Auth.types.StudioUser) or user_field(user, "kind") == "StudioUser"
    if user is None or studio:
        return {}
    if (
        user_field(user, "operator") is True
        or user_field(user, "identity") in operator_identities()
    ):
        return {}
    raise PermissionError(
        f"user {user_field(user, 'identity')!r} is not an operator: "
        "only operators run memory_consolidation"
    )


builder = StateGraph(ConsolidationState)
builder.add_node("operators_only", operators_only)
builder.add_node("consolidate", build_consolidation_graph())
builder.add_edge(START, "operators_only")
builder.add_edge("operators_only", "consolidate")
builder.add_edge("consolidate", END)
graph = builder.compile(name="memory_consolidation")
