"""The background work a compaction turn starts on the shipped graph (the pre-compaction flush
note and the profile's consolidation) is asked of the maintenance model only once the graph's
run has ended: after invoke, a stream or ainvoke returned (or raised); it still lands, once per
compaction, sync and async, on all three backends. A user's own graph with our nodes, which
does not report its run's end, still gets the note once its last journal write is done."""

from __future__ import annotations

import asyncio
import sys
import time
from collections.abc import Iterator
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from langgraph.graph import END, START, StateGraph
from pydantic import Field

from memory_plugin import (
    Backend,
    MemoryContext,
    MemorySettings,
    ScopedMemory,
    create_memory_graph,
)
from memory_plugin.background import await_every, wait_all
from memory_plugin.context_management.nodes import ContextManager
from memory_plugin.context_management.state import MemoryState
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.profile.prompts import CONSOLIDATE_SYSTEM
from tests.fakes import CompactionModel, ProfileModel

ANN = MemoryContext(user_id="ann")
WINDOW = 4_000
FILLER = " ".join(f"detail{n}" for n in range(700))
LISBON = {"Lisbon": {"op": "ADD", "section": "Identity", "bullet": "Lives in Lisbon."}}
CALLED, RETURNED = "called", "returned"


class Upkeep(BaseChatModel):
    """Memory's own model: profile prompts answered as ProfileModel does (Lisbon is added),
    summary and flush prompts as CompactionModel does; each prompt's kind is logged."""

    log: Any
    profile: ProfileModel = Field(default_factory=lambda: ProfileModel(plan=LISBON))
    compaction: CompactionModel = Field(default_factory=CompactionModel)

    @property
    def _llm_type(self) -> str:
        return "upkeep-fake"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        system = str(messages[0].content)
        if system.startswith(CONSOLIDATE_SYSTEM[:60]):
            self.log.append("profile")
            return self.profile._generate(messages, *args, **kwargs)
        self.log.append("flush" if "long-term memory" in system else "summary")
        return self.compaction._generate(messages, *args, **kwargs)


class Agent(GenericFakeChatModel):
    """The agent's scripted model; with `fail_after_summary` the answer after a summary
    raises (a provider error in the compaction turn)."""

    log: Any
    fail_after_summary: bool = False

    def bind_tools(self, tools: Any, **kwargs: Any) -> Agent:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if self.fail_after_summary and "summary" in self.log:
            raise ConnectionError("the provider is down")
        return super()._generate(messages, *args, **kwargs)


@pytest.fixture(autouse=True)
def no_preemption() -> Iterator[None]:
    """The turn's thread keeps the GIL until it blocks, so a job woken early would run before
    invoke returns only if the turn blocked after waking it: the order seen is the order the
    code imposes, not the host's scheduling."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(5.0)
    yield
    sys.setswitchinterval(before)


def question(n: int) -> dict[str, Any]:
    text = "I moved to Lisbon." if n == 0 else f"Turn {n} notes."
    return {"messages": [HumanMessage(f"{text} {FILLER}", id=f"q{n}")]}


def config(thread: str) -> dict[str, Any]:
    return {"configurable": {"thread_id": thread}}


def shipped(backend: Backend, log: list[str], fail: bool = False) -> Any:
    agent = Agent(
        messages=iter(AIMessage(f"answer {n}") for n in range(12)),
        profile={"max_input_tokens": WINDOW},
        log=log,
        fail_after_summary=fail,
    )
    return create_memory_graph(
        agent,
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(masking=False),
        maintenance_model=Upkeep(log=log),
    )


def turns(log: list[str]) -> list[list[str]]:
    """The log cut at each turn's start: what the model was asked for from it on."""
    cut: list[list[str]] = []
    for entry in log:
        if entry == CALLED:
            cut.append([])
        else:
            cut[-1].append(entry)
    return cut


def assert_after_run(log: list[str]) -> None:
    """A turn asks only for its summary; the flush note and the profile come once it
    returned, the note once, in the compaction turn."""
    for turn in turns(log):
        during = turn[: turn.index(RETURNED)]
        assert set(during) <= {"summary"}, turn
    assert log.count("summary") == 1 and log.count("flush") == 1
    assert "profile" in log


def assert_landed(profile: Any, notes: list[Any]) -> None:
    assert profile is not None and "Lives in Lisbon." in profile.bullets("Identity")
    assert len(notes) == 1 and "Lisbon offsite" in notes[0].body


