"""REST for operators: a small FastAPI app over the bounded entries (extra `server`)."""

from memory_plugin.server.app import MemoryWrite, create_app
from memory_plugin.server.tokens import TOKENS_ENV, load_tokens

__all__ = ["TOKENS_ENV", "MemoryWrite", "create_app", "load_tokens"]
