"""One token counter for every node: approximate by default, model-aware when possible, and
incremental: per-message counts are cached by message id, so a turn counts only new messages."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.messages.utils import count_tokens_approximately

logger = logging.getLogger(__name__)

FALLBACK_WINDOW = 200_000
PER_MESSAGE_OVERHEAD = 3
ENCODING_LOAD_SECONDS = 5.0
Encoder = Callable[[str], int]


def _text_of(message: BaseMessage) -> str:
    if isinstance(message.content, str):
        text = message.content
    else:
        text = "".join(
            block if isinstance(block, str) else str(block.get("text", block))
            for block in message.content
        )
    if isinstance(message, AIMessage) and message.tool_calls:
        text += repr(message.tool_calls)
    return text


def _fingerprint(message: BaseMessage) -> tuple[Any, ...]:
    content = message.content
    size = len(content) if isinstance(content, str) else len(repr(content))
    calls = len(message.tool_calls) if isinstance(message, AIMessage) else 0
    return (message.id, message.type, size, calls)


class TokenCounter:
    """Counts message tokens, caching each message's count under its id and shape."""

    def __init__(
        self, encode: Encoder | None = None, *, name: str = "approximate", max_cached: int = 100_000
    ) -> None:
        self.encode = encode
        self.name = name
        self.max_cached = max_cached
        self._cache: dict[tuple[Any, ...], int] = {}
        self._lock = threading.Lock()
        self.computed = 0

    def _compute(self, message: BaseMessage) -> int:
        self.computed += 1
        if self.encode is None:
            return count_tokens_approximately([message])
        return self.encode(_text_of(message)) + PER_MESSAGE_OVERHEAD

    def count_message(self, message: BaseMessage) -> int:
        """Tokens in one message, from the cache when this message was counted before."""
        if message.id is None:
            return self._compute(message)
        key = _fingerprint(message)
        cached = self._cache.get(key)
        if cached is not None:
            return cached
        tokens = self._compute(message)
        with self._lock:
            if len(self._cache) >= self.max_cached:
                for old in list(self._cache)[: self.max_cached // 2]:
                    del self._cache[old]
            self._cache[key] = tokens
        return tokens

    def count(self, messages: Iterable[BaseMessage]) -> int:
        """Tokens in a list of messages."""
        return sum(self.count_message(m) for m in messages)

    def count_text(self, text: str) -> int:
        """Tokens in a plain string."""
        if self.encode is None:
            return -(-len(text) // 4)
        return self.encode(text)


def model_name(model: Any) -> str | None:
    """The model's name as its integration reports it, if any."""
    for attr in ("model_name", "model", "model_id"):
        value = getattr(model, attr, None)
        if isinstance(value, str) and value:
            return value
    return model if isinstance(model, str) else None


def _tiktoken_encoder(name: str) -> Encoder | None:
    """tiktoken's encoding for the model, loaded (and downloaded on first use, which on a
    network that never answers would wait forever) within ENCODING_LOAD_SECONDS."""
    loaded: list[Any] = []

    def load() -> None:
        try:
            import tiktoken

            loaded.append(tiktoken.encoding_for_model(name))
        except Exception as exc:  # offline, unknown model, or tiktoken missing
            loaded.append(exc)

    worker = threading.Thread(target=load, name=f"tiktoken-{name}", daemon=True)
    worker.start()
    worker.join(ENCODING_LOAD_SECONDS)
    found = loaded[0] if loaded else TimeoutError(f"not loaded in {ENCODING_LOAD_SECONDS:g} s")
    if isinstance(found, Exception):
        logger.info("token counting for %s falls back to the approximate counter: %s", name, found)
        return None
    encoding = found
    return lambda text: len(encoding.encode(text, disallowed_special=()))


_counters: dict[str, TokenCounter] = {}
_counters_lock = threading.Lock()


def counter_for(model: Any = None) -> TokenCounter:
    """The shared counter for a model (or model name): tiktoken when it loads, else approximate."""
    name = model_name(model) or "approximate"
    with _counters_lock:
        counter = _counters.get(name)
        if counter is None:
            encode = _tiktoken_encoder(name) if name != "approximate" else None
            counter = TokenCounter(encode, name=name if encode else "approximate")
            _counters[name] = counter
        return counter


def context_window(model: Any, fallback: int = FALLBACK_WINDOW) -> int:
    """The model's input window from its profile (`max_input_tokens`), else the fallback."""
    profile = getattr(model, "profile", None) or {}
    window = profile.get("max_input_tokens") if isinstance(profile, dict) else None
    return int(window) if isinstance(window, int) and window > 0 else fallback


def reports_window(model: Any) -> bool:
    """Whether the model reports its own input window."""
    return context_window(model, fallback=0) > 0
