"""The prebuilt memory agent, served by langgraph.json to LangGraph Studio (`langgraph dev`).

The chat model comes from $MEMORY_MODEL (see `memory_plugin.models.resolve_model`):
`openai:gpt-4o-mini` for a provider model, `package.module:name` for a model object or a
function returning one. With MEMORY_MODEL unset the graph uses the built-in offline model
(`memory_plugin.offline.OfflineModel`, also `memory_plugin.offline.demo:studio_model`), with
a logged warning, so Studio opens offline with no key: it stores "remember that ..." as a
note and answers questions from memory. A MEMORY_MODEL that cannot be loaded fails the import with
the reason.

No checkpointer or store here: the server provides both (the store's semantic index is
configured in langgraph.json). langgraph.json also loads graphs/auth.py, so clients send
`Authorization: Bearer <token>` and the token's user owns the run's memory; the run's
`context` adds the rest (`{"workspace_id": "acme", "thread_visibility": "shared"}`).
"""

from __future__ import annotations

from memory_plugin.offline.default import default_model
from memory_plugin.prebuilt.graph import create_memory_graph

SYSTEM_PROMPT = (
    "You are a helpful assistant. Save lasting facts about the user and their work with the "
    "memory tools, and use the memory shown to you when you answer."
)

graph = create_memory_graph(default_model(), system_prompt=SYSTEM_PROMPT)
