"""One test every memory kind passes (as langgraph's checkpoint conformance does for savers):
for each kind of memory_plugin.kinds.KINDS, through every door that writes it (the graph's
tool under invoke and ainvoke, create_agent with MemoryMiddleware, the console's REST, the MCP
gateway, `memory-plugin import`), on every backend: what Ann writes she reads back through
every other door that shows the kind, her export holds it, forget finds and removes it (gone
through every door), delete-user removes it, and neither Bob nor another org's Ann sees any
of it through any door, nor in forget's preview. Each case runs its kind alone (every other
kind switched off) over a backend opened as the writing door runs (connect or aconnect).
(Delete-user comes first: an import into a store still holding the
user's memory adds only what is missing, and forget leaves the profile and the bounded
targets in place, emptied.)

Context management holds threads, not memory: a turn writes it (the thread and its journal),
the console's thread list shows it, an export leaves it out (docs/privacy.md), forget lists
the thread and deletes it when asked, delete-user deletes it with the user's threads.

A new kind fails here until it is complete: add its row to CALLS (what it declares nowhere
else: the tool call that writes a text, the console's routes), then make every door pass.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import pytest

from memory_plugin.base import MemoryService
from memory_plugin.kinds import KINDS
from tests.kind_doors import (
    ANN,
    BOB,
    DOORS,
    OTHER_ANN,
    PEOPLE,
    Calls,
    Door,
    Kind,
    Person,
    World,
    alone,
    erased,
    exported,
    opened,
)

KIND = {kind.name: kind for kind in KINDS}


async def _document(client: httpx.AsyncClient, headers: dict[str, str], text: str) -> Any:
    """Save a personal document holding `text` over the current one."""
    current = (await client.get("/api/personal/document", headers=headers)).json()["document"]
    body = {
        "text": f"# Ann\n\n- Ann's badge says {text}",
        "expected_version": current and current["version"],
    }
    return await client.put("/api/personal/document", headers=headers, json=body)


CALLS: dict[str, Calls] = {
    "scoped_memory": Calls(
        KIND["scoped_memory"],
        write=("remember", lambda text: {"text": f"Ann's locker code word is {text}"}),
        read=("recall", {"query": "locker code word"}),
        rest_write=_document,
        rest_read=("/api/personal/document", "/api/personal/notes"),
    ),
    "profile": Calls(
        KIND["profile"],
        say="I prefer {} tea in the morning.",
        rest_read=("/api/profile",),
    ),
    "agent_memory": Calls(
        KIND["agent_memory"],
        write=("memory_store", lambda text: {"key": "code", "content": f"Deploy key {text}"}),
        read=("memory_recall", {"query": "deploy key"}),
        rest_write=lambda client, headers, text: client.put(
            "/api/entries/agent/code", headers=headers, json={"content": f"Deploy key {text}"}
        ),
        rest_read=("/api/entries/agent",),
    ),
    "bounded_memory": Calls(
        KIND["bounded_memory"],
        write=(
            "memory",
            lambda text: {"action": "add", "target": "user", "content": f"Ann's pet is {text}"},
        ),
        read=("memory", {"action": "read", "target": "user"}),
        rest_write=lambda client, headers, text: client.post(
            "/api/entries/bounded",
            headers=headers,
            json={"action": "add", "target": "user", "content": f"Ann's pet is {text}"},
        ),
        rest_read=("/api/entries/bounded",),
    ),
    "context_management": Calls(
        KIND["context_management"],
        say="My cat is called {}.",
        rest_read=("/api/threads",),
        exported=False,
    ),
}


def uncovered(kinds: Sequence[Kind]) -> list[str]:
    """The names of `kinds` that have no row in CALLS."""
    return [kind.name for kind in kinds if kind.name not in CALLS]


def test_every_kind_has_its_calls() -> None:
    assert uncovered(KINDS) == [], (
        f"add a row for {uncovered(KINDS)} to CALLS in {Path(__file__).name}: what a user "
        "says to write it, the tool calls that write and read a text, the console's routes, "
        "whether an export holds it"
    )
    assert set(CALLS) == set(KIND), "CALLS names a kind KINDS no longer has"


def test_a_sixth_kind_fails_here_until_it_has_its_calls() -> None:
    class Diary(MemoryService):
        name = "diary"

    assert uncovered((*KINDS, Diary)) == ["diary"]


@pytest.mark.parametrize("name", list(CALLS))
def test_the_calls_name_the_kinds_own_tools_and_some_door_writes_and_shows_it(name: str) -> None:
    calls = CALLS[name]
    own = {tool.name for tool in _tools(calls)}
    for call in (calls.write, calls.read):
        assert call is None or call[0] in own, f"{name} has no tool {call[0]!r}: {own}"
    assert any(door.writes(calls) for door in DOORS), f"no door writes {name}"
    assert any(door.reads(calls) for door in DOORS), f"no door shows {name}"


def _tools(calls: Calls) -> list[Any]:
    from langgraph.store.memory import InMemoryStore

    from memory_plugin.base import Parts
    from memory_plugin.kinds import build_kinds
    from memory_plugin.models.maintenance import MaintenanceModel
    from memory_plugin.offline.demo import DemoModel
    from memory_plugin.settings import SettingsCache

    settings = alone(calls.kind)
    cache = SettingsCache(settings)
    parts = Parts(InMemoryStore(), cache, MaintenanceModel(DemoModel()), model=DemoModel())
    built = build_kinds(parts, settings, every=True)
    return built[calls.kind.name].tools(None)


CASES = [
    pytest.param(name, door, id=f"{name}-{door.name}")
    for name, calls in CALLS.items()
    for door in DOORS
    if door.writes(calls)
]


async def _everything(world: World, calls: Calls, who: Person, text: str) -> dict[str, str]:
    """What every door that shows the kind shows `who` (asked about `text`), by door."""
    return {
        door.name: await door.read(world, calls, who, text)
        for door in DOORS
        if door.reads(calls) and door.reaches(world)
    }


def _holding(shown: dict[str, str], text: str) -> list[str]:
    return [door for door, seen in shown.items() if text in seen]


async def _found(world: World, who: Person, text: str) -> dict[str, Any]:
    """The console's forget preview of `text` for `who`: the places and threads holding it."""
    async with world.rest() as client:
        preview = await client.post("/api/forget/preview", headers=who.headers, json={"text": text})
    assert preview.status_code == 200, preview.text
    found: dict[str, Any] = preview.json()
    return found


