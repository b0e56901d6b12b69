"""LangGraph Studio smoke test: `langgraph dev` serves the root langgraph.json (its auth
included), and a run of `memory_agent` through the langgraph-sdk client, authenticated with
the auth example's demo token for ann, writes memory to the server's store and streams the
memory events. The server runs offline with the built-in offline model
(MEMORY_MODEL=memory_plugin.offline.demo:studio_model); see tests/langgraph_server.py.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.langgraph_server import client_for, langgraph_dev, stream_run

pytestmark = pytest.mark.slow

USER = "ann"
TOKEN = "ann-demo-token"
NOTES_NS = ["memory_plugin", "personal", USER, "notes"]
PROFILE_NS = ["memory_plugin", "profile", USER]
PROFILE_KEY = "memory.md"


@pytest.fixture
def studio_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A running `langgraph dev` serving langgraph.json with the demo tokens; yields its URL."""
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    with langgraph_dev(tmp_path) as url:
        yield url


def consolidated_profile(client: Any) -> Any:
    """The stored profile, once the run's background consolidation has written it (None if
    it never does within a minute)."""
    for _ in range(600):
        try:
            item = client.store.get_item(PROFILE_NS, PROFILE_KEY)
        except Exception:  # not found yet
            item = None
        if item is not None:
            return item
        threading.Event().wait(0.1)
    return None


def test_memory_agent_on_langgraph_dev(studio_server: str) -> None:
    client = client_for(studio_server, TOKEN)
    thread = client.threads.create()
    run = stream_run(
        client,
        thread["thread_id"],
        "Hi, my name is Ann. I prefer short answers.",
        context={"user_id": USER},
    )
    assert not run.errors, run.errors

    memory_events = {(e.get("kind"), e.get("action")) for e in run.events}
    assert all(e.get("type") == "memory_event" for e in run.events), run.events
    assert ("scoped_memory", "note_stored") in memory_events, run.events
    assert run.values, "no values were streamed"
    answer = run.values[-1]["messages"][-1]["content"]
    assert answer == "Noted: your name is Ann. You prefer short answers."

    notes = client.store.search_items(NOTES_NS, limit=20)["items"]
    assert sorted(item["value"]["text"] for item in notes) == [
        "- The user prefers short answers.",
        "- The user's name is Ann.",
    ], notes
    profile = consolidated_profile(client)  # written in the background, after the run
    assert profile is not None
    text = profile["value"]["text"]
    assert "Name is Ann." in text, text
    assert "Prefers short answers." in text, text
