"""The embedding of the store index that langgraph.json configures: an offline placeholder
(memory_plugin.embeddings), so `langgraph dev` starts with a semantic index and no network.
Real deployments replace `"embed"` and `"dims"` in langgraph.json with a provider embedding,
for example `"embed": "openai:text-embedding-3-small"` with `"dims": 1536`."""

from memory_plugin.embeddings import DIMS, hashed_trigrams

embed = hashed_trigrams

__all__ = ["DIMS", "embed"]
