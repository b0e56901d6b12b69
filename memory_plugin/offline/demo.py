"""A scripted stand-in chat model for the scripted tour and tests, and the Studio model.

`DemoModel` is clearly not an LLM: it answers the graph's own turns from a script, and the
memory prompts (profile consolidation, summaries, flush notes, compression) as the offline
model does, so the real graph can be shown working with no key and no network. `studio_model`
is the built-in offline model (`memory_plugin.offline.model.OfflineModel`), which answers what you
type.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

from memory_plugin.offline import OfflineModel
from memory_plugin.offline.upkeep import upkeep_answer


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
        upkeep = upkeep_answer(system, str(messages[-1].content)) if len(messages) > 1 else None
        reply = AIMessage(upkeep) if upkeep is not None else self._next()
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def _next(self) -> AIMessage:
        if not self.script:
            return AIMessage("(demo model: nothing more scripted)")
        item = self.script.pop(0)
        if self.repeat:
            self.script.append(item)
        return item if isinstance(item, AIMessage) else AIMessage(str(item))


def studio_model() -> OfflineModel:
    """The model of the Studio graph when MEMORY_MODEL is unset (and what
    MEMORY_MODEL=memory_plugin.offline.demo:studio_model selects): the built-in offline model."""
    return OfflineModel()
