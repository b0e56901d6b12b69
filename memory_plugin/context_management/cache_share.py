"""A compaction's summary request that starts with the agent's last request, so the provider
serves what it summarizes from its prompt cache.

The prebuilt graph's agent step records each thread's last request (the bound model and the
messages sent) and, while it opens the next call, offers the compaction a view of it
(`agent_view`). The compaction repeats that request, byte for byte, followed by one
instruction (`SUMMARY_REQUEST`), when the request the agent would be sent now still starts
with it, the last call is within `prompt_cache_seconds`, the summary is written by the
agent's own model (no maintenance model), and at the `prompt_cache_read_ratio` price that
bills less than a transcript of what the summary covers. Otherwise it sends the transcript.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.runnables import Runnable

from memory_plugin.context_management.prompts import message_text

SUMMARY_REQUEST = "summary_request"
INSTRUCTION = """<{tag}>
The conversation above is about to be compacted: the messages before the one quoted below \
will be removed and replaced by a running summary (the previous one, if any, is the \
conversation summary in the system message). Write the updated summary now: keep the user's \
goals, decisions, constraints, facts, names, numbers, file paths, what tools found that \
still matters, and every open question or unfinished task; drop small talk and details that \
were superseded. The quoted message and everything after it stay in the conversation as \
they are. Do not call any tool. Reply with the updated summary only, in compact Markdown.
First message kept: {kept}
</{tag}>"""
QUOTE_CHARS = 200


@dataclass(frozen=True)
class LastRequest:
    """What the agent's model was last sent in a thread: the bound model, the messages, and
    when (time.monotonic())."""

    model: Runnable[Any, Any]
    messages: tuple[BaseMessage, ...]
    at: float


class LastRequests:
    """Each thread's last agent request in this process, for the `limit` threads called most
    recently (each holds its thread's messages until the thread's next call)."""

    def __init__(self, limit: int = 64) -> None:
        self.limit = limit
        self._requests: OrderedDict[str, LastRequest] = OrderedDict()
        self._lock = threading.Lock()

    def record(
        self, thread_id: str, model: Runnable[Any, Any], messages: Sequence[BaseMessage]
    ) -> None:
        """Remember a request just sent."""
        with self._lock:
            self._requests[thread_id] = LastRequest(model, tuple(messages), time.monotonic())
            self._requests.move_to_end(thread_id)
            while len(self._requests) > self.limit:
                self._requests.popitem(last=False)

    def get(self, thread_id: str) -> LastRequest | None:
        """The thread's last request, None when this process sent none."""
        with self._lock:
            return self._requests.get(thread_id)


Render = Callable[[list[BaseMessage], dict[str, Any]], list[BaseMessage]]
"""The request the agent would be sent for these messages and memory_context."""


@dataclass(frozen=True)
class AgentView:
    """The thread's last agent request, and how the next one is assembled."""

    last: LastRequest
    render: Render


_view: ContextVar[AgentView | None] = ContextVar("memory_plugin_agent_view", default=None)


@contextmanager
def agent_view(view: AgentView | None) -> Iterator[None]:
    """Offer the compactions run inside this block the agent's last request."""
    token = _view.set(view)
    try:
        yield
    finally:
        _view.reset(token)


def summary_instruction(kept: BaseMessage | None) -> HumanMessage:
    """The instruction that follows the repeated request."""
    text = " ".join(message_text(kept).split()) if kept is not None else ""
    quote = text[:QUOTE_CHARS] + (" …" if len(text) > QUOTE_CHARS else "")
    shown = f"{kept.type} message «{quote}»" if kept is not None else "(none)"
    return HumanMessage(INSTRUCTION.format(tag=SUMMARY_REQUEST, kept=shown))


def cached_summary_request(
    messages: list[BaseMessage], info: dict[str, Any], kept: BaseMessage | None, ttl: float
) -> tuple[Runnable[Any, Any], list[BaseMessage]] | None:
    """The agent's model and a summary request that starts with its last request, when one
    was offered, is at most `ttl` seconds old, and the request for these messages and
    memory_context starts with it; else None."""
    view = _view.get()
    if view is None or time.monotonic() - view.last.at > ttl:
        return None
    current = view.render(messages, info)
    previous = view.last.messages
    if len(previous) > len(current) or any(
        a is not b and a != b for a, b in zip(previous, current, strict=False)
    ):
        return None
    return view.last.model, [*current, summary_instruction(kept)]