def run_sync(graph: Any, how: str, n: int, thread: str) -> None:
    if how == "invoke":
        graph.invoke(question(n), config(thread), context=ANN)
    elif how == "invoke, durability exit":
        graph.invoke(question(n), config(thread), context=ANN, durability="exit")
    else:
        for _ in graph.stream(question(n), config(thread), context=ANN, stream_mode="updates"):
            pass


async def run_async(graph: Any, how: str, n: int, thread: str) -> None:
    if how == "ainvoke":
        await graph.ainvoke(question(n), config(thread), context=ANN)
    elif how == "astream":
        async for _ in graph.astream(question(n), config(thread), context=ANN):
            pass
    else:
        async for _ in graph.astream_events(question(n), config(thread), context=ANN):
            pass


@pytest.mark.parametrize("how", ["invoke", "invoke, durability exit", "stream"])
def test_the_flush_note_and_the_profile_are_asked_for_once_the_run_returned(
    backend: Backend, how: str
) -> None:
    log: list[str] = []
    graph = shipped(backend, log)
    for n in range(8):
        log.append(CALLED)
        run_sync(graph, how, n, "t")
        log.append(RETURNED)
        assert wait_all()
        if "summary" in log:
            break
    assert_after_run(log)
    assert_landed(
        ProfileMemory(backend.store).read(ANN), ScopedMemory(backend.store).list_notes(ANN)
    )


@pytest.mark.parametrize("how", ["ainvoke", "astream"])
async def test_the_flush_note_and_the_profile_are_asked_for_once_the_run_returned_async(
    abackend: Backend, how: str
) -> None:
    log: list[str] = []
    graph = shipped(abackend, log)
    for n in range(8):
        log.append(CALLED)
        await run_async(graph, how, n, "t")
        log.append(RETURNED)
        await await_every()
        if "summary" in log:
            break
    assert_after_run(log)
    profile = await ProfileMemory(abackend.store).aread(ANN)
    assert_landed(profile, await ScopedMemory(abackend.store).alist_notes(ANN))


async def test_under_astream_events_the_note_and_the_profile_land_once(
    abackend: Backend,
) -> None:
    log: list[str] = []
    graph = shipped(abackend, log)
    for n in range(8):
        await run_async(graph, "astream_events", n, "t")
        await await_every()
        if "summary" in log:
            break
    assert log.count("summary") == 1 and log.count("flush") == 1
    profile = await ProfileMemory(abackend.store).aread(ANN)
    assert_landed(profile, await ScopedMemory(abackend.store).alist_notes(ANN))


@tool
def look_up(topic: str) -> str:
    """Look a topic up."""
    return f"{topic}: nothing new"


def test_a_turn_interrupted_before_its_tools_flushes_once_it_returned(backend: Backend) -> None:
    log: list[str] = []
    script = []
    for n in range(8):
        call = {"name": "look_up", "args": {"topic": f"t{n}"}, "id": f"call-{n}"}
        script += [AIMessage("", tool_calls=[call]), AIMessage(f"answer {n}")]
    agent = Agent(messages=iter(script), profile={"max_input_tokens": WINDOW}, log=log)
    graph = create_memory_graph(
        agent,
        [look_up],
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(masking=False),
        maintenance_model=Upkeep(log=log),
    )
    for n in range(8):
        log.append(CALLED)
        graph.invoke(question(n), config("i"), context=ANN, interrupt_before=["tools"])
        log.append(RETURNED)
        assert graph.get_state(config("i")).next == ("tools",)
        if "summary" in log:
            deadline = time.monotonic() + 5
            while "flush" not in log and time.monotonic() < deadline:
                time.sleep(0.02)
            assert "flush" in log
        log.append(CALLED)
        graph.invoke(None, config("i"), context=ANN)
        log.append(RETURNED)
        assert wait_all()
        if "summary" in log:
            break
    assert_after_run(log)
    assert_landed(
        ProfileMemory(backend.store).read(ANN), ScopedMemory(backend.store).list_notes(ANN)
    )


def test_as_a_subgraph_the_note_and_the_profile_land_once(backend: Backend) -> None:
    """They start once the memory graph's own run ended (the parent's may still go on)."""
    log: list[str] = []
    inner = shipped(backend, log)
    builder = StateGraph(MemoryState, context_schema=MemoryContext)
    builder.add_node("memory_agent", inner)
    builder.add_edge(START, "memory_agent")
    builder.add_edge("memory_agent", END)
    outer = builder.compile(store=backend.store, checkpointer=backend.checkpointer)
    for n in range(8):
        outer.invoke(question(n), config("sub"), context=ANN)
        assert wait_all()
        if "summary" in log:
            break
    assert log.count("summary") == 1 and log.count("flush") == 1
    assert_landed(
        ProfileMemory(backend.store).read(ANN), ScopedMemory(backend.store).list_notes(ANN)
    )


