"""The embedding of the store index that langgraph.json configures: all-MiniLM-L6-v2 when
the `local` extra is installed (offline, bundled weights), else the hashed-trigram
placeholder, both 384-dimensional, so `langgraph dev` starts with a semantic index and no
network. Real deployments may replace `"embed"` and `"dims"` in langgraph.json with a
provider embedding, for example `"embed": "openai:text-embedding-3-small"` with `"dims": 1536`."""

from memory_plugin.offline.local_embeddings import LOCAL_DIMS, default_index

embed = default_index()["embed"]
DIMS = LOCAL_DIMS

__all__ = ["DIMS", "embed"]
