"""Nightly consolidation (memory_plugin.scoped.consolidation) as a LangGraph graph, for
LangGraph Server cron jobs."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableLambda
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from memory_plugin.offline.default import default_model
from memory_plugin.safety.staged import prepare_screen
from memory_plugin.scoped.consolidation import ConsolidationReport, aconsolidate, consolidate


class ConsolidationState(TypedDict, total=False):
    """The run's output: a summary line, the run log's id for it (None when it could not be
    recorded) and one entry per scope processed."""

    summary: str
    run_id: str | None
    folded: int
    failed: int
    scopes: list[dict[str, Any]]


def _output(report: ConsolidationReport) -> ConsolidationState:
    return {
        "summary": report.summary(),
        "run_id": report.run.id if report.run else None,
        "folded": report.folded,
        "failed": len(report.failed),
        "scopes": [asdict(result) for result in report.scopes],
    }


def build_consolidation_graph(
    model: BaseChatModel | None = None, *, store: BaseStore | None = None
) -> CompiledStateGraph[Any]:
    """A one-node graph that consolidates its store (under LangGraph Server, the server's);
    the model defaults to $MEMORY_MAINTENANCE_MODEL, else $MEMORY_MODEL, else the built-in
    offline model with a logged warning, read when the run starts. A damaged classifier file
    raises ModelFileError here, not in the first run."""
    prepare_screen()

    def run_sync(state: ConsolidationState) -> ConsolidationState:
        chosen = model or default_model(maintenance=True)
        return _output(consolidate(get_store(), chosen))

    async def run_async(state: ConsolidationState) -> ConsolidationState:
        chosen = model or default_model(maintenance=True)
        return _output(await aconsolidate(get_store(), chosen))

    builder = StateGraph(ConsolidationState)
    builder.add_node("consolidate_notes", RunnableLambda(run_sync, run_async))
    builder.add_edge(START, "consolidate_notes")
    builder.add_edge("consolidate_notes", END)
    return builder.compile(store=store, name="memory_consolidation")
