"""Issue 23, part 5: the answer never waits for the profile. Consolidation runs in the
background; an exchange whose job did not finish (an error, a job that never ran) is
consolidated by the thread's next job, from the journal, exactly once. On every backend,
through create_memory_graph with a real checkpointer; only the models are fakes."""

from __future__ import annotations

import re
import threading
import time
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig
from pydantic import Field

from memory_plugin import Backend, MemoryContext, create_memory_graph
from memory_plugin.backends import conditional
from memory_plugin.background import Background
from memory_plugin.holdings import Owner
from memory_plugin.offline.demo import DemoModel
from memory_plugin.privacy import Forgetter, aerase_user, erase_user
from memory_plugin.profile.cursor import CURSORS
from memory_plugin.profile.memory import (
    MAX_FAILURES,
    ProfileMemory,
    await_profiles,
    wait_for_profiles,
)
from memory_plugin.scope import profile_scope
from tests.fakes import ProfileModel
from tests.test_profile import recorded_events

ANN = MemoryContext(user_id="ann")
FACTS = {
    "Lisbon": {"op": "ADD", "section": "Identity", "bullet": "Lives in Lisbon."},
    "Rust": {"op": "ADD", "section": "Skills & Expertise", "bullet": "Writes Rust."},
    "tea": {"op": "ADD", "section": "Communication Preferences", "bullet": "Likes tea."},
}
USER = re.compile(r"<user>\n(.*?)\n</user>", re.S)


class Flaky(ProfileModel):
    """ProfileModel that records every exchange it is shown (`shown`, the user's text) and
    raises for the first `fail_first` calls and for any exchange containing `poison`."""

    fail_first: int = 0
    poison: str | None = None
    shown: list[str] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        found = USER.search(str(messages[-1].content))
        user = found.group(1) if found else ""
        self.shown.append(user)
        if self.fail_first > 0:
            self.fail_first -= 1
            raise ConnectionError("the model provider is down")
        if self.poison and self.poison in user:
            raise ValueError("the model chokes on this exchange")
        return super()._generate(messages, *args, **kwargs)


def graph_for(backend: Backend, profile_model: Any, turns: int = 4) -> Any:
    answers = [f"Answer {n}." for n in range(turns)]
    return create_memory_graph(
        DemoModel(script=answers),
        store=backend.store,
        checkpointer=backend.checkpointer,
        maintenance_model=profile_model,
    )


def config(thread: str) -> RunnableConfig:
    return {"configurable": {"thread_id": thread}}


def turn(graph: Any, text: str, thread: str = "t") -> Any:
    out = graph.invoke({"messages": [HumanMessage(text)]}, config(thread), context=ANN)
    return out["messages"][-1].text


def profile_of(backend: Backend) -> Any:
    return ProfileMemory(backend.store).read(ANN)


def changes_of(backend: Backend) -> list[Any]:
    return ProfileMemory(backend.store).changes(ANN)


def cursor_of(backend: Backend, thread: str = "t") -> dict[str, Any] | None:
    item = backend.store.get((*profile_scope(ANN).namespace, CURSORS), thread)
    return None if item is None else dict(item.value)


# --- the run returns while the profile model is still working ---------------------------


@pytest.mark.slow
def test_invoke_returns_before_the_profile_is_consolidated(backend: Backend) -> None:
    gate = threading.Event()
    model = ProfileModel(plan=FACTS, gate=gate)
    graph = graph_for(backend, model)
    try:
        assert turn(graph, "I just moved to Lisbon") == "Answer 0."
        assert profile_of(backend) is None
    finally:
        gate.set()
    assert wait_for_profiles()
    stored = profile_of(backend)
    assert stored is not None and stored.bullets("Identity") == ("Lives in Lisbon.",)
    assert stored.turn_count == 1 and len(model.calls) == 1
    assert cursor_of(backend) is not None


@pytest.mark.slow
async def test_ainvoke_returns_before_the_profile_is_consolidated(abackend: Backend) -> None:
    gate = threading.Event()
    model = ProfileModel(plan=FACTS, gate=gate)
    graph = graph_for(abackend, model)
    try:
        out = await graph.ainvoke(
            {"messages": [HumanMessage("I just moved to Lisbon")]}, config("t"), context=ANN
        )
        assert out["messages"][-1].text == "Answer 0."
        assert await ProfileMemory(abackend.store).aread(ANN) is None
    finally:
        gate.set()
    await await_profiles()
    stored = await ProfileMemory(abackend.store).aread(ANN)
    assert stored is not None and stored.bullets("Identity") == ("Lives in Lisbon.",)
    assert stored.turn_count == 1 and len(model.calls) == 1


# --- a job that did not finish is redone by the next one, exactly once -------------------


