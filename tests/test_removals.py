"""Issue 34, point 2: what is removed from memory is gone from every open session at the model
call after the removal (the same turn's next call included), whichever door removed it, and a
replaced profile bullet never shows next to its replacement; memory not removed still shows.

Each case is a scenario of steps (a turn, a store plan, a console request, waiting for the
profile's background work), driven by `drive` under invoke and by `adrive` under ainvoke
through the real prebuilt graph, checkpointer and store; the scripted model records every
request it is sent.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

import httpx
import pytest
from fastapi.testclient import TestClient
from langchain.agents import create_agent
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool
from langgraph.config import get_store
from pydantic import Field

from memory_plugin import Backend, MemoryContext, create_memory_graph
from memory_plugin.agent import AgentMemory
from memory_plugin.bounded import BoundedMemory
from memory_plugin.plans import arun, run
from memory_plugin.prebuilt.middleware import MemoryMiddleware
from memory_plugin.privacy.forget import Forgetter
from memory_plugin.privacy.inventory import Owner
from memory_plugin.profile.memory import ProfileMemory, await_profiles, wait_for_profiles
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server.app import create_app
from memory_plugin.settings import MemorySettings
from tests.console_seed import ANN as ANN_TOKEN
from tests.console_seed import TOKENS
from tests.fakes import ProfileModel

SYSTEM = "Answer briefly."
SETTINGS = MemorySettings(agent_memory=True, bounded_memory=True, recent_notes_max_chars=500)
ANN = MemoryContext(user_id="ann", org_id="o1", agent_id="helper")
ANN_TEAM = MemoryContext(
    user_id="ann", org_id="o1", workspace_id="acme", thread_visibility="shared"
)
BOB_TEAM = MemoryContext(
    user_id="bob", org_id="o1", workspace_id="acme", thread_visibility="shared"
)
SECRET, KEPT = "4821QX", "Gecko"  # letters no hex id (a uuid) can hold
JOINED = {"op": "ADD", "section": "Work Context", "bullet": "Works at Quokka Labs"}
CHANGED = {
    "op": "UPDATE",
    "section": "Work Context",
    "bullet": "Works at Numbat Systems",
    "replaces": "Quokka",
}


class Scripted(BaseChatModel):
    """Answers the agent's calls from a script and records every request it is sent."""

    script: list[Any] = Field(default_factory=list)
    sent: list[list[BaseMessage]] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-recorder"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Scripted:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.sent.append(list(messages))
        item = self.script.pop(0) if self.script else "Ok."
        reply = item if isinstance(item, AIMessage) else AIMessage(item)
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def request(self, back: int = 1) -> str:
        """Every message of a request sent (the latest by default), as JSON."""
        return "\n".join(message.model_dump_json() for message in self.sent[-back])


@dataclass(frozen=True)
class Turn:
    """One user turn in a thread."""

    text: str
    ctx: MemoryContext = ANN
    thread: str = "t1"


@dataclass(frozen=True)
class Rest:
    """One request to the console, as ann."""

    method: str
    path: str


SETTLE = "settle"
Scenario = Generator[Any, Any, None]


def call(name: str, n: int, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"{name}-{n}"}])


def shown_then_gone(model: Scripted, before: int = 2) -> None:
    """The secret was in an earlier request and is in no message of the latest, where the
    memory not removed still is."""
    assert SECRET in model.request(before)
    assert SECRET not in model.request() and KEPT in model.request()


def kept_note(store: Any) -> Any:
    return ScopedMemory(store).remember_plan(ANN, f"Ann's cat is called {KEPT}")


def profile_seeded(store: Any) -> Any:
    memory = ProfileMemory(store, model=ProfileModel(plan={"joined": JOINED}))
    return memory.consolidate_plan(ANN, "I just joined a new company.", "Congratulations!")


def _close(key: str) -> str:
    ScopedMemory(get_store()).delete_note(ANN, key)
    return "Closed."


