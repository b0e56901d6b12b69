"""Bounded memory in the prebuilt graph: the `memory` tool under invoke and ainvoke, and the
frozen snapshot block (per session: first turn, after an idle gap, after a compaction), on
every backend."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult
from langchain_core.tools import tool
from pydantic import Field

from memory_plugin import Backend, LayeredSettings, MemoryContext, create_memory_graph
from memory_plugin.bounded import BoundedMemory
from memory_plugin.context_management.nodes import summarize_now
from memory_plugin.context_management.prefix import TURN_AT
from memory_plugin.offline.demo import DemoModel
from memory_plugin.settings import MemorySettings

ANN = MemoryContext(user_id="ann")
ON = MemorySettings(bounded_memory=True)
FACT = "Ann's build box runs Ubuntu 22.04"


class SeeingModel(DemoModel):
    """DemoModel that keeps the system prompt of every agent call."""

    prompts: list[str] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        system = str(messages[0].content) if messages else ""
        if "<memory_entries>" in system:
            self.prompts.append(system)
        return super()._generate(messages, *args, **kwargs)


@tool
def lookup(term: str) -> str:
    """Look a term up (returns a long glossary entry)."""
    return f"{term}: " + "a long glossary entry about the term and its history. " * 60


def add_call(n: int, target: str, content: str) -> AIMessage:
    args = {"action": "add", "target": target, "content": content}
    return AIMessage("", tool_calls=[{"name": "memory", "args": args, "id": f"m{n}"}])


def turn(graph: Any, text: str, thread: str = "t") -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    return graph.invoke({"messages": [HumanMessage(text)]}, config, context=ANN)  # type: ignore[no-any-return]


def age_session(graph: Any, minutes: int, thread: str = "t") -> None:
    """Make the thread's last turn look `minutes` old."""
    config = {"configurable": {"thread_id": thread}}
    then = datetime.now(UTC) - timedelta(minutes=minutes)
    graph.update_state(config, {"memory_context": {TURN_AT: then.isoformat()}})


def test_the_tool_writes_at_once_and_the_snapshot_waits_for_the_next_session(
    backend: Backend,
) -> None:
    model = SeeingModel(script=[add_call(1, "user", FACT), "Saved.", "Hi again.", "Hello.", "Hey."])
    graph = create_memory_graph(
        model, store=backend.store, checkpointer=backend.checkpointer, settings=ON
    )
    out = turn(graph, "remember my build box")
    assert out["messages"][-2].content.startswith("Added to user (")
    assert BoundedMemory(backend.store).read(ANN)["user"].entries == [FACT]
    turn(graph, "and now?")
    assert all(FACT not in prompt for prompt in model.prompts)
    assert "[0% — 0/1,375 chars]" in model.prompts[-1]
    age_session(graph, 29)
    turn(graph, "still here")
    assert FACT not in model.prompts[-1]
    age_session(graph, 31)
    turn(graph, "back after a break")
    used = len(FACT)
    assert FACT in model.prompts[-1]
    assert f"[{round(100 * used / 1375)}% — {used}/1,375 chars]" in model.prompts[-1]
    assert "<memory_entries>\nYour notes [0% — 0/2,200 chars]\n(empty)" in model.prompts[-1]


async def test_the_tool_under_ainvoke(abackend: Backend) -> None:
    model = SeeingModel(script=[add_call(1, "memory", "Repo uses uv, not pip"), "Saved."])
    graph = create_memory_graph(
        model, store=abackend.store, checkpointer=abackend.checkpointer, settings=ON
    )
    config = {"configurable": {"thread_id": "a"}}
    out = await graph.ainvoke({"messages": [HumanMessage("note it")]}, config, context=ANN)
    assert out["messages"][-2].content.startswith("Added to memory (")
    views = await BoundedMemory(abackend.store).aread(ANN)
    assert views["memory"].entries == ["Repo uses uv, not pip"]
    await BoundedMemory(abackend.store).aapply(ANN, "add", "user", "Ann is on call Mondays")
    then = datetime.now(UTC) - timedelta(minutes=45)
    await graph.aupdate_state(config, {"memory_context": {TURN_AT: then.isoformat()}})
    await graph.ainvoke({"messages": [HumanMessage("hi")]}, config, context=ANN)
    assert "Repo uses uv, not pip" in model.prompts[-1]
    assert "Ann is on call Mondays" in model.prompts[-1]


