"""The operator console: REST over every memory kind, and its web page (extra `server`)."""

from memory_plugin.server.access import Caller
from memory_plugin.server.app import create_app
from memory_plugin.server.schemas import MemoryWrite
from memory_plugin.server.tokens import TOKENS_ENV, load_tokens

__all__ = ["TOKENS_ENV", "Caller", "MemoryWrite", "create_app", "load_tokens"]
