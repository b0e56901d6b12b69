"""A small built-in offline chat model for trying memory with no key and no network.

`OfflineModel` is a real LangChain chat model (`bind_tools`, invoke and ainvoke) that follows
simple, deterministic rules, and says so. It uses the memory tools the way a model would:
"remember that ...", "note that ..." and facts like "my dog is called Rex" call `remember`; a
question calls `recall` with its key words and is answered from the notes found and the memory
shown in its system prompt (the curated document, the recent notes, the user profile, the
conversation summary), each fact once; when none of them holds all the question's words, from
the best note recall found (recall ranks by meaning too), said to be that; "what do you know
about me" lists the profile and the notes; "fetch <url>" calls a bound fetch tool. It answers
memory's own prompts (summaries, flush notes, profile consolidation, compression, nightly
consolidation) too, see `offline_upkeep`. Its profile reports a small context window (8,000
tokens), so tool-output masking and compaction happen within a short chat.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.language_models.model_profile import ModelProfile
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from memory_plugin.context_management.updates import TAG as UPDATE_TAG
from memory_plugin.offline.text import (
    as_told,
    asks_about_me,
    key_words,
    overlap,
    question_of,
    repeats,
    second_person,
    sentences,
    shortened,
    stated_facts,
)
from memory_plugin.offline.upkeep import (
    said,
    summarize_request,
    summary_requested,
    upkeep_answer,
)
from memory_plugin.text import search_terms

WINDOW = 8_000
LONG_TEXT = 1_500
ANSWER_LINES = 3
ABOUT = (
    "I'm the built-in offline model: a few rules, no network, not an LLM. I can remember "
    'facts ("remember that my dog is called Rex"), answer questions from memory ("what is my '
    'dog called?") and tell you what I know about you. Set MEMORY_MODEL (for example '
    "openai:gpt-4o-mini) for a real model."
)
_URL = re.compile(r"\bfetch\s+(\S+://\S+|www\.\S+)", re.I)
_FORGET = re.compile(r"^\W*(?:please\s+)?forget\b", re.I)
_GREETING = re.compile(r"^\W*(hi|hello|hey|good (morning|afternoon|evening))\b", re.I)
_NOTE_LINE = re.compile(r"^- \[(\d{4}-\d{2}-\d{2})\] (.*)$")
_FAILED = ("Memory not changed", "Memory is unavailable", "Error")
_PROFILE_SKIP = frozenset({"Recent Topics"})


def _text(message: BaseMessage) -> str:
    return message.text if isinstance(message.text, str) else str(message.content)


def _told(text: str) -> tuple[str, str]:
    """A user message split into what memory told in front of it (context_management/updates.py) and
    the user's own words."""
    told, mark, said = text.partition(f"</{UPDATE_TAG}>\n\n")
    return (told, said) if mark else ("", text)


def _tool_names(tools: Sequence[dict[str, Any]]) -> list[str]:
    return [str(tool.get("function", {}).get("name", "")) for tool in tools]


def _call_id(messages: Sequence[BaseMessage], name: str, n: int) -> str:
    seen = "\x1f".join(f"{m.type}:{_text(m)}" for m in messages)
    return "call_" + hashlib.sha256(f"{seen}\x1e{name}\x1e{n}".encode()).hexdigest()[:16]


def _profile_bullets(system: str) -> list[str]:
    """The profile block's bullets, Recent Topics left out."""
    bullets, section = [], ""
    for line in said(system, "user_memory").splitlines():
        if line.startswith("## "):
            section = line[3:].strip()
        elif line.startswith("- ") and section not in _PROFILE_SKIP:
            bullets.append(line[2:].strip())
    return bullets


def _notes(text: str) -> list[str]:
    """Dated note lines as spoken to the user ("Your dog is called Rex (noted 2026-11-30).")."""
    spoken = []
    for line in text.splitlines():
        found = _NOTE_LINE.match(line.strip())
        if found:
            spoken.append(f"{second_person(found.group(2))[:-1]} (noted {found.group(1)}).")
    return spoken


def _document_lines(system: str) -> list[str]:
    document = said(system, "memory_document")
    return [
        second_person(line.lstrip("-*+ ").strip())
        for line in document.splitlines()
        if line.strip() and not line.startswith(("#", "(")) and line.strip() != "(empty)"
    ]


