"""Issue 37, point 3: a compaction asks for its summary by repeating the agent's last request
(the same bound tools, the same messages, byte for byte) with one instruction after it, so a
provider bills what the summary reads at its cached-input price. It sends the transcript
instead when that bills less (`prompt_cache_read_ratio`), when the last call is older than
`prompt_cache_seconds`, when another model writes summaries, when the graph never sent the
thread a request (a restart), and when the repeated request's reply calls a tool.

Driven through `create_memory_graph` on every backend, under invoke and ainvoke; the agent's
model is a scripted chat model that records every request with the tools bound to it.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from memory_plugin import Backend, MemorySettings, create_memory_graph
from memory_plugin.context_management.cache_share import SUMMARY_REQUEST
from memory_plugin.context_management.compaction import DIVIDERS
from memory_plugin.context_management.prompts import SUMMARY_SYSTEM
from memory_plugin.offline.model import OfflineModel
from memory_plugin.scope.context import MemoryContext

WINDOW = 10_000
WORDS = "word " * 800
BEFORE = 7  # questions below the trigger: the next one's call compacts
ANN = MemoryContext(user_id="ann")
QUIET: dict[str, Any] = {"flush": False, "profile": False, "masking": False}
SETTINGS = MemorySettings(**QUIET)
CACHED_SUMMARY = "Ann asked nine long questions; every one was answered (cached request)."
TRANSCRIPT_SUMMARY = "Ann asked nine long questions; every one was answered (transcript)."


@tool
def look_up(term: str) -> str:
    """Look a term up."""
    return f"{term}: found"


class Recorder(BaseChatModel):
    """The agent's model: answers, writes summaries, and records each request with the tools
    it was bound to (None for an unbound call)."""

    requests: list[tuple[list[BaseMessage], list[str] | None]] = Field(default_factory=list)
    cached_reply: Any = CACHED_SUMMARY

    @property
    def _llm_type(self) -> str:
        return "cache-share-recorder"

    def bind_tools(  # type: ignore[override]
        self, tools: Sequence[Any], **kwargs: Any
    ) -> Runnable[Any, BaseMessage]:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        tools = kwargs.get("tools")
        names = [t["function"]["name"] for t in tools] if tools is not None else None
        self.requests.append((list(messages), names))
        last = str(messages[-1].content)
        if f"<{SUMMARY_REQUEST}>" in last:
            item = self.cached_reply
        elif str(messages[0].content) == SUMMARY_SYSTEM:
            item = TRANSCRIPT_SUMMARY
        else:
            item = "Answered."
        reply = item if isinstance(item, AIMessage) else AIMessage(item)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def cached_requests(self) -> list[int]:
        """The indices of the summary requests that repeated an agent request."""
        return [
            i
            for i, (messages, _) in enumerate(self.requests)
            if f"<{SUMMARY_REQUEST}>" in str(messages[-1].content)
        ]

    def transcript_requests(self) -> list[int]:
        """The indices of the summary requests sent as a transcript."""
        return [
            i
            for i, (messages, _) in enumerate(self.requests)
            if str(messages[0].content) == SUMMARY_SYSTEM
        ]


def sent(messages: Sequence[BaseMessage]) -> list[str]:
    """The request's messages as a provider receives them, one string each."""
    return [json.dumps(m.model_dump(exclude={"id"}), sort_keys=True) for m in messages]


def graph(
    backend: Backend, model: Recorder, settings: MemorySettings = SETTINGS, **kwargs: Any
) -> Any:
    model.profile = {"max_input_tokens": WINDOW}
    return create_memory_graph(
        model,
        [look_up],
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=settings,
        system_prompt="You are a patient assistant.",
        **kwargs,
    )


def questions(n: int) -> list[str]:
    return [f"question {i}: {WORDS}" for i in range(n)]


def run_turns(app: Any, texts: list[str], thread: str = "t1") -> None:
    for text in texts:
        app.invoke({"messages": [HumanMessage(text)]}, config(thread), context=ANN)


def config(thread: str) -> Any:
    return {"configurable": {"thread_id": thread}}


def summary(values: dict[str, Any]) -> str:
    info = values["memory_context"]
    assert len(info[DIVIDERS]) == 1, "the thread was compacted once"
    return str(info["summary"])


