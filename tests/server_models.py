"""Chat models the server tests load in `langgraph dev` through MEMORY_MODEL (path:name)."""

from __future__ import annotations

from langchain_core.messages import AIMessage

from memory_plugin.offline.demo import DemoModel

TEAM_FACT = "Release freeze starts Friday"
TEAM_DOCUMENT = "# Team acme\n\n- The release freeze starts Friday."


def team_model() -> DemoModel:
    """Each run: save the team document and a note with the memory tools, then answer."""
    calls = [
        {"name": "update_memory", "args": {"content": TEAM_DOCUMENT}, "id": "team-doc"},
        {"name": "remember", "args": {"text": TEAM_FACT}, "id": "team-note"},
    ]
    return DemoModel(
        script=[AIMessage("", tool_calls=calls), AIMessage("Saved for the team.")], repeat=True
    )