async def _aclose(key: str) -> str:
    await ScopedMemory(get_store()).adelete_note(ANN, key)
    return "Closed."


CLOSE = StructuredTool.from_function(
    _close, coroutine=_aclose, name="close_ticket", description="Close a ticket by its key."
)
"""An app's tool that deletes a note through the library while the turn runs (as the console
or another thread would meanwhile)."""


def note_deleted_by_another_door_mid_turn(store: Any, model: Scripted) -> Scenario:
    yield kept_note(store)
    note = yield ScopedMemory(store).remember_plan(ANN, f"Ann's locker code is {SECRET}")
    model.script[:] = [call("close_ticket", 1, key=note.key), "Closed it."]
    yield Turn("Close that ticket.")
    shown_then_gone(model)


def note_deleted_over_rest(store: Any, model: Scripted) -> Scenario:
    yield kept_note(store)
    note = yield ScopedMemory(store).remember_plan(ANN, f"Ann's locker code is {SECRET}")
    yield Turn("hello")
    deleted = yield Rest("DELETE", f"/api/personal/notes/{quote(note.key)}")
    assert deleted == {"deleted": note.key}
    yield Turn("and again")
    shown_then_gone(model)


def team_note_removed_seen_by_a_teammate(store: Any, model: Scripted) -> Scenario:
    team = ScopedMemory(store)
    yield team.remember_plan(ANN_TEAM, f"The team mascot is {KEPT}")
    note = yield team.remember_plan(ANN_TEAM, f"The team vault code is {SECRET}")
    yield Turn("hello", BOB_TEAM, "bob-1")
    yield Rest("DELETE", f"/api/team/acme/notes/{quote(note.key)}")
    yield Turn("and again", BOB_TEAM, "bob-1")
    shown_then_gone(model)


def forgotten_everywhere(store: Any, model: Scripted) -> Scenario:
    yield kept_note(store)
    yield ScopedMemory(store).remember_plan(ANN, f"Ann's locker code is {SECRET}")
    yield ScopedMemory(store).write_document_plan(ANN, f"# Ann\n- Locker {SECRET}\n- Tea", None)
    yield BoundedMemory(store, settings=SETTINGS).apply_plan(
        ANN, "add", "user", f"Locker number {SECRET}", None
    )
    yield Turn("hello")
    forgetter = Forgetter.over(store, SETTINGS)
    preview = yield forgetter.preview_plan(Owner("ann", "o1"), SECRET)
    assert {place.kind for place in preview.places} >= {"note", "document", "bounded_memory"}
    yield forgetter.apply_plan(preview)
    yield Turn("and again")
    shown_then_gone(model)


def document_line_removed_by_the_models_tool(store: Any, model: Scripted) -> Scenario:
    yield kept_note(store)
    yield ScopedMemory(store).write_document_plan(ANN, f"# Ann\n- Locker {SECRET}\n- Tea", None)
    model.script[:] = [call("update_memory", 1, content="# Ann\n- Tea"), "Done."]
    yield Turn("Drop the locker line from your document.")
    shown_then_gone(model)


def agent_entry_removed_by_the_models_tool(store: Any, model: Scripted) -> Scenario:
    yield kept_note(store)
    agent = AgentMemory(store, settings=SETTINGS)
    yield agent.store_plan(
        ANN, "locker", f"Locker code {SECRET}", category="user_profile", importance=0.9
    )
    model.script[:] = [call("memory_forget", 1, key="locker"), "Forgotten."]
    yield Turn("Forget my locker entry.")
    shown_then_gone(model)


def bounded_entry_removed_by_the_models_tool(store: Any, model: Scripted) -> Scenario:
    bounded = BoundedMemory(store, settings=SETTINGS)
    yield bounded.apply_plan(ANN, "add", "user", f"Has a cat called {KEPT}", None)
    yield bounded.apply_plan(ANN, "add", "user", f"Locker code is {SECRET}", None)
    model.script[:] = [call("memory", 1, action="remove", target="user", old_text="Locker"), "Ok"]
    yield Turn("Remove the locker entry.")
    shown_then_gone(model)