def repeated(model: Recorder) -> None:
    """One summary request, which repeated the agent's last request with the instruction."""
    (i,) = model.cached_requests()
    assert model.transcript_requests() == []
    previous, previous_tools = model.requests[i - 1]
    request, tools = model.requests[i]
    assert tools == previous_tools and tools is not None and "look_up" in tools
    assert sent(request[: len(previous)]) == sent(previous), "the last request is its prefix"
    reply, new, instruction = request[len(previous) :]
    assert reply.content == "Answered." and new.content.startswith("question ")
    compacted, _ = model.requests[i + 1]
    assert sent(compacted[-1:]) == sent([new]), "the agent then answers the new question"
    kept = str(compacted[1].content)
    assert kept[:60] in str(instruction.content), "the instruction quotes the first kept"
    assert isinstance(compacted[0], SystemMessage)
    assert CACHED_SUMMARY in str(compacted[0].content)
    assert all(f"<{SUMMARY_REQUEST}>" not in str(m.content) for m in compacted[1:])
    assert not any("question 0" in str(m.content) for m in compacted), "the old messages went"


def test_the_summary_request_repeats_the_agents_last_request(backend: Backend) -> None:
    model = Recorder()
    app = graph(backend, model)
    run_turns(app, questions(BEFORE + 2))
    repeated(model)
    assert summary(app.get_state(config("t1")).values) == CACHED_SUMMARY


async def test_under_ainvoke_too(abackend: Backend) -> None:
    model = Recorder()
    app = graph(abackend, model)
    for text in questions(BEFORE + 2):
        await app.ainvoke({"messages": [HumanMessage(text)]}, config("t1"), context=ANN)
    repeated(model)
    assert summary((await app.aget_state(config("t1"))).values) == CACHED_SUMMARY


def test_a_transcript_is_sent_when_it_bills_less(backend: Backend) -> None:
    model = Recorder()
    full_price = MemorySettings(**QUIET, prompt_cache_read_ratio=1.0)
    app = graph(backend, model, full_price)
    run_turns(app, questions(BEFORE + 2))
    assert model.cached_requests() == []
    (i,) = model.transcript_requests()
    assert model.requests[i][1] is None, "the transcript goes to the unbound model"
    assert summary(app.get_state(config("t1")).values) == TRANSCRIPT_SUMMARY


def test_a_transcript_is_sent_when_the_cache_has_expired(backend: Backend) -> None:
    model = Recorder()
    app = graph(backend, model, MemorySettings(**QUIET, prompt_cache_seconds=0.0))
    run_turns(app, questions(BEFORE + 2))
    assert model.cached_requests() == [] and len(model.transcript_requests()) == 1
    assert summary(app.get_state(config("t1")).values) == TRANSCRIPT_SUMMARY


def test_a_maintenance_model_gets_the_transcript(backend: Backend) -> None:
    model = Recorder()
    app = graph(backend, model, maintenance_model=OfflineModel())
    run_turns(app, questions(BEFORE + 2))
    assert model.cached_requests() == [] and model.transcript_requests() == []
    written = summary(app.get_state(config("t1")).values)
    assert CACHED_SUMMARY not in written and TRANSCRIPT_SUMMARY not in written


def test_a_restarted_graph_sends_the_transcript(backend: Backend) -> None:
    model = Recorder()
    run_turns(graph(backend, model), questions(BEFORE))
    assert model.transcript_requests() == model.cached_requests() == []
    restarted = Recorder()
    app = graph(backend, restarted)
    run_turns(app, questions(BEFORE + 1)[BEFORE:])
    assert restarted.cached_requests() == [] and len(restarted.transcript_requests()) == 1
    assert summary(app.get_state(config("t1")).values) == TRANSCRIPT_SUMMARY


def test_a_reply_that_calls_a_tool_falls_back_to_the_transcript(backend: Backend) -> None:
    called = AIMessage("", tool_calls=[{"name": "look_up", "args": {"term": "x"}, "id": "c1"}])
    model = Recorder(cached_reply=called)
    app = graph(backend, model)
    run_turns(app, questions(BEFORE + 2))
    (cached,) = model.cached_requests()
    (transcript,) = model.transcript_requests()
    assert transcript == cached + 1
    assert summary(app.get_state(config("t1")).values) == TRANSCRIPT_SUMMARY
    state = app.get_state(config("t1")).values
    assert not any(getattr(m, "tool_calls", None) for m in state["messages"]), "no tool ran"


def test_each_thread_repeats_only_its_own_request(backend: Backend) -> None:
    model = Recorder()
    app = graph(backend, model)
    run_turns(app, questions(BEFORE), thread="t1")
    run_turns(app, ["a short question on another thread"], thread="t2")
    run_turns(app, questions(BEFORE + 1)[BEFORE:], thread="t1")
    (i,) = model.cached_requests()
    request, _ = model.requests[i]
    assert all("another thread" not in str(m.content) for m in request)
    assert summary(app.get_state(config("t1")).values) == CACHED_SUMMARY
