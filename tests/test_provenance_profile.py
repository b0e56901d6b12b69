"""The profile's change log: one record per saved profile write, newest first, bounded, with
its provenance; the opt-out deletes it with the profile. Every backend, invoke and ainvoke."""

from __future__ import annotations

from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from memory_plugin import Backend, MemoryContext
from memory_plugin.errors import InvalidArgumentError
from memory_plugin.profile.changes import Change
from memory_plugin.profile.memory import CHANGES, ProfileMemory, await_profiles, wait_for_profiles
from memory_plugin.provenance import origin
from memory_plugin.scope import profile_scope
from tests.fakes import ProfileModel
from tests.test_profile import ANN, BOB, profile_graph

PLAN = {
    "Lisbon": {"op": "ADD", "section": "Identity", "bullet": "Lives in Lisbon."},
    "Porto": {
        "op": "UPDATE",
        "section": "Identity",
        "bullet": "Lives in Porto.",
        "replaces": "Lisbon",
    },
}
TURNS = ["I just moved to Lisbon", "what time is it?", "Actually I moved on to Porto"]


def log_items(store: Any, ctx: MemoryContext) -> list[Any]:
    return list(store.search((*profile_scope(ctx).namespace, CHANGES), limit=1000))


def check_log(found: list[Any]) -> None:
    assert [c.operations for c in found] == [
        (Change("UPDATE", "Identity", "Lives in Lisbon.", "Lives in Porto."),),
        (Change("ADD", "Identity", after="Lives in Lisbon."),),
    ]
    newest, oldest = found
    for change, turn in ((newest, 3), (oldest, 1)):
        assert change.provenance is not None
        assert (change.provenance.source, change.provenance.job) == ("node", "profile")
        assert (change.provenance.thread_id, change.provenance.turn) == ("a", turn)
        assert change.provenance.actor == "ann"
    assert newest.at >= oldest.at


def test_post_turn_consolidation_logs_each_change(backend: Backend) -> None:
    script = [AIMessage("Welcome!"), AIMessage("Noon."), AIMessage("Nice!")]
    graph, _ = profile_graph(backend, script, ProfileModel(plan=PLAN))
    for text in TURNS:
        graph.invoke(
            {"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": "a"}}, context=ANN
        )
    assert wait_for_profiles()
    memory = ProfileMemory(backend.store)
    check_log(memory.changes(ANN))
    assert len(memory.changes(ANN, limit=1)) == 1
    assert memory.changes(BOB) == []


async def test_post_turn_consolidation_logs_each_change_async(abackend: Backend) -> None:
    script = [AIMessage("Welcome!"), AIMessage("Noon."), AIMessage("Nice!")]
    graph, _ = profile_graph(abackend, script, ProfileModel(plan=PLAN))
    for text in TURNS:
        await graph.ainvoke(
            {"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": "a"}}, context=ANN
        )
    await await_profiles()
    memory = ProfileMemory(abackend.store)
    check_log(await memory.achanges(ANN))
    message = await memory.aopt_out(ANN)
    assert "permanently deleted" in message
    assert await memory.achanges(ANN) == []
    assert await memory.aread(ANN) is None


def test_opt_out_deletes_the_change_log(backend: Backend) -> None:
    memory = ProfileMemory(backend.store, model=ProfileModel(plan=PLAN))
    other = ProfileMemory(backend.store, model=ProfileModel(plan=PLAN))
    assert memory.consolidate(ANN, "I moved to Lisbon", "Nice.").status == "updated"
    assert other.consolidate(BOB, "I moved to Lisbon", "Nice.").status == "updated"
    assert len(log_items(backend.store, ANN)) == 1
    memory.opt_out(ANN)
    assert log_items(backend.store, ANN) == []
    assert memory.changes(ANN) == []
    assert len(memory.changes(BOB)) == 1


def test_the_log_keeps_the_newest_records_only(backend: Backend) -> None:
    cities = ["Lisbon", "Porto", "Braga", "Faro", "Evora"]
    plan = {
        city: {
            "op": "ADD" if i == 0 else "UPDATE",
            "section": "Identity",
            "bullet": f"Lives in {city}.",
            "replaces": cities[i - 1] if i else "",
        }
        for i, city in enumerate(cities)
    }
    memory = ProfileMemory(backend.store, model=ProfileModel(plan=plan), keep_changes=3)
    with origin(source="api", actor="ann"):
        for city in cities:
            assert memory.consolidate(ANN, f"I moved to {city}", "Ok.").status == "updated"
    found = memory.changes(ANN, limit=50)
    assert [c.operations[0].after for c in found] == [
        "Lives in Evora.",
        "Lives in Faro.",
        "Lives in Braga.",
    ]
    assert {c.provenance.source for c in found if c.provenance} == {"api"}
    assert len(log_items(backend.store, ANN)) == 3


def test_bad_arguments_are_refused(backend: Backend) -> None:
    memory = ProfileMemory(backend.store)
    for limit in (0, -1, True, "5"):
        with pytest.raises(InvalidArgumentError, match="limit"):
            memory.changes(ANN, limit=limit)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="keep_changes"):
        ProfileMemory(backend.store, keep_changes=0)