def profile_turned_off(store: Any, model: Scripted) -> Scenario:
    yield kept_note(store)
    yield profile_seeded(store)
    yield Turn("hello")
    assert "Quokka" in model.request()
    answer = yield Rest("DELETE", "/api/profile")
    assert answer["deleted"] is True
    yield Turn("and again")
    assert "Quokka" not in model.request() and KEPT in model.request()


def profile_bullet_replaced(store: Any, model: Scripted) -> Scenario:
    yield kept_note(store)
    yield profile_seeded(store)
    yield Turn("hello")
    yield Turn("Correction: my employer is outdated, I changed jobs.")
    yield SETTLE
    yield Turn("and now?")
    assert "Quokka" in model.request(2)
    request = model.request()
    assert "Numbat" in request and "Quokka" not in request and KEPT in request


CASES: list[Callable[[Any, Scripted], Scenario]] = [
    note_deleted_over_rest,
    team_note_removed_seen_by_a_teammate,
    forgotten_everywhere,
    document_line_removed_by_the_models_tool,
    note_deleted_by_another_door_mid_turn,
    agent_entry_removed_by_the_models_tool,
    bounded_entry_removed_by_the_models_tool,
    profile_turned_off,
    profile_bullet_replaced,
]

MIDDLEWARE_CASES = [
    bounded_entry_removed_by_the_models_tool,
    note_deleted_by_another_door_mid_turn,
    note_deleted_over_rest,
]


@dataclass
class Run:
    """The graph (or agent) of one case over a backend, and the recording model."""

    backend: Backend
    middleware: bool = False
    model: Scripted = field(default_factory=Scripted)

    def __post_init__(self) -> None:
        maintenance = ProfileModel(plan={"Correction": CHANGED})
        if self.middleware:
            memory = MemoryMiddleware(
                self.model, settings=SETTINGS, system_prompt=SYSTEM, maintenance_model=maintenance
            )
            self.graph = create_agent(
                self.model,
                tools=[CLOSE],
                middleware=[memory],
                checkpointer=self.backend.checkpointer,
                store=self.backend.store,
                context_schema=MemoryContext,
            )
        else:
            self.graph = create_memory_graph(
                self.model,
                [CLOSE],
                store=self.backend.store,
                checkpointer=self.backend.checkpointer,
                settings=SETTINGS,
                system_prompt=SYSTEM,
                maintenance_model=maintenance,
            )
        self.app = create_app(
            self.backend.store,
            tokens=TOKENS,
            checkpointer=self.backend.checkpointer,
            settings=SETTINGS,
        )

    def turn_args(self, turn: Turn) -> tuple[dict[str, Any], dict[str, Any]]:
        return {"messages": [HumanMessage(turn.text)]}, {"configurable": {"thread_id": turn.thread}}


def drive(case: Callable[[Any, Scripted], Scenario], runner: Run) -> None:
    """The scenario under invoke, with the sync store and the console's test client."""
    store, client = runner.backend.store, TestClient(runner.app)
    scenario, answer = case(store, runner.model), None
    while True:
        try:
            step = scenario.send(answer)
        except StopIteration:
            return
        if isinstance(step, Turn):
            state, config = runner.turn_args(step)
            answer = runner.graph.invoke(state, config, context=step.ctx)
        elif isinstance(step, Rest):
            response = client.request(step.method, step.path, headers=ANN_TOKEN)
            assert response.status_code == 200, response.text
            answer = response.json()
        elif step == SETTLE:
            answer = wait_for_profiles()
        else:
            assert inspect.isgenerator(step)
            answer = run(store, step)


