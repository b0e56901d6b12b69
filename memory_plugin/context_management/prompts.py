"""What the model is asked when a thread is compacted."""

from __future__ import annotations

import json
from collections.abc import Sequence

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

TOOL_RESULT_CHARS = 2_000
"""How much of a tool result a summary or flush note reads: the whole output stays in the
thread's journal, where journal_tool_call_view finds it."""

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


_last_rendered: tuple[tuple[BaseMessage, ...], str] = ((), "")


def render_transcript(messages: Sequence[BaseMessage]) -> str:
    """Messages as plain text lines for a summarizer, long tool results shortened. The last
    rendering is kept (with its messages, so they are the same objects): a compaction renders
    the messages for its summary before its flush note starts, which finds them rendered."""
    global _last_rendered
    seen, text = _last_rendered
    if len(seen) == len(messages) and all(a is b for a, b in zip(seen, messages, strict=True)):
        return text
    text = _render(messages)
    _last_rendered = (tuple(messages), text)
    return text


def _render(messages: Sequence[BaseMessage]) -> str:
    lines = []
    for message in messages:
        if isinstance(message, HumanMessage):
            lines.append(f"User: {message_text(message)}")
        elif isinstance(message, AIMessage):
            if text := message_text(message):
                lines.append(f"Assistant: {text}")
            for call in message.tool_calls:
                args = json.dumps(call["args"], default=str)
                lines.append(f"Assistant called {call['name']}({args})")
        elif isinstance(message, ToolMessage):
            text = message_text(message)
            if len(text) > TOOL_RESULT_CHARS:
                text = text[:TOOL_RESULT_CHARS] + " …"
            lines.append(f"Result of {message.name or 'tool'}: {text}")
        else:
            lines.append(f"{message.type}: {message_text(message)}")
    return "\n".join(lines)


def summary_messages(previous: str, messages: Sequence[BaseMessage]) -> list[BaseMessage]:
    """Ask for the running summary updated with these messages."""
    return [
        SystemMessage(SUMMARY_SYSTEM),
        HumanMessage(
            f"<previous_summary>\n{previous or '(none yet)'}\n</previous_summary>\n\n"
            f"<messages>\n{render_transcript(messages)}\n</messages>"
        ),
    ]


def flush_messages(messages: Sequence[BaseMessage], limit: int) -> list[BaseMessage]:
    """Ask for one short note capturing the conversation before it is compacted."""
    return [
        SystemMessage(FLUSH_SYSTEM.format(limit=limit)),
        HumanMessage(f"<messages>\n{render_transcript(messages)}\n</messages>"),
    ]
