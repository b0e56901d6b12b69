"""What the model is asked when a thread is compacted."""

from __future__ import annotations

import json
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

TOOL_RESULT_CHARS = 2_000
"""How much of a tool result a summary or flush note reads: the whole output stays in the
thread's journal, where journal_tool_call_view finds it."""
CUT = " …"

SUMMARY_SYSTEM = """You keep the running summary of a long conversation between a user and \
an assistant, so the conversation can go on after its older messages are removed. Update the \
previous summary with the messages below. Keep the user's goals, decisions, constraints, \
facts, names, numbers, file paths, what tools found that still matters, and every open \
question or unfinished task; drop small talk and details that were superseded. Write compact \
Markdown. Reply with the updated summary only."""

FLUSH_SYSTEM = """The conversation below is about to be summarized to free up context. Write \
one short note for long-term memory, at most {limit} characters on one line: what the \
conversation is about and its open threads, so they can be picked up later. Reply with the \
note only, no heading, no list."""


def message_text(message: BaseMessage) -> str:
    """A message's text: its content when that is a string (without the copy `.text` makes,
    which adds up on long threads), else the text of its content blocks."""
    content = message.content
    return content if isinstance(content, str) else str(message.text)


_last_rendered: tuple[tuple[BaseMessage, ...], int | None, str] = ((), None, "")


def render_transcript(messages: Sequence[BaseMessage], budget: int | None = None) -> str:
    """Messages as plain text lines for a summarizer, long tool results shortened and, past
    `budget` characters in all, the longest texts cut to one length (each keeps its start).
    The last rendering is kept (with its messages, so they are the same objects): a
    compaction renders the messages for its summary before its flush note starts, which
    finds them rendered."""
    global _last_rendered
    seen, seen_budget, text = _last_rendered
    if (
        seen_budget == budget
        and len(seen) == len(messages)
        and all(a is b for a, b in zip(seen, messages, strict=True))
    ):
        return text
    parts = _parts(messages)
    cap = None if budget is None else fair_cap([len(body) for _, body in parts], budget)
    text = "\n".join(head + _cut(body, cap) for head, body in parts)
    _last_rendered = (tuple(messages), budget, text)
    return text


def fair_cap(lengths: Sequence[int], budget: int) -> int | None:
    """The largest length that, cutting every longer text to it, brings the lengths' sum to at
    most `budget`; None when they fit as they are."""
    if sum(lengths) <= budget:
        return None
    left = budget
    ordered = sorted(lengths)
    for i, length in enumerate(ordered):
        share = left // (len(ordered) - i)
        if length > share:
            return share
        left -= length
    return None


def _cut(text: str, cap: int | None) -> str:
    return text if cap is None or len(text) <= cap else text[:cap] + CUT


def _parts(messages: Sequence[BaseMessage]) -> list[tuple[str, str]]:
    """Each line of the transcript as its head and the text a budget may cut."""
    parts = []
    for message in messages:
        if isinstance(message, HumanMessage):
            parts.append(("User: ", message_text(message)))
        elif isinstance(message, AIMessage):
            if text := message_text(message):
                parts.append(("Assistant: ", text))
            for call in message.tool_calls:
                args = json.dumps(call["args"], default=str)
                parts.append((f"Assistant called {call['name']}", f"({args})"))
        elif isinstance(message, ToolMessage):
            text = _cut(message_text(message), TOOL_RESULT_CHARS)
            parts.append((f"Result of {message.name or 'tool'}: ", text))
        else:
            parts.append((f"{message.type}: ", message_text(message)))
    return parts


def summary_messages(
    previous: str, messages: Sequence[BaseMessage], budget: int | None = None
) -> list[BaseMessage]:
    """Ask for the running summary updated with these messages (`render_transcript`)."""
    return [
        SystemMessage(SUMMARY_SYSTEM),
        HumanMessage(
            f"<previous_summary>\n{previous or '(none yet)'}\n</previous_summary>\n\n"
            f"<messages>\n{render_transcript(messages, budget)}\n</messages>"
        ),
    ]


def flush_messages(
    messages: Sequence[BaseMessage], limit: int, budget: int | None = None
) -> list[BaseMessage]:
    """Ask for one short note capturing the conversation before it is compacted."""
    return [
        SystemMessage(FLUSH_SYSTEM.format(limit=limit)),
        HumanMessage(f"<messages>\n{render_transcript(messages, budget)}\n</messages>"),
    ]