@pytest.mark.slow
@pytest.mark.parametrize("crash", ["model error", "job never ran"])
def test_a_crashed_job_is_caught_up_by_the_next_turn_exactly_once(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, crash: str
) -> None:
    model = Flaky(plan=FACTS, fail_first=1 if crash == "model error" else 0)
    graph = graph_for(backend, model)
    if crash == "job never ran":  # as when the process exits right after the answer
        start = Background.start

        def dropped(self: Background, key: Any, store: Any, plan: Any) -> None:
            monkeypatch.setattr(Background, "start", start)
            plan.close()

        monkeypatch.setattr(Background, "start", dropped)
    assert turn(graph, "I just moved to Lisbon") == "Answer 0."
    assert wait_for_profiles()
    assert profile_of(backend) is None
    turn(graph, "I write Rust at work")
    assert wait_for_profiles()
    turn(graph, "what time is it?")
    assert wait_for_profiles()
    stored = profile_of(backend)
    assert stored is not None
    assert stored.bullets("Identity") == ("Lives in Lisbon.",)
    assert stored.bullets("Skills & Expertise") == ("Writes Rust.",)
    assert stored.turn_count == 2 and len(changes_of(backend)) == 2
    failed = ["I just moved to Lisbon"] if crash == "model error" else []
    assert model.shown == [
        *failed,
        "I just moved to Lisbon",
        "I write Rust at work",
        "what time is it?",
    ]
    cursor = cursor_of(backend)
    assert cursor is not None and cursor["failures"] == 0