def _summary_lines(system: str) -> list[str]:
    """The summary's lines about what the user said and what was noted, told to the user."""
    lines = []
    for line in said(system, "conversation_summary").splitlines():
        kind, _, text = line.lstrip("- ").partition(": ")
        if kind.startswith("The user") and not text.endswith("?"):
            lines.append(as_told(text))
        elif kind == "Noted to memory":
            lines.append(second_person(text))
    return lines


def _last_said(system: str) -> str:
    """What the user said last according to the summary (compaction can summarize the
    current turn's own message away between two tool steps)."""
    said_lines = [
        line.partition(": ")[2]
        for line in said(system, "conversation_summary").splitlines()
        if line.startswith("- The user said: ")
    ]
    return said_lines[-1] if said_lines else ""


class _Turn:
    """One agent step: what the user said last and what happened since."""

    def __init__(self, messages: Sequence[BaseMessage], tools: list[str]) -> None:
        self.messages = list(messages)
        self.tools = tools
        first = self.messages[0] if self.messages else None
        self.system = _text(first) if isinstance(first, SystemMessage) else ""
        human = max(
            (i for i, m in enumerate(self.messages) if isinstance(m, HumanMessage)), default=-1
        )
        start = 1 if self.system else 0
        told = [_told(_text(m)) for m in self.messages if isinstance(m, HumanMessage)]
        newest = [memory for memory, _ in reversed(told) if memory]
        self.system = "\n".join([*newest, self.system])
        said = told[-1][1] if told else ""
        self.user = said if human >= 0 else _last_said(self.system)
        self.before = self.messages[start : max(human, start)]
        after = self.messages[human + 1 :] if human >= 0 else self.messages[start:]
        self.called = {c["name"] for m in after if isinstance(m, AIMessage) for c in m.tool_calls}
        self.results = [m for m in after if isinstance(m, ToolMessage)]

    def result(self, name: str) -> list[str]:
        return [_text(m) for m in self.results if m.name == name]

    def fetch_tool(self) -> str | None:
        return next((name for name in self.tools if "fetch" in name.lower()), None)


def _calls(turn: _Turn) -> list[ToolCall]:
    """The tool calls this step makes, each tool at most once per user message."""
    if len(turn.user) > LONG_TEXT:
        return []
    wanted: list[tuple[str, dict[str, Any]]] = []
    url = _URL.search(turn.user)
    fetch = turn.fetch_tool()
    if url and fetch and fetch not in turn.called:
        wanted.append((fetch, {"url": url.group(1).rstrip(".,;!?)")}))
    if "remember" in turn.tools and "remember" not in turn.called:
        wanted += [("remember", {"text": fact}) for fact in stated_facts(turn.user)]
    question = question_of(turn.user)
    words = key_words(question)
    if (
        question
        and words
        and not asks_about_me(turn.user)
        and "recall" in turn.tools
        and "recall" not in turn.called
    ):
        wanted.append(("recall", {"query": " ".join(words)}))
    return [
        ToolCall(name=name, args=args, id=_call_id(turn.messages, name, n), type="tool_call")
        for n, (name, args) in enumerate(wanted)
    ]


def _about_me(turn: _Turn) -> str:
    profile = _profile_bullets(turn.system)
    notes = _notes(said(turn.system, "recent_memory_notes"))
    document = _document_lines(turn.system)
    if not (profile or notes or document):
        return (
            "I don't know anything about you yet. Tell me something, for example "
            '"remember that my dog is called Rex".'
        )
    parts = []
    if profile:
        parts.append("From your profile:\n" + "\n".join(f"- {b}" for b in profile))
    if notes:
        parts.append("From my recent notes:\n" + "\n".join(f"- {n}" for n in notes))
    if document:
        parts.append("From the memory document:\n" + "\n".join(f"- {d}" for d in document))
    return "\n\n".join(parts)


def _candidates(turn: _Turn) -> list[str]:
    """Everything the answer may come from, most specific first."""
    found: list[str] = []
    for text in turn.result("recall"):
        found += _notes(text)
    found += _notes(said(turn.system, "recent_memory_notes"))
    found += _document_lines(turn.system)
    found += _profile_bullets(turn.system)
    found += _summary_lines(turn.system)
    for message in turn.before:
        if isinstance(message, HumanMessage):
            found += [as_told(s) for s in sentences(_text(message)) if not s.endswith("?")]
    return found


