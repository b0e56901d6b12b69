"""Chat models that fail the way a real provider does, for the chatbot's error handling
(loaded by `memory-plugin chat --model tests.chat_models:flaky_model`)."""

from __future__ import annotations

from typing import Any

import httpx
import openai
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from memory_plugin.offline.chat import SYSTEM_PROMPT
from memory_plugin.offline.demo import DemoModel

REQUEST = httpx.Request("POST", "https://api.example.com/v1/chat/completions")


def provider_error(kind: str) -> BaseException:
    """The exception an OpenAI client raises for `kind` (Ctrl-C: the one Python raises)."""
    if kind == "connection":
        return openai.APIConnectionError(request=REQUEST)
    if kind == "timeout":
        return openai.APITimeoutError(request=REQUEST)
    if kind == "rate limit":
        response = httpx.Response(429, request=REQUEST)
        return openai.RateLimitError(
            "Rate limit reached for gpt-4o-mini", response=response, body=None
        )
    if kind == "ctrl-c":
        return KeyboardInterrupt()
    return ValueError(f"unexpected {kind}")


class FlakyModel(DemoModel):
    """Echoes each message (the user's words, after what memory told it) with how many of
    the user's messages it was shown. "fail with
    <kind>" raises that provider error; "note then fail" stores a note with the remember
    tool, then fails on the tool's result. Memory's own prompts get the demo model's
    rule-based answers."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if not str(messages[0].content).startswith(SYSTEM_PROMPT):
            return super()._generate(messages, *args, **kwargs)
        last = messages[-1]
        if isinstance(last, ToolMessage):
            raise provider_error("connection")
        text = last.text if isinstance(last, HumanMessage) else ""
        text = text.rpartition("</memory_update>\n\n")[2]  # what memory told it, then the user
        if text.startswith("fail with "):
            raise provider_error(text.removeprefix("fail with "))
        if text == "note then fail":
            call = {"name": "remember", "args": {"text": "Half a turn"}, "id": "flaky-1"}
            reply = AIMessage("", tool_calls=[call])
        else:
            said = sum(isinstance(m, HumanMessage) for m in messages[1:])
            reply = AIMessage(f"echo: {text} ({said} of your messages in view)")
        return ChatResult(generations=[ChatGeneration(message=reply)])


def flaky_model() -> FlakyModel:
    """A fresh FlakyModel."""
    return FlakyModel()
