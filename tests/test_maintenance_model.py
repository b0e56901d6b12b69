"""Memory work has its own model: summaries, flush notes, profile consolidation and nightly
consolidation go to the maintenance model (an argument, or the `maintenance_model` setting),
never to the agent's model, so a scripted agent model stays in step across turns."""

from __future__ import annotations

from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel, GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

from memory_plugin import Backend, LayeredSettings, MemoryContext, create_memory_graph
from memory_plugin.background import await_every, wait_all
from memory_plugin.errors import SettingsError
from memory_plugin.prebuilt.middleware import MemoryMiddleware
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.profile.prompts import CONSOLIDATE_SYSTEM
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.consolidation import consolidate
from memory_plugin.settings import MemorySettings
from tests.fakes import CompactionModel, ProfileModel
from tests.scoped_helpers import Clock, failing_model

ANN = MemoryContext(user_id="ann")
WINDOW = 4_000
FILLER = " ".join(f"detail{n}" for n in range(700))
MESSAGES = [f"I moved to Lisbon. {FILLER}", *(f"Turn {n} notes: {FILLER}" for n in range(1, 5))]
REPLIES = [f"Answer {n}." for n in range(len(MESSAGES))]
EXPECTED = {("context_management", "compacted")}  # the flush and the profile: in the background


class AgentModel(GenericFakeChatModel):
    """The agent's scripted model: exactly one reply per turn, in order, and every input it
    was given; binding tools returns the same scripted instance."""

    inputs: list[list[BaseMessage]] = Field(default_factory=list)

    def bind_tools(self, tools: Any, **kwargs: Any) -> AgentModel:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.inputs.append(list(messages))
        return super()._generate(messages, *args, **kwargs)


class Upkeep(BaseChatModel):
    """Memory's own model: profile prompts answered as ProfileModel does (Lisbon is added),
    summary and flush prompts as CompactionModel does."""

    profile: ProfileModel = Field(
        default_factory=lambda: ProfileModel(
            plan={"Lisbon": {"op": "ADD", "section": "Identity", "bullet": "Lives in Lisbon."}}
        )
    )
    compaction: CompactionModel = Field(default_factory=CompactionModel)

    @property
    def _llm_type(self) -> str:
        return "upkeep-fake"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if str(messages[0].content).startswith(CONSOLIDATE_SYSTEM[:60]):
            return self.profile._generate(messages, *args, **kwargs)
        return self.compaction._generate(messages, *args, **kwargs)

    def kinds(self) -> set[str]:
        """Which kinds of memory prompts it answered."""
        asked = {prompt.split(":")[0] for prompt in self.compaction.prompts}
        return asked | ({"profile"} if self.profile.calls else set())


def upkeep() -> Upkeep:
    """A fresh Upkeep, for the `maintenance_model` setting."""
    return Upkeep()


def agent_model() -> AgentModel:
    return AgentModel(
        messages=iter(AIMessage(reply) for reply in REPLIES),
        profile={"max_input_tokens": WINDOW},
    )


def turn(graph: Any, text: str, thread: str) -> tuple[str, set[tuple[str, str]]]:
    """One turn: the answer and the (kind, action) of the memory events it streamed."""
    events, answer = set(), ""
    for mode, chunk in graph.stream(
        {"messages": [HumanMessage(text)]},
        {"configurable": {"thread_id": thread}},
        context=ANN,
        stream_mode=["custom", "values"],
    ):
        if mode == "custom":
            events.add((chunk["kind"], chunk["action"]))
        else:
            answer = str(chunk["messages"][-1].content)
    assert wait_all()
    return answer, events


async def aturn(graph: Any, text: str, thread: str) -> tuple[str, set[tuple[str, str]]]:
    """Async twin of turn."""
    events, answer = set(), ""
    async for mode, chunk in graph.astream(
        {"messages": [HumanMessage(text)]},
        {"configurable": {"thread_id": thread}},
        context=ANN,
        stream_mode=["custom", "values"],
    ):
        if mode == "custom":
            events.add((chunk["kind"], chunk["action"]))
        else:
            answer = str(chunk["messages"][-1].content)
    await await_every()
    return answer, events


def assert_in_step(
    agent: AgentModel, answers: list[str], events: set[Any], profile: Any, notes: list[Any]
) -> None:
    """Every turn got its own scripted reply, the agent's model was asked once per turn and
    only as the agent, and memory work happened meanwhile (through another model): the
    compaction, its flush note and the profile."""
    assert answers == REPLIES
    assert len(agent.inputs) == len(REPLIES)
    assert events >= EXPECTED, events
    assert profile is not None and "Lives in Lisbon." in profile.bullets("Identity")
    assert notes and all("Lisbon offsite" in note.body for note in notes)


def test_the_agent_stays_in_step_while_memory_works(backend: Backend) -> None:
    agent, maintenance = agent_model(), Upkeep()
    graph = create_memory_graph(
        agent,
        store=backend.store,
        checkpointer=backend.checkpointer,
        maintenance_model=maintenance,
    )
    answers, events = [], set()
    for text in MESSAGES:
        answer, seen = turn(graph, text, "in-step")
        answers.append(answer)
        events |= seen
    assert_in_step(
        agent,
        answers,
        events,
        ProfileMemory(backend.store).read(ANN),
        ScopedMemory(backend.store).list_notes(ANN),
    )
    assert maintenance.kinds() == {"profile", "summary", "flush"}


