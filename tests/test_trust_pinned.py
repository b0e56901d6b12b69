"""Pinned entries keep room for the user: each qualifying kind (read-only, important
user_profile) is sure of half the pinned slots, ties are broken by recency then key; and the
recent window can only be lowered below the platform, on every layer. Every backend, invoke
and ainvoke."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memory_plugin import Backend, LayeredSettings, MemoryContext
from memory_plugin.agent import AgentMemory
from memory_plugin.agent.entries import Entry
from memory_plugin.agent.pinned import PINNED_TAG, pinned
from memory_plugin.errors import SettingsError
from tests.test_agent_entries import OFF, ON, aturn, graph_of, system_text, turn

ANN = MemoryContext(user_id="ann", agent_id="helper")
T0 = datetime(2026, 11, 1, tzinfo=UTC)


def seed(memory: AgentMemory) -> None:
    """Ten read-only policies, and three important facts about Ann."""
    for n in range(10):
        memory.store_entry(
            ANN, f"policy{n}", f"Policy {n} applies", visibility="read_only", importance=n / 10
        )
    for key, fact in [("name", "Ann Lee"), ("tz", "Ann lives in Tokyo"), ("diet", "Vegan")]:
        memory.store_entry(ANN, key, fact, category="user_profile", importance=0.8)


def pinned_keys(text: str) -> list[str]:
    """The keys of the pinned block's entries, in order."""
    block = text.split(f"</{PINNED_TAG}>")[0]
    return [line[3:].split("]")[0] for line in block.splitlines() if line.startswith("- [")]


EXPECTED = [f"policy{n}" for n in range(9, 2, -1)] + ["diet", "name", "tz"]


def test_read_only_entries_never_push_the_users_profile_out(backend: Backend) -> None:
    seed(AgentMemory(backend.store, defaults=ON))
    model, graph = graph_of(backend, "Hi.", settings=OFF)
    turn(graph, "t")
    assert sorted(pinned_keys(system_text(model))) == sorted(EXPECTED)
    assert pinned_keys(system_text(model))[:7] == EXPECTED[:7]


async def test_read_only_entries_never_push_the_users_profile_out_under_ainvoke(
    abackend: Backend,
) -> None:
    memory = AgentMemory(abackend.store, defaults=ON)
    for n in range(12):
        await memory.astore_entry(ANN, f"policy{n}", f"Policy {n}", visibility="read_only")
    await memory.astore_entry(
        ANN, "tz", "Ann lives in Tokyo", category="user_profile", importance=0.9
    )
    model, graph = graph_of(abackend, "Hi.", settings=OFF)
    await aturn(graph, "t")
    keys = pinned_keys(system_text(model))
    assert len(keys) == 10 and keys[-1] == "tz"
    assert sum(key.startswith("policy") for key in keys) == 9


def entry(key: str, visibility: str, importance: float, minutes: int) -> Entry:
    category = "user_profile" if visibility == "private" else "rules"
    at = (T0 + timedelta(minutes=minutes)).isoformat()
    return Entry(key, f"fact {key}", category, visibility, importance, at)  # type: ignore[arg-type]


def test_ties_are_broken_by_recency_then_key() -> None:
    entries = [
        entry("b", "private", 0.8, 5),
        entry("a", "private", 0.8, 5),
        entry("new", "private", 0.8, 9),
        entry("top", "private", 0.95, 0),
        entry("ro-old", "read_only", 0.5, 1),
        entry("ro-new", "read_only", 0.5, 2),
    ]
    assert [e.key for e in pinned(entries, 10, 0.7)] == ["ro-new", "ro-old", "top", "new", "a", "b"]
    assert [e.key for e in pinned(entries, 4, 0.7)] == ["ro-new", "ro-old", "top", "new"]
    assert [e.key for e in pinned(entries, 3, 0.7)] == ["ro-new", "ro-old", "top"]
    assert [e.key for e in pinned(entries[:4], 3, 0.7)] == ["top", "new", "a"]


def test_a_layer_below_the_platform_can_only_lower_the_window(backend: Backend) -> None:
    layers = LayeredSettings(backend.store)
    user = MemoryContext(user_id="ann", org_id="o1", space_id="s1")
    for layer in ("org", "space", "user"):
        with pytest.raises(SettingsError, match="can only be lowered below the platform's 20"):
            layers.update(layer, user, set={"recent_window_messages": 200})  # type: ignore[arg-type]
    assert layers.get(user).values.recent_window_messages == 20
    layers.update("user", user, set={"recent_window_messages": 12})
    assert layers.get(user).values.recent_window_messages == 12
    layers.update("platform", user, set={"recent_window_messages": 8})
    effective = layers.get(user)
    assert effective.values.recent_window_messages == 8
    assert effective.clamped["recent_window_messages"].stored == 12
    layers.update("platform", user, set={"recent_window_messages": 50})
    assert layers.get(user).values.recent_window_messages == 12
    layers.update("org", user, set={"recent_window_messages": 10})
    assert layers.get(user).values.recent_window_messages == 10


async def test_a_window_stored_above_the_platform_is_clamped_when_read(abackend: Backend) -> None:
    layers = LayeredSettings(abackend.store)
    user = MemoryContext(user_id="ann")
    await layers.aupdate("platform", user, set={"recent_window_messages": 40})
    await layers.aupdate("user", user, set={"recent_window_messages": 30})
    await layers.aupdate("platform", user, set={"recent_window_messages": 20})
    assert (await layers.aget(user)).values.recent_window_messages == 20
