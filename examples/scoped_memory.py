"""Recipe: scope-aware memory in your own StateGraph on the embedded SQLite default.

Run twice and the visit counts survive: python examples/scoped_memory.py
"""

from __future__ import annotations

import sys
from typing import TypedDict

from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph

import memory_plugin
from memory_plugin import MemoryContext, current_context, thread_scope


class State(TypedDict, total=False):
    visits: int


def count_visit(state: State) -> State:
    """Count this run in the memory scope the run's context selects."""
    ctx = current_context()
    namespace = thread_scope(ctx).namespace
    store = get_store()
    item = store.get(namespace, "visits")
    visits = (item.value["n"] if item else 0) + 1
    store.put(namespace, "visits", {"n": visits}, index=False)
    return {"visits": visits}


def build(backend: memory_plugin.Backend):  # type: ignore[no-untyped-def]
    """Compile the graph with the backend's store and checkpointer."""
    builder = StateGraph(State, context_schema=MemoryContext)
    builder.add_node("count_visit", count_visit)
    builder.add_edge(START, "count_visit")
    builder.add_edge("count_visit", END)
    return builder.compile(store=backend.store, checkpointer=backend.checkpointer)


def main(url: str | None = None) -> None:
    """Run the graph for a private and a shared thread and print the counts."""
    with memory_plugin.connect(url) as backend:
        graph = build(backend)
        runs = [
            ("ann, private", {"user_id": "ann", "workspace_id": "acme"}),
            (
                "ann, team",
                {"user_id": "ann", "workspace_id": "acme", "thread_visibility": "shared"},
            ),
            (
                "bob, team",
                {"user_id": "bob", "workspace_id": "acme", "thread_visibility": "shared"},
            ),
        ]
        for label, context in runs:
            config = {"configurable": {"thread_id": label}}
            result = graph.invoke({}, config, context=context)
            print(f"{label}: visit {result['visits']}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else None)