def _from_memory(scored: list[tuple[int, int, str]], score: int) -> str:
    """The lines of `score` in the order given, each fact once."""
    lines: list[str] = []
    said_terms: set[str] = set()
    for _, _, line in sorted((s for s in scored if s[0] == score), key=lambda s: s[1]):
        if not repeats(line, said_terms):
            lines.append(line)
            said_terms |= set(search_terms(line))
    return "From memory: " + " ".join(lines[:ANSWER_LINES])


def _answer(turn: _Turn, question: str) -> str:
    """The answer from the lines holding every word of the question; else from the best note
    recall found (recall ranks by meaning too), said to be that; else from the lines holding
    half the words; else that memory has nothing."""
    words = key_words(question)
    if not words:
        return "Could you ask that with a few more words? " + ABOUT
    scored = [(overlap(words, line), n, line) for n, line in enumerate(_candidates(turn))]
    best = max((score for score, _, _ in scored), default=0)
    if best == len(words):
        return _from_memory(scored, best)
    asked = ", ".join(words)
    recalled = [line for text in turn.result("recall") for line in _notes(text)]
    if recalled:
        found = f"{len(recalled)} notes" if len(recalled) > 1 else "1 note"
        return (
            f"No note mentions {asked} word for word; the best match of the {found} recall "
            f"found is: {recalled[0]}"
        )
    if best >= max(1, (len(words) + 1) // 2):
        return _from_memory(scored, best)
    return (
        f"I have nothing about {asked} in memory. I'm the offline model, so I only know what "
        "you told me."
    )


def _reply(turn: _Turn) -> str:
    if len(turn.user) > LONG_TEXT:
        words = turn.user.split()
        return (
            f"I read your text ({len(words):,} words, {len(turn.user.splitlines()):,} lines), "
            f'beginning "{shortened(turn.user, 80)}". It stays in this conversation, so ask me '
            "about it."
        )
    parts: list[str] = []
    for text in turn.result("remember"):
        if text.startswith(_FAILED):
            parts.append(f"I could not save that: {text}")
    noted = [second_person(f) for f in stated_facts(turn.user)]
    if turn.result("remember") and not parts:
        spoken = " ".join(noted)
        parts.append("Noted: " + spoken[:1].lower() + spoken[1:])
    fetch = turn.fetch_tool()
    for text in turn.result(fetch) if fetch else []:
        parts.append(f"I read the page ({len(text):,} characters): {shortened(text, 120)}")
    question = question_of(turn.user)
    if asks_about_me(turn.user):
        parts.append(_about_me(turn))
    elif question:
        parts.append(_answer(turn, question))
    if parts:
        return "\n\n".join(parts)
    if noted:
        return "I can't save notes here (memory tools are off), but I heard you."
    if _FORGET.match(turn.user):
        return (
            "Understood: your profile drops that after this answer. I can't delete notes "
            "myself; remove a note with the chat's /forget command (see /notes)."
        )
    if _GREETING.match(turn.user):
        return "Hello! " + ABOUT
    return ABOUT


class OfflineModel(BaseChatModel):
    """A deterministic, rule-based chat model that uses the memory tools; no network."""

    @property
    def _llm_type(self) -> str:
        return "memory-plugin-offline"

    def _resolve_model_profile(self) -> ModelProfile | None:
        return {"max_input_tokens": WINDOW}

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """The model with `tools` offered to it (their names decide what it may call)."""
        formatted = [convert_to_openai_tool(tool) for tool in tools]
        return self.bind(tools=formatted, **kwargs)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.respond(messages, **kwargs))])

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        return self._generate(messages, *args, **kwargs)

    def respond(self, messages: Sequence[BaseMessage], **kwargs: Any) -> AIMessage:
        """The reply to `messages`, with the tools in `kwargs["tools"]` offered."""
        if summary_requested(messages):
            return AIMessage(summarize_request(messages))
        system = _text(messages[0]) if messages and isinstance(messages[0], SystemMessage) else ""
        upkeep = upkeep_answer(system, _text(messages[-1])) if len(messages) > 1 else None
        if upkeep is not None:
            return AIMessage(upkeep)
        turn = _Turn(messages, _tool_names(kwargs.get("tools") or []))
        calls = _calls(turn)
        if calls:
            return AIMessage("", tool_calls=calls)
        return AIMessage(_reply(turn))