async def adrive(case: Callable[[Any, Scripted], Scenario], runner: Run) -> None:
    """Async twin of drive: ainvoke, the async store and an ASGI client."""
    store = runner.backend.store
    transport = httpx.ASGITransport(app=runner.app)
    async with httpx.AsyncClient(transport=transport, base_url="http://console") as client:
        scenario, answer = case(store, runner.model), None
        while True:
            try:
                step = scenario.send(answer)
            except StopIteration:
                return
            if isinstance(step, Turn):
                state, config = runner.turn_args(step)
                answer = await runner.graph.ainvoke(state, config, context=step.ctx)
            elif isinstance(step, Rest):
                response = await client.request(step.method, step.path, headers=ANN_TOKEN)
                assert response.status_code == 200, response.text
                answer = response.json()
            elif step == SETTLE:
                await await_profiles()
            else:
                assert inspect.isgenerator(step)
                answer = await arun(store, step)


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
def test_removed_memory_leaves_the_next_model_call_under_invoke(
    backend: Backend, case: Callable[[Any, Scripted], Scenario]
) -> None:
    drive(case, Run(backend))


@pytest.mark.slow
@pytest.mark.parametrize("case", CASES, ids=lambda case: case.__name__)
async def test_removed_memory_leaves_the_next_model_call_under_ainvoke(
    abackend: Backend, case: Callable[[Any, Scripted], Scenario]
) -> None:
    await adrive(case, Run(abackend))


@pytest.mark.slow
@pytest.mark.parametrize("case", MIDDLEWARE_CASES, ids=lambda case: case.__name__)
def test_removed_memory_leaves_a_middleware_agents_next_model_call(
    backend: Backend, case: Callable[[Any, Scripted], Scenario]
) -> None:
    drive(case, Run(backend, middleware=True))


@pytest.mark.slow
@pytest.mark.parametrize("case", MIDDLEWARE_CASES, ids=lambda case: case.__name__)
async def test_removed_memory_leaves_a_middleware_agents_next_model_call_async(
    abackend: Backend, case: Callable[[Any, Scripted], Scenario]
) -> None:
    await adrive(case, Run(abackend, middleware=True))


def bounded_entry_added(store: Any, model: Scripted) -> Scenario:
    bounded = BoundedMemory(store, settings=SETTINGS)
    yield bounded.apply_plan(ANN, "add", "user", f"Has a cat called {KEPT}", None)
    yield Turn("hello")
    yield bounded.apply_plan(ANN, "add", "user", f"Locker code is {SECRET}", None)
    yield Turn("and again")
    before, after = model.sent[-2], model.sent[-1]
    assert after[0].content == before[0].content and SECRET not in str(after[0].content)


def notes_pushed_out_of_a_full_block(store: Any, model: Scripted) -> Scenario:
    scoped = ScopedMemory(store)
    for n in range(8):
        yield scoped.remember_plan(ANN, f"Filler note {n}: " + "x" * 60)
    yield Turn("hello")
    yield scoped.remember_plan(ANN, f"Ann's cat is called {KEPT}")
    yield Turn("and again")
    before, after = model.sent[-2], model.sent[-1]
    assert after[0].content == before[0].content
    assert KEPT in model.request() and KEPT not in str(after[0].content)


@pytest.mark.slow
@pytest.mark.parametrize(
    "case", [bounded_entry_added, notes_pushed_out_of_a_full_block], ids=lambda c: c.__name__
)
def test_what_is_only_added_keeps_the_system_message(
    backend: Backend, case: Callable[[Any, Scripted], Scenario]
) -> None:
    """A bounded entry's usage line changing, or a note leaving a full recent-notes block for
    room, removes nothing: the session goes on with its snapshot."""
    drive(case, Run(backend))


@pytest.mark.slow
@pytest.mark.parametrize(
    "case", [bounded_entry_added, notes_pushed_out_of_a_full_block], ids=lambda c: c.__name__
)
async def test_what_is_added_reaches_a_middleware_agents_open_session(
    abackend: Backend, case: Callable[[Any, Scripted], Scenario]
) -> None:
    """Through `create_agent` with MemoryMiddleware alike: what memory learned mid-session is
    told in the next turn's messages (a `<memory_update>`), the system message kept."""
    await adrive(case, Run(abackend, middleware=True))