def test_a_turn_that_fails_after_its_compaction_still_flushes_once_it_raised(
    backend: Backend,
) -> None:
    """The note is asked for once invoke raised, without waiting for the gate's timeout or
    for someone to wait for background work."""
    log: list[str] = []
    graph = shipped(backend, log, fail=True)
    for n in range(8):
        log.append(CALLED)
        try:
            graph.invoke(question(n), config("t"), context=ANN)
        except ConnectionError:
            log.append(RETURNED)
            break
        log.append(RETURNED)
        assert wait_all()
    deadline = time.monotonic() + 5
    while "flush" not in log and time.monotonic() < deadline:
        time.sleep(0.02)
    assert "flush" in log
    assert wait_all()
    failed = turns(log)[-1]
    assert failed[: failed.index(RETURNED)] == ["summary"]
    assert failed.count("flush") == 1
    assert len(ScopedMemory(backend.store).list_notes(ANN)) == 1


def own_graph(backend: Backend, log: list[str], tail: Any) -> Any:
    """start_turn -> model -> finish_turn -> consolidate_profile -> tail: our nodes in a
    user's graph, whose `tail` runs after the turn's last journal write."""
    agent = Agent(
        messages=iter(AIMessage(f"answer {n}") for n in range(12)),
        profile={"max_input_tokens": WINDOW},
        log=log,
    )
    upkeep = Upkeep(log=log)
    manager = ContextManager(agent, summary_model=upkeep)
    profile = ProfileMemory(model=upkeep)

    def model(state: MemoryState) -> dict[str, Any]:
        return {"messages": [agent.invoke(manager.model_input(dict(state)))]}

    async def amodel(state: MemoryState) -> dict[str, Any]:
        return {"messages": [await agent.ainvoke(manager.model_input(dict(state)))]}

    builder = StateGraph(MemoryState, context_schema=MemoryContext)
    builder.add_node("start_turn", manager.start_turn)
    builder.add_node("model", RunnableLambda(model, amodel))
    builder.add_node("finish_turn", manager.finish_turn)
    builder.add_node("consolidate_profile", profile.consolidate_profile)
    builder.add_node("tail", tail)
    builder.add_edge(START, "start_turn")
    builder.add_edge("start_turn", "model")
    builder.add_edge("model", "finish_turn")
    builder.add_edge("finish_turn", "consolidate_profile")
    builder.add_edge("consolidate_profile", "tail")
    builder.add_edge("tail", END)
    return builder.compile(store=backend.store, checkpointer=backend.checkpointer)


def test_a_users_own_graph_gets_the_note_after_its_last_journal_write(backend: Backend) -> None:
    log: list[str] = []

    def tail(state: MemoryState) -> dict[str, Any]:
        if "summary" in log:
            deadline = time.monotonic() + 5
            while "flush" not in log and time.monotonic() < deadline:
                time.sleep(0.02)
            log.append("tail")
        return {}

    graph = own_graph(backend, log, tail)
    for n in range(8):
        graph.invoke(question(n), config("own"), context=ANN)
        if "summary" in log:
            break
    assert wait_all()
    assert log.count("flush") == 1 and log.index("flush") < log.index("tail")
    assert_landed(
        ProfileMemory(backend.store).read(ANN), ScopedMemory(backend.store).list_notes(ANN)
    )


async def test_a_users_own_graph_gets_the_note_after_its_last_journal_write_async(
    abackend: Backend,
) -> None:
    log: list[str] = []

    async def tail(state: MemoryState) -> dict[str, Any]:
        if "summary" in log:
            for _ in range(250):
                if "flush" in log:
                    break
                await asyncio.sleep(0.02)
            log.append("tail")
        return {}

    graph = own_graph(abackend, log, tail)
    for n in range(8):
        await graph.ainvoke(question(n), config("own"), context=ANN)
        if "summary" in log:
            break
    await await_every()
    assert log.count("flush") == 1 and log.index("flush") < log.index("tail")
    profile = await ProfileMemory(abackend.store).aread(ANN)
    assert_landed(profile, await ScopedMemory(abackend.store).alist_notes(ANN))
