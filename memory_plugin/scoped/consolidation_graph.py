"""Nightly consolidation as a LangGraph graph, for LangGraph Server cron jobs."""

from __future__ import annotations

import os
from dataclasses import asdict
from typing import Any, TypedDict

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableLambda
from langgraph.config import get_store
from langgraph.graph import END, START, StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.store.base import BaseStore

from memory_plugin.models import resolve_model
from memory_plugin.scoped.consolidation import ConsolidationReport, aconsolidate, consolidate
from memory_plugin.settings.env import env_var

MAINTENANCE_ENV = env_var("maintenance_model")


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


def default_model() -> BaseChatModel:
    """The model $MEMORY_MAINTENANCE_MODEL names, else $MEMORY_MODEL's."""
    return resolve_model(os.environ.get(MAINTENANCE_ENV) or None)


def build_consolidation_graph(
    model: BaseChatModel | None = None, *, store: BaseStore | None = None
) -> CompiledStateGraph[Any]:
    """A one-node graph that consolidates its store (under LangGraph Server, the server's);
    the model defaults to $MEMORY_MAINTENANCE_MODEL, else $MEMORY_MODEL, read when the run
    starts."""

    def run_sync(state: ConsolidationState) -> ConsolidationState:
        return _output(consolidate(get_store(), model or default_model()))

    async def run_async(state: ConsolidationState) -> ConsolidationState:
        return _output(await aconsolidate(get_store(), model or default_model()))

    builder = StateGraph(ConsolidationState)
    builder.add_node("consolidate_notes", RunnableLambda(run_sync, run_async))
    builder.add_edge(START, "consolidate_notes")
    builder.add_edge("consolidate_notes", END)
    return builder.compile(store=store, name="memory_consolidation")
