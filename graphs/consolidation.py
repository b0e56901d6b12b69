"""Nightly consolidation, served by langgraph.json for LangGraph Server cron jobs."""

from memory_plugin.scoped.consolidation_graph import build_consolidation_graph

graph = build_consolidation_graph()