async def _forget(world: World, who: Person, text: str) -> dict[str, Any]:
    """Forget `text` everywhere through the console as `who`: every place and thread its
    preview found."""
    found = await _found(world, who, text)
    ids = [place["id"] for place in found["places"] if place["editable"]]
    async with world.rest() as client:
        applied = await client.post(
            f"/api/forget/{found['preview_id']}/apply",
            headers=who.headers,
            json={"places": ids, "delete_threads": True},
        )
    assert applied.status_code == 200, applied.text
    assert all(outcome["done"] for outcome in applied.json()["outcomes"]), applied.json()
    return found


@pytest.mark.slow
@pytest.mark.parametrize(("name", "writer"), CASES)
async def test_a_kind_written_through_a_door_is_the_users_through_every_door(
    name: str, writer: Door, backend_url: str, tmp_path: Path
) -> None:
    calls = CALLS[name]
    async with opened(backend_url, writer.sync) as backend:
        world = World(backend, backend_url, tmp_path, alone(calls.kind), writer.sync)
        await _conforms(calls, writer, world)


async def _conforms(calls: Calls, writer: Door, world: World) -> None:
    """Write as Ann through `writer`; then every door, the export, delete-user and forget."""
    name = calls.kind.name
    if not writer.reaches(world):
        pytest.skip(f"{writer.name} cannot reach {world.url}: {writer.reaches.__doc__}")
    text = f"Zebu{uuid.uuid4().hex[:8]}"
    await writer.write(world, calls, ANN, text)
    shown = await _everything(world, calls, ANN, text)
    assert _holding(shown, text) == list(shown), f"Ann sees {text} only in {_holding(shown, text)}"
    assert (text in await exported(world, ANN)) is calls.exported
    for other in (BOB, OTHER_ANN):
        theirs = await _everything(world, calls, other, text)
        assert _holding(theirs, text) == [], f"{other.name} sees Ann's {name}"
        assert text not in await exported(world, other)
        theirs_found = await _found(world, other, text)
        assert theirs_found["places"] == theirs_found["threads"] == [], other.name

    await erased(world, ANN)
    for who in PEOPLE:
        assert _holding(await _everything(world, calls, who, text), text) == [], who.name
    assert text not in await exported(world, ANN)

    again = f"Zebu{uuid.uuid4().hex[:8]}"
    await writer.write(world, calls, ANN, again)
    assert _holding(await _everything(world, calls, ANN, again), again), "the rewrite is unseen"
    found = await _forget(world, ANN, again)
    assert found["places"] or found["threads"], f"forget finds no {name} of Ann's"
    assert _holding(await _everything(world, calls, ANN, again), again) == []
    assert again not in await exported(world, ANN)
