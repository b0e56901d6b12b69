"""Two users' memory for the console's tests: ann (member of acme, admin of every settings
layer) with a unique string in every memory kind, and mallory (member of mallory-lab only).

Ann's memory is written through the library as her agent's runs would write it (notes on
several days, a thread, a profile consolidation) and through the REST API as ann.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from langchain_core.messages import HumanMessage

from memory_plugin import Backend, MemoryContext, OfflineModel, create_memory_graph
from memory_plugin.profile.memory import ProfileMemory, wait_for_profiles
from memory_plugin.provenance import origin
from memory_plugin.scoped import ScopedMemory
from memory_plugin.settings import MemorySettings

SETTINGS = MemorySettings(agent_memory=True, compaction_manual=True)
TOKENS: dict[str, dict[str, Any]] = {
    "ann-token": {
        "identity": "ann",
        "org_id": "o1",
        "workspaces": ["acme"],
        "agent_id": "helper",
        "spaces": ["s1"],
        "admin": ["platform", "org", "space:s1"],
    },
    "mallory-token": {
        "identity": "mallory",
        "org_id": "o1",
        "workspaces": ["mallory-lab"],
        "agent_id": "helper",
    },
    "bob-token": {"identity": "bob", "org_id": "o1", "workspaces": ["acme"]},
}
ANN = {"Authorization": "Bearer ann-token"}
BOB = {"Authorization": "Bearer bob-token"}
MALLORY = {"Authorization": "Bearer mallory-token"}
ANN_CTX = MemoryContext(user_id="ann", org_id="o1")
ANN_TEAM = MemoryContext(
    user_id="ann", org_id="o1", workspace_id="acme", thread_visibility="shared"
)
ANN_THREAD = "ann-thread-7"
SECRETS = {
    "document": "Quokka4471",
    "note": "Wombat8812",
    "old_note": "Kiwi2290",
    "team_document": "Narwhal3309",
    "team_note": "Ocelot5520",
    "entry": "Pangolin6634",
    "bounded": "Axolotl7745",
    "profile": "Tapir9956",
    "thread": "Gecko1187",
    "user_setting": 4321,
}
SETTING_LEAK = rf"note_max_chars\W{{1,4}}{SECRETS['user_setting']}\b"
ANN_WORDS = re.compile(
    r"\bann\b|acme|\bs1\b|"
    + "|".join(str(s) for s in SECRETS.values() if isinstance(s, str))
    + f"|{SETTING_LEAK}",
    re.IGNORECASE,
)


def leaks(text: str) -> list[str]:
    """Ann's names and unique strings found in `text`."""
    return ANN_WORDS.findall(text)


@dataclass(frozen=True)
class Seeded:
    """What was seeded: ann's note keys, newest and oldest."""

    note_key: str
    old_note_key: str
    team_note_key: str


def today() -> datetime:
    """Now, in UTC."""
    return datetime.now(UTC)


def seed_library(backend: Backend) -> Seeded:
    """Ann's notes (today and 40 days ago), team note, profile and thread, written as her
    agent would write them."""
    profile = ProfileMemory(backend.store, model=OfflineModel(), defaults=SETTINGS)
    profile.consolidate(ANN_CTX, f"I prefer {SECRETS['profile']} tea in the morning.", "Noted.")
    graph = create_memory_graph(
        OfflineModel(), store=backend.store, checkpointer=backend.checkpointer, settings=SETTINGS
    )
    config: Any = {"configurable": {"thread_id": ANN_THREAD}, "metadata": {"owner": "ann"}}
    for text in (f"My cat is called {SECRETS['thread']}.", "What is my cat called?"):
        graph.invoke({"messages": [HumanMessage(text)]}, config, context=ANN_CTX)
    assert wait_for_profiles()  # the turns' profile consolidation runs in the background
    scoped = ScopedMemory(backend.store, defaults=SETTINGS)
    day = today().date()
    with origin(source="code", actor="ann"):
        old = scoped.import_notes(
            ANN_CTX,
            [
                (day - timedelta(days=40), f"Ann's old project was {SECRETS['old_note']}"),
                (day - timedelta(days=9), "Ann visited the dentist"),
                (day - timedelta(days=5), "Ann booked a train"),
                (day - timedelta(days=2), "Ann bought a bicycle"),
            ],
        )
        note = scoped.remember(ANN_CTX, f"Ann's locker code word is {SECRETS['note']}")
        team = scoped.remember(ANN_TEAM, f"The acme release is called {SECRETS['team_note']}")
    return Seeded(note.key, old[0].key, team.key)


def seed_api(client: Any) -> None:
    """Ann's documents, entries and settings, written through the REST API as ann."""
    document = f"# Ann\n\n- Ann's badge says {SECRETS['document']}"
    answers = [
        client.put(
            "/api/personal/document", headers=ANN, json={"text": document, "expected_version": None}
        ),
        client.put(
            "/api/team/acme/document",
            headers=ANN,
            json={
                "text": f"# Acme\n\n- Project {SECRETS['team_document']}",
                "expected_version": None,
            },
        ),
        client.put(
            "/api/entries/agent/ann-secret",
            headers=ANN,
            json={"content": f"Ann's deploy key name is {SECRETS['entry']}"},
        ),
        client.put(
            "/api/entries/agent/house-style",
            headers=ANN,
            json={"content": "Answer in British English", "visibility": "shared"},
        ),
        client.post(
            "/api/entries/bounded",
            headers=ANN,
            json={
                "action": "add",
                "target": "user",
                "content": f"Ann's pet is {SECRETS['bounded']}",
            },
        ),
        client.put(
            "/api/settings/user",
            headers=ANN,
            json={"set": {"note_max_chars": SECRETS["user_setting"]}},
        ),
        client.put("/api/settings/space?space=s1", headers=ANN, json={"set": {"web_search": True}}),
        client.post("/api/personal/consolidate", headers=ANN),
        client.post("/api/team/acme/consolidate", headers=ANN),
    ]
    for answer in answers:
        assert answer.status_code == 200, (answer.request.url, answer.text)
