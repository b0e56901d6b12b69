"""The running token count of a thread's messages, kept in state so a turn counts only what
is new. Anything that rewrote earlier messages (seen as a changed length or last id) makes
one full recount."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.messages import BaseMessage

from memory_plugin.tokens import TokenCounter


def tally(
    messages: Sequence[BaseMessage], info: dict[str, Any], counter: TokenCounter
) -> tuple[dict[str, Any], bool]:
    """The state keys recording the token count of `messages` (`tokens`, `counted_*`), and
    whether earlier messages changed since the last count."""
    counted = int(info.get("counted_len", 0))
    total = info.get("tokens")
    if total is not None and (
        counted == 0
        or (counted <= len(messages) and messages[counted - 1].id == info.get("counted_last_id"))
    ):
        total += counter.count(messages[counted:])
        rewritten = False
    else:
        rewritten = total is not None
        total = counter.count(messages)
    return count_keys(messages, int(total)), rewritten


def count_keys(messages: Sequence[BaseMessage], tokens: int) -> dict[str, Any]:
    """The state keys recording that `messages` hold `tokens` tokens."""
    return {
        "tokens": tokens,
        "counted_len": len(messages),
        "counted_last_id": messages[-1].id if messages else None,
    }