def test_a_refused_write_reaches_the_model_as_a_tool_error(backend: Backend) -> None:
    settings = MemorySettings(bounded_memory=True, bounded_user_chars=200)
    model = SeeingModel(script=[add_call(1, "user", "x" * 250), "Too long."])
    graph = create_memory_graph(
        model, store=backend.store, checkpointer=backend.checkpointer, settings=settings
    )
    out = turn(graph, "remember this")
    error = out["messages"][-2]
    assert error.status == "error"
    assert "Memory not changed: user would exceed limit" in error.content
    assert BoundedMemory(backend.store).read(ANN)["user"].entries == []


def test_a_compaction_starts_a_new_session(backend: Backend) -> None:
    LayeredSettings(backend.store).update("platform", ANN, set={"compaction_manual": True})
    script: list[Any] = []
    for n in range(3):
        script += [
            AIMessage(
                "", tool_calls=[{"name": "lookup", "args": {"term": f"t{n}"}, "id": f"l{n}"}]
            ),
            f"Done {n}.",
        ]
    script += ["After compaction."]
    model = SeeingModel(script=script, profile={"max_input_tokens": 8_000})
    graph = create_memory_graph(
        model, [lookup], store=backend.store, checkpointer=backend.checkpointer, settings=ON
    )
    for n in range(3):
        turn(graph, f"look up t{n}")
        if n == 0:
            BoundedMemory(backend.store).apply(ANN, "add", "memory", "Glossary lives in docs/")
    assert all("Glossary lives in docs/" not in p for p in model.prompts)
    config = {"configurable": {"thread_id": "t"}}
    assert summarize_now(graph, config, context=ANN)["status"] == "compacted"
    turn(graph, "what next?")
    assert "Glossary lives in docs/" in model.prompts[-1]


def test_off_by_default_there_is_no_tool_and_no_block(backend: Backend) -> None:
    model = SeeingModel(script=["Hi."])
    graph = create_memory_graph(
        model,
        store=backend.store,
        checkpointer=backend.checkpointer,
    )
    assert "memory" not in graph.nodes["tools"].bound.tools_by_name
    out = turn(graph, "hello")
    assert out["messages"][-1].content == "Hi."
    assert model.prompts == []


def test_a_stored_layer_switching_it_off_refuses_the_tool_and_drops_the_block(
    backend: Backend,
) -> None:
    LayeredSettings(backend.store).update("user", ANN, set={"bounded_memory": False})
    model = SeeingModel(script=[add_call(1, "memory", "Repo uses uv"), "Ok."])
    graph = create_memory_graph(
        model, store=backend.store, checkpointer=backend.checkpointer, settings=ON
    )
    out = turn(graph, "note it")
    refused = out["messages"][-2]
    assert refused.status == "error"
    assert "bounded_memory is switched off here" in refused.content
    assert BoundedMemory(backend.store).read(ANN)["memory"].entries == []
    assert model.prompts == []


async def test_the_tool_reports_its_write_on_the_custom_stream(abackend: Backend) -> None:
    model = SeeingModel(script=[add_call(1, "user", FACT), "Saved."])
    graph = create_memory_graph(
        model, store=abackend.store, checkpointer=abackend.checkpointer, settings=ON
    )
    events = [
        (chunk["kind"], chunk["action"], chunk["scope"])
        async for chunk in graph.astream(
            {"messages": [HumanMessage("remember my build box")]},
            {"configurable": {"thread_id": "events"}},
            context=ANN,
            stream_mode="custom",
        )
        if chunk["kind"] == "bounded_memory"
    ]
    assert events == [("bounded_memory", "entry_add", "user")]