@pytest.mark.slow
def test_an_exchange_that_always_fails_is_given_up_after_max_failures(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = recorded_events(monkeypatch)
    model = Flaky(plan=FACTS, poison="poison")
    graph = graph_for(backend, model, turns=MAX_FAILURES + 1)
    turn(graph, "a poison exchange")
    assert wait_for_profiles()
    turn(graph, "I just moved to Lisbon")
    assert wait_for_profiles()
    for n in range(MAX_FAILURES - 1):
        turn(graph, f"hello {n}")
        assert wait_for_profiles()
    assert model.shown.count("a poison exchange") == MAX_FAILURES
    assert model.shown.count("I just moved to Lisbon") == 1
    stored = profile_of(backend)
    assert stored is not None and stored.bullets("Identity") == ("Lives in Lisbon.",)
    assert [e["action"] for e in events].count("failed") == MAX_FAILURES


# --- two jobs on one thread at once -----------------------------------------------------


@pytest.mark.slow
def test_two_concurrent_jobs_for_one_thread_apply_the_exchange_once(backend: Backend) -> None:
    gate = threading.Event()
    first = ProfileModel(plan=FACTS, gate=gate)
    graph = graph_for(backend, first)
    try:
        turn(graph, "I just moved to Lisbon")
        deadline = time.monotonic() + 5  # the job starts once the run has ended
        while not first.calls and time.monotonic() < deadline:
            time.sleep(0.01)
        values = graph.get_state(config("t")).values
        other = ProfileMemory(backend.store, model=ProfileModel(plan=FACTS))  # another worker
        other.start_consolidation(values, config("t"), ANN, backend.store)
        assert other.wait_for_background()
        assert profile_of(backend).turn_count == 1
    finally:
        gate.set()
    assert wait_for_profiles()
    stored = profile_of(backend)
    assert stored is not None and stored.bullets("Identity") == ("Lives in Lisbon.",)
    assert stored.turn_count == 1 and len(changes_of(backend)) == 1
    assert len(first.calls) == 1  # shown the exchange too, but found it consolidated


@pytest.mark.slow
async def test_concurrent_async_jobs_apply_each_exchange_once(abackend: Backend) -> None:
    gate = threading.Event()
    first = ProfileModel(plan=FACTS, gate=gate)
    graph = graph_for(abackend, first)
    try:
        await graph.ainvoke(
            {"messages": [HumanMessage("I just moved to Lisbon")]}, config("t"), context=ANN
        )
        values = (await graph.aget_state(config("t"))).values
        others = [ProfileMemory(abackend.store, model=ProfileModel(plan=FACTS)) for _ in "ab"]
        for other in others:
            other.start_consolidation(values, config("t"), ANN, abackend.store)
        for other in others:
            await other.await_background()
    finally:
        gate.set()
    await await_profiles()
    stored = await ProfileMemory(abackend.store).aread(ANN)
    assert stored is not None and stored.bullets("Identity") == ("Lives in Lisbon.",)
    assert stored.turn_count == 1
    assert len(await ProfileMemory(abackend.store).achanges(ANN)) == 1


# --- the store failing in the background -------------------------------------------------


@pytest.mark.slow
def test_a_store_failure_in_the_background_never_fails_the_turn(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    events = recorded_events(monkeypatch)

    def down(*args: Any) -> Any:
        raise OSError("the store is down")

    original = conditional.put_if_version
    monkeypatch.setattr(conditional, "put_if_version", down)
    model = Flaky(plan=FACTS)
    graph = graph_for(backend, model)
    assert turn(graph, "I just moved to Lisbon") == "Answer 0."
    assert wait_for_profiles()
    assert profile_of(backend) is None
    assert [e["action"] for e in events if e["action"] != "loaded"] == ["failed"]
    monkeypatch.setattr(conditional, "put_if_version", original)
    assert turn(graph, "I like tea") == "Answer 1."
    assert wait_for_profiles()
    stored = profile_of(backend)
    assert stored is not None and stored.bullets("Identity") == ("Lives in Lisbon.",)
    assert stored.bullets("Communication Preferences") == ("Likes tea.",)
    assert stored.turn_count == 2


def test_start_consolidation_never_raises() -> None:
    memory = ProfileMemory(model=ProfileModel())  # no store, outside any graph
    memory.start_consolidation({"messages": None}, {}, ANN)
    memory.start_consolidation({}, {}, MemoryContext())
    assert memory.wait_for_background(5)


# --- turns the journal or the settings held back ------------------------------------------


@pytest.mark.slow
def test_a_turn_that_could_not_be_journaled_is_consolidated_with_the_next(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memory_plugin.context_management import journal

    append = journal.append_plan

    def failing(*args: Any, **kwargs: Any) -> Any:
        raise OSError("the store is down")
        yield  # a plan

    model = Flaky(plan=FACTS)
    graph = graph_for(backend, model)
    monkeypatch.setattr(journal, "append_plan", failing)
    assert turn(graph, "I just moved to Lisbon") == "Answer 0."
    assert wait_for_profiles()
    assert profile_of(backend) is None and model.shown == []
    monkeypatch.setattr(journal, "append_plan", append)
    turn(graph, "I write Rust at work")
    assert wait_for_profiles()
    stored = profile_of(backend)
    assert stored is not None and stored.turn_count == 2
    assert stored.bullets("Identity") == ("Lives in Lisbon.",)
    assert model.shown == ["I just moved to Lisbon", "I write Rust at work"]


@pytest.mark.slow
def test_turns_while_the_profile_is_off_never_reach_it(backend: Backend) -> None:
    from memory_plugin import LayeredSettings

    model = Flaky(plan=FACTS)
    graph = graph_for(backend, model)
    settings = LayeredSettings(backend.store)
    settings.update("user", ANN, set={"profile_user": False})
    turn(graph, "I just moved to Lisbon")
    assert wait_for_profiles()
    settings.update("user", ANN, set={"profile_user": True})
    turn(graph, "I write Rust at work")
    assert wait_for_profiles()
    stored = profile_of(backend)
    assert stored is not None and stored.bullets("Identity") == ()
    assert stored.bullets("Skills & Expertise") == ("Writes Rust.",)
    assert model.shown == ["I write Rust at work"]


# --- a user deleted while a turn's profile job is still working --------------------------


@pytest.mark.slow
def test_a_profile_job_in_flight_lands_before_the_user_is_deleted(backend: Backend) -> None:
    gate = threading.Event()
    graph = graph_for(backend, ProfileModel(plan=FACTS, gate=gate))
    turn(graph, "I just moved to Lisbon")
    threading.Timer(0.3, gate.set).start()  # the job answers after the deletion has begun
    erase_user(backend.store, Owner("ann"), checkpointer=backend.checkpointer)
    assert wait_for_profiles()
    assert profile_of(backend) is None and changes_of(backend) == []
    assert cursor_of(backend) is None


@pytest.mark.slow
async def test_a_profile_job_in_flight_lands_before_the_user_is_deleted_async(
    abackend: Backend,
) -> None:
    gate = threading.Event()
    graph = graph_for(abackend, ProfileModel(plan=FACTS, gate=gate))
    await graph.ainvoke(
        {"messages": [HumanMessage("I just moved to Lisbon")]}, config("t"), context=ANN
    )
    threading.Timer(0.3, gate.set).start()
    await aerase_user(abackend.store, Owner("ann"), checkpointer=abackend.checkpointer)
    await await_profiles()
    assert await ProfileMemory(abackend.store).aread(ANN) is None
    assert await ProfileMemory(abackend.store).achanges(ANN) == []


@pytest.mark.slow
def test_a_profile_job_in_flight_lands_before_a_forget_looks(backend: Backend) -> None:
    gate = threading.Event()
    graph = graph_for(backend, ProfileModel(plan=FACTS, gate=gate))
    turn(graph, "I just moved to Lisbon")
    threading.Timer(0.3, gate.set).start()
    forgetter = Forgetter.over(backend.store)
    forgotten = forgetter.apply(forgetter.preview(Owner("ann"), "Lisbon"))
    assert forgotten.removed >= 1
    assert wait_for_profiles()
    stored = profile_of(backend)
    assert stored is not None and stored.bullets("Identity") == ()