async def test_the_agent_stays_in_step_under_ainvoke(abackend: Backend) -> None:
    agent, maintenance = agent_model(), Upkeep()
    graph = create_memory_graph(
        agent,
        store=abackend.store,
        checkpointer=abackend.checkpointer,
        maintenance_model=maintenance,
    )
    answers, events = [], set()
    for text in MESSAGES:
        answer, seen = await aturn(graph, text, "in-step-async")
        answers.append(answer)
        events |= seen
    assert_in_step(
        agent,
        answers,
        events,
        await ProfileMemory(abackend.store).aread(ANN),
        await ScopedMemory(abackend.store).alist_notes(ANN),
    )
    assert maintenance.kinds() == {"profile", "summary", "flush"}


def test_the_setting_names_the_maintenance_model(backend: Backend) -> None:
    agent = agent_model()
    settings = MemorySettings(maintenance_model="tests.test_maintenance_model:upkeep")
    graph = create_memory_graph(
        agent, store=backend.store, checkpointer=backend.checkpointer, settings=settings
    )
    answers, events = [], set()
    for text in MESSAGES:
        answer, seen = turn(graph, text, "by-setting")
        answers.append(answer)
        events |= seen
    assert_in_step(
        agent,
        answers,
        events,
        ProfileMemory(backend.store).read(ANN),
        ScopedMemory(backend.store).list_notes(ANN),
    )


async def test_the_environment_names_the_maintenance_model(
    abackend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_MAINTENANCE_MODEL", "tests.test_maintenance_model:upkeep")
    agent = agent_model()
    graph = create_memory_graph(agent, store=abackend.store, checkpointer=abackend.checkpointer)
    answers, events = [], set()
    for text in MESSAGES:
        answer, seen = await aturn(graph, text, "by-env")
        answers.append(answer)
        events |= seen
    assert_in_step(
        agent,
        answers,
        events,
        await ProfileMemory(abackend.store).aread(ANN),
        await ScopedMemory(abackend.store).alist_notes(ANN),
    )


def test_a_maintenance_model_that_cannot_be_loaded_is_refused_when_built(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MEMORY_MAINTENANCE_MODEL", "tests.no_such_module:model")
    with pytest.raises(SettingsError, match=r"maintenance_model.*tests\.no_such_module:model"):
        create_memory_graph(agent_model())


def test_the_profile_only_model_setting_is_gone() -> None:
    with pytest.raises(SettingsError, match="profile_model"):
        MemorySettings(profile_model="fake:profile")


def middleware_agent(agent: AgentModel, maintenance: Upkeep, backend: Backend) -> Any:
    return create_agent(
        agent,
        tools=[],
        middleware=[MemoryMiddleware(agent, maintenance_model=maintenance)],
        checkpointer=backend.checkpointer,
        store=backend.store,
        context_schema=MemoryContext,
    )


def test_the_middleware_takes_a_maintenance_model(backend: Backend) -> None:
    agent, maintenance = agent_model(), Upkeep()
    graph = middleware_agent(agent, maintenance, backend)
    answers, events = [], set()
    for text in MESSAGES:
        answer, seen = turn(graph, text, "middleware")
        answers.append(answer)
        events |= seen
    assert_in_step(
        agent,
        answers,
        events,
        ProfileMemory(backend.store).read(ANN),
        ScopedMemory(backend.store).list_notes(ANN),
    )


async def test_the_middleware_takes_a_maintenance_model_under_ainvoke(abackend: Backend) -> None:
    agent, maintenance = agent_model(), Upkeep()
    graph = middleware_agent(agent, maintenance, abackend)
    answers, events = [], set()
    for text in MESSAGES:
        answer, seen = await aturn(graph, text, "middleware-async")
        answers.append(answer)
        events |= seen
    assert_in_step(
        agent,
        answers,
        events,
        await ProfileMemory(abackend.store).aread(ANN),
        await ScopedMemory(abackend.store).alist_notes(ANN),
    )


def test_nightly_consolidation_uses_the_model_the_setting_names(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    memory = ScopedMemory(backend.store, clock=clock)
    clock.advance(days=-10)
    memory.remember(ANN, "Prefers tea")
    clock.advance(days=10)
    monkeypatch.setenv("MEMORY_MAINTENANCE_MODEL", "tests.fakes:merging_model")
    report = consolidate(backend.store, failing_model(), now=clock())
    assert (report.folded, report.failed) == (1, [])
    document = memory.read_document(ANN)
    assert document is not None and document.text == "- Prefers tea"


def test_a_stored_model_that_cannot_be_loaded_falls_back_to_the_default(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    missing = {"maintenance_model": "tests.no_such_module:model"}
    LayeredSettings(backend.store).update("platform", MemoryContext(), set=missing)
    default = Upkeep()
    memory = ProfileMemory(backend.store, model=default)
    assert memory.consolidate(ANN, "I moved to Lisbon", "Nice.").status == "updated"
    assert default.kinds() == {"profile"}
    assert "maintenance model not loaded" in caplog.text
