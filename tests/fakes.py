"""Chat models that stand where a real LLM would answer, for consolidation tests and the CLI."""

from __future__ import annotations

import re
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field


class MergingModel(BaseChatModel):
    """Answers a consolidation prompt by appending the notes to the document, and records
    every prompt it was given."""

    prompts: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "merging-fake"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        prompt = str(messages[-1].content)
        self.prompts.append(prompt)
        document = re.search(r"<memory_document>\n(.*?)\n</memory_document>", prompt, re.S)
        notes = re.search(r"<notes>\n(.*?)\n</notes>", prompt, re.S)
        current = document.group(1) if document and document.group(1) != "(empty)" else ""
        lines = (
            [re.sub(r"^- \[[^\]]+\] ", "", line) for line in notes.group(1).splitlines()]
            if notes
            else []
        )
        merged = "\n".join(part for part in [current, *(f"- {line}" for line in lines)] if part)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(merged))])


def merging_model() -> MergingModel:
    """A fresh MergingModel (used by `memory-plugin consolidate --model tests.fakes:...`)."""
    return MergingModel()


class CompactionModel(BaseChatModel):
    """Answers flush prompts with a note and summary prompts with a numbered summary (stands
    in for the LLM that writes them); can be told to fail or stall either kind."""

    note: str = "Planning the Lisbon offsite; open: venue and budget."
    fail: set[str] = Field(default_factory=set)
    stall_seconds: float = 0.0
    gate: Any = None
    prompts: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "compaction-fake"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        import time

        system = str(messages[0].content)
        kind = "flush" if "long-term memory" in system else "summary"
        self.prompts.append(f"{kind}: {messages[-1].content}")
        if kind in self.fail:
            raise ConnectionError(f"{kind} model unavailable")
        if kind == "flush" and self.stall_seconds:
            time.sleep(self.stall_seconds)
        if kind == "summary" and self.gate is not None:
            self.gate.wait(timeout=30)
        count = sum(p.startswith("summary") for p in self.prompts)
        text = self.note if kind == "flush" else f"Summary {count}: the user and assistant talked."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


class ProfileModel(BaseChatModel):
    """Answers profile consolidation prompts like a model would for one labelled case: NOOP,
    or the profile it was shown with one bullet added, replaced or removed. `plan` maps a
    substring of the user's message to a case (dict with op, section, bullet, replaces)."""

    plan: dict[str, dict[str, Any]] = Field(default_factory=dict)
    reply_override: str | None = None
    gate: Any = None
    calls: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "profile-fake"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        prompt = str(messages[-1].content)
        self.calls.append(prompt)
        if self.gate is not None:
            self.gate.wait(timeout=30)
        text = self.reply_override if self.reply_override is not None else self._answer(prompt)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])

    def _answer(self, prompt: str) -> str:
        from datetime import UTC, datetime

        from memory_plugin.profile.budget import body
        from memory_plugin.profile.document import Profile, repair

        user = re.search(r"<user>\n(.*?)\n</user>", prompt, re.S)
        case = next((c for key, c in self.plan.items() if user and key in user.group(1)), None)
        if case is None or case["op"] == "NOOP":
            return "NOOP"
        shown = re.search(r"<profile>\n(.*?)\n</profile>", prompt, re.S)
        now = re.search(r"Current time: (\S+ \S+) UTC", prompt)
        base = repair(
            shown.group(1) if shown else "", Profile("x").with_sections({}), datetime.now(UTC)
        )
        assert base is not None
        section = case["section"]
        bullets = list(base.bullets(section))
        bullet = case.get("bullet") or ""
        if section == "Recent Topics" and bullet and now:
            bullet = f"{now.group(1)} UTC: {bullet}"
        if case["op"] == "ADD":
            bullets.append(bullet)
        else:
            index = next(i for i, b in enumerate(bullets) if case["replaces"] in b)
            if case["op"] == "UPDATE":
                bullets[index] = bullet
            else:
                del bullets[index]
        return body(base.with_sections({**base.sections, section: tuple(bullets)}))
