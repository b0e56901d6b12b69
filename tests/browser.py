"""Helpers for the console's browser tests: seeded data, the real app on a port, chromium."""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage

from memory_plugin import MemoryContext, connect, create_memory_graph
from memory_plugin.agent import AgentMemory
from memory_plugin.bounded import BoundedMemory
from memory_plugin.offline.demo import DemoModel
from memory_plugin.provenance import origin
from memory_plugin.scope.identity import OWNER_METADATA_KEY
from memory_plugin.scoped import ScopedMemory
from memory_plugin.settings import LayeredSettings

ANN_TOKEN = "ann-token"
SPACE = "s1"
MALLORY_TOKEN = "mallory-token"
TOKENS = {
    ANN_TOKEN: {
        "identity": "ann",
        "org_id": "o1",
        "agent_id": "helper",
        "workspaces": ["acme"],
        "spaces": [SPACE],
        "admin": ["org", f"space:{SPACE}"],
    },
    MALLORY_TOKEN: {"identity": "mallory", "org_id": "o2", "agent_id": "helper"},
}
ANN = MemoryContext(user_id="ann", org_id="o1", agent_id="helper", workspace_id="acme")
ANN_TEAM = MemoryContext(
    user_id="ann", org_id="o1", agent_id="helper", workspace_id="acme", thread_visibility="shared"
)
MALLORY = MemoryContext(user_id="mallory", org_id="o2", agent_id="helper")
TODAY = datetime.now(UTC).date()
# Ann's personal notes: one per day, ten days back, so three days fit a page and more wait.
ANN_DAYS = [TODAY - timedelta(days=n) for n in range(1, 11)]
LOCKED = "recall_default_k"
THREAD = "ann-thread-1"
DEBIAN_CHROMIUM = "/usr/bin/chromium"
MARKUP = 'Markup stays text: <img src=x onerror="window.pwned=1"> <b>bold</b>'


def ann_note(day: date) -> str:
    """The text of ann's seeded note for one day."""
    return f"Ann's note from {day.isoformat()}: the ledger export runs on day {day.day}"


def seed(url: str) -> None:
    """Ann's and mallory's memory of every kind, and a workspace acme of ann's."""
    backend = connect(url)
    try:
        store = backend.store
        settings = LayeredSettings(store)
        settings.update(
            "platform",
            ANN,
            set={"agent_memory": True, "bounded_memory": True, "compaction_manual": True},
        )
        scoped = ScopedMemory(store)
        graph = create_memory_graph(
            DemoModel(
                script=[
                    AIMessage(
                        "",
                        tool_calls=[
                            {
                                "name": "remember",
                                "args": {"text": "Ann prefers the quarterly report as a PDF"},
                                "id": "call-remember-1",
                            }
                        ],
                    ),
                    "Noted: the quarterly report goes out as a PDF.",
                ]
            ),
            store=store,
            checkpointer=backend.checkpointer,
        )
        graph.invoke(
            {"messages": [HumanMessage("Hi, my name is Ann. Send the quarterly report as PDF.")]},
            {"configurable": {"thread_id": THREAD}, "metadata": {OWNER_METADATA_KEY: "ann"}},
            context=ANN,
        )
        with origin(source="tool", tool="remember", thread_id="ann-older-thread", turn=2):
            scoped.import_notes(ANN, [(day, ann_note(day)) for day in ANN_DAYS])
        scoped.remember(ANN, MARKUP)
        with origin(source="api", actor="ann"):
            scoped.write_document(ANN, "# Ann\n\n- Works on the ledger team\n")
            scoped.write_document(
                ANN, "# Ann\n\n- Works on the ledger team\n- Likes PDFs\n", expected_version=1
            )
        with origin(source="tool", tool="remember", thread_id="acme-thread", turn=1):
            scoped.import_notes(ANN_TEAM, [(TODAY, "Acme deploys on Tuesdays after standup")])
        with origin(source="api", actor="ann"):
            scoped.write_document(ANN_TEAM, "# Acme\n\n- Deploys on Tuesdays\n")
        with origin(source="tool", tool="memory"):
            BoundedMemory(store).apply(ANN, "add", "memory", "Ann's repo uses ruff and mypy")
            BoundedMemory(store).apply(ANN, "add", "user", "Ann writes in British English")
        agents = AgentMemory(store)
        with origin(source="tool", tool="memory_store", thread_id=THREAD):
            agents.store_entry(ANN, "ann_stack", "Ann's services run on Python 3.11")
        with origin(source="tool", tool="remember", thread_id="mallory-thread", turn=1):
            scoped.remember(MALLORY, "Mallory's own reminder about the audit")
        settings.update("org", MALLORY, set={"agent_memory": False, "scoped_memory": False})
        settings.update("platform", ANN, lock=[LOCKED])
        settings.update(
            "space",
            MemoryContext(user_id="ann", org_id="o1", space_id=SPACE),
            set={"web_search": True},
        )
    finally:
        backend.close()


def free_port() -> int:
    """A TCP port nobody listens on now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def serve(url: str) -> Iterator[str]:
    """The real console app over `url` on a free port (uvicorn in a thread): its base URL."""
    import uvicorn

    from memory_plugin.server import create_app
    from memory_plugin.server.page import mount_page

    app = create_app(url=url, tokens=TOKENS)
    if not any(getattr(route, "path", None) == "/" for route in app.routes):
        mount_page(app)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the console app did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)


def missing(reason: str) -> None:
    """Fail in CI (the browser tests must run there), skip elsewhere."""
    if os.environ.get("CI"):
        pytest.fail(f"browser tests cannot run in CI: {reason}")
    pytest.skip(reason)


@contextmanager
def chromium() -> Iterator[Any]:
    """Debian's chromium driven by Playwright, headless, with background networking off."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing("playwright is not installed (pip install playwright)")
    executable = shutil.which("chromium") or DEBIAN_CHROMIUM
    if not Path(executable).exists():
        missing("Debian's chromium is not installed (apt-get install chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=executable,
            args=["--no-sandbox", "--disable-background-networking", "--disable-dev-shm-usage"],
            headless=True,
        )
        try:
            yield browser
        finally:
            browser.close()


def artifacts(tmp_path: Path) -> Path:
    """Where screenshots go: $MEMORY_TEST_ARTIFACTS when set, else the test's tmp_path."""
    folder = Path(os.environ.get("MEMORY_TEST_ARTIFACTS") or tmp_path)
    folder.mkdir(parents=True, exist_ok=True)
    return folder
