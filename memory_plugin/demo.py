"""An offline stand-in chat model for the demo, the Studio smoke test and examples.

`DemoModel` is clearly not an LLM: it answers the graph's own turns from a script, and the
memory prompts (profile consolidation, summaries, flush notes, compression) with simple
rules, so the real graph can be shown working with no key and no network.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from memory_plugin.profile.budget import body
from memory_plugin.profile.document import Profile, repair
from memory_plugin.profile.prompts import CONDENSE_SYSTEM, CONSOLIDATE_SYSTEM
from memory_plugin.scoped.prompts import COMPRESS_SYSTEM
from memory_plugin.thread.prompts import FLUSH_SYSTEM, SUMMARY_SYSTEM

_FACTS = (
    (re.compile(r"\bmy name is (\w+)", re.I), "Identity", "Name is {0}."),
    (
        re.compile(r"\bI(?:'m| am) an? ([\w -]+?) (?:at|in|from) ([\w ]+?)[.,!]", re.I),
        "Identity",
        "Works as a {0} at {1}.",
    ),
    (re.compile(r"\bI prefer ([^.!]+)", re.I), "Communication Preferences", "Prefers {0}."),
    (re.compile(r"\bI(?:'m| am) working on ([^.!]+)", re.I), "Work Context", "Working on {0}."),
    (
        re.compile(r"\bremind me (?:to |about )?([^.!]+)", re.I),
        "Open Questions / Follow-ups",
        "Asked to be reminded: {0}.",
    ),
)


def _said(prompt: str, tag: str) -> str:
    found = re.search(rf"<{tag}>\n(.*?)\n</{tag}>", prompt, re.S)
    return found.group(1) if found else ""


class DemoModel(BaseChatModel):
    """Scripted answers for the agent, rule-based answers for memory's own prompts."""

    script: list[Any] = Field(default_factory=list)
    repeat: bool = False

    @property
    def _llm_type(self) -> str:
        return "memory-plugin-demo"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> DemoModel:
        """Tools are in the script already."""
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        system = str(messages[0].content) if messages else ""
        last = str(messages[-1].content) if messages else ""
        if system.startswith(CONSOLIDATE_SYSTEM[:60]):
            reply: AIMessage = AIMessage(self._profile(last))
        elif system.startswith(SUMMARY_SYSTEM[:60]):
            reply = AIMessage(self._summary(last))
        elif system.startswith(FLUSH_SYSTEM[:60]):
            reply = AIMessage(
                "The conversation covered the user's questions and tool results; "
                "open: follow up on anything left unanswered."
            )
        elif system.startswith((CONDENSE_SYSTEM[:40], COMPRESS_SYSTEM[:40])):
            reply = AIMessage(_said(last, "profile") or _said(last, "memory_document")[:2_000])
        else:
            reply = self._next()
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _next(self) -> AIMessage:
        if not self.script:
            return AIMessage("(demo model: nothing more scripted)")
        item = self.script.pop(0)
        if self.repeat:
            self.script.append(item)
        return item if isinstance(item, AIMessage) else AIMessage(str(item))

    def _profile(self, prompt: str) -> str:
        user = _said(prompt, "user")
        shown = repair(_said(prompt, "profile"), Profile("demo").with_sections({}), _now(prompt))
        sections = {name: list(bullets) for name, bullets in shown.sections.items()}
        added = False
        for pattern, section, template in _FACTS:
            match = pattern.search(user)
            if match:
                bullet = template.format(*(g.strip() for g in match.groups()))
                if bullet not in sections[section]:
                    sections[section].append(bullet)
                    added = True
        if not added:
            return "NOOP"
        return body(shown.with_sections({k: tuple(v) for k, v in sections.items()}))

    def _summary(self, prompt: str) -> str:
        previous = _said(prompt, "previous_summary")
        lines = [
            line for line in _said(prompt, "messages").splitlines() if line.startswith("User:")
        ]
        topics = "; ".join(line[6:60].strip() for line in lines[-3:])
        head = "" if previous.startswith("(none") else previous + "\n"
        return f"{head}- Earlier the user asked: {topics or 'a few questions'}."


def _now(prompt: str) -> Any:
    from datetime import UTC, datetime

    found = re.search(r"Current time: (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) UTC", prompt)
    if found:
        return datetime.strptime(found.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
    return datetime.now(UTC)


def studio_model() -> DemoModel:
    """The model the Studio smoke test selects with MEMORY_MODEL=memory_plugin.demo:studio_model:
    it stores a note with the remember tool, then answers."""
    call = {"name": "remember", "args": {"text": "Prefers short answers"}, "id": "studio-1"}
    return DemoModel(
        script=[AIMessage("", tool_calls=[call]), AIMessage("Noted, I'll keep it short.")]
    )
