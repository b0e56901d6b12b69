"""A provider call the test holds: it blocks until the test lets it go and counts the calls
that came back. A call under a timeout that returned while `answered` was still 0 did not
wait for the model, whatever the machine's speed (no elapsed-time bound needed)."""

from __future__ import annotations

import threading
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

HOLD_SECONDS = 120.0
"""The longest a held call blocks when the test never lets it go (a hung provider)."""


class Hold:
    """Held calls: `entered` and `answered` count them in and out; `release` lets them go."""

    def __init__(self) -> None:
        self.release = threading.Event()
        self.entered = 0
        self.answered = 0
        self._lock = threading.Lock()

    def wait(self) -> None:
        """Block as a hung provider does, until released."""
        with self._lock:
            self.entered += 1
        self.release.wait(HOLD_SECONDS)
        with self._lock:
            self.answered += 1


class HeldModel(BaseChatModel):
    """A chat model whose every call is held on `hold`, then answers `answer`."""

    answer: str = "[1]"
    hold: Any = Field(default_factory=Hold)

    @property
    def _llm_type(self) -> str:
        return "held"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.hold.wait()
        return ChatResult(generations=[ChatGeneration(message=AIMessage(self.answer))])
