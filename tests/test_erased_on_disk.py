"""Deleted means unreadable on disk: after each way of removing memory on SQLite, the
database file and its -wal and -shm files hold no copy of the removed text, neither as
written, lowercased (the keyword index's terms) nor in UTF-16: once closed, and while open
right after the removal returns (the backend empties the write-ahead log itself).

Before secure_delete, SQLite only unlinked removed rows and left their bytes in the file's
pages (41 copies after one delete-user of a note and a thread); before the backend emptied
the log after each removal, memory.db-wal held the removed text until the last close.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from langchain_core.language_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from memory_plugin import MemoryContext, OfflineModel, aconnect, connect, create_memory_graph
from memory_plugin.agent import AgentMemory
from memory_plugin.backends import index
from memory_plugin.bounded import BoundedMemory
from memory_plugin.cli import main
from memory_plugin.context_management.journal import adelete_thread, delete_thread
from memory_plugin.privacy.erase import aerase_user
from memory_plugin.privacy.forget import Forgetter
from memory_plugin.privacy.inventory import Owner
from memory_plugin.profile.memory import ProfileMemory, await_profiles, wait_for_profiles
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server import create_app
from memory_plugin.settings import MemorySettings
from tests.console_seed import ANN as ANN_TOKEN
from tests.console_seed import SECRETS, TOKENS, seed_api, seed_library
from tests.console_seed import SETTINGS as SEED

WORD = "Zyxquorblat"
ANN = MemoryContext(user_id="ann")
HELPER = MemoryContext(user_id="ann", agent_id="helper")
SETTINGS = MemorySettings(agent_memory=True, bounded_memory=True)
THREAD: Any = {"configurable": {"thread_id": "ann-thread"}}
FILES = ("memory.db", "memory.db-wal", "memory.db-shm")
ANNS = ("document", "note", "old_note", "entry", "bounded", "profile", "thread")
"""What console_seed writes of ann's alone."""


@contextmanager
def seeded_console(folder: Path) -> Iterator[TestClient]:
    """The console over a SQLite file in `folder`, seeded as tests/console_seed.py does."""
    with connect(f"sqlite:///{folder / 'memory.db'}") as backend:
        seed_library(backend)
        app = create_app(
            backend.store, tokens=TOKENS, checkpointer=backend.checkpointer, settings=SEED
        )
        client = TestClient(app)
        seed_api(client)
        yield client


def copies(folder: Path, word: str = WORD) -> dict[str, int]:
    """The copies of `word` in each file of the database, by file name."""
    forms = {word.encode(), word.lower().encode(), word.encode("utf-16-le")}
    found = {}
    for name in FILES:
        path = folder / name
        if path.exists():
            data = path.read_bytes()
            found[name] = sum(data.count(form) for form in forms)
    return {name: count for name, count in found.items() if count}


def operator_checkpoint(folder: Path) -> str:
    """What `PRAGMA wal_checkpoint(TRUNCATE)` gives, run by another process as an operator
    would while the app has the database open (docs/privacy.md)."""
    code = (
        "import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); "
        "print(db.execute('PRAGMA wal_checkpoint(TRUNCATE)').fetchone())"
    )
    done = subprocess.run(
        [sys.executable, "-c", code, str(folder / "memory.db")],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


def _turn(backend: Any, text: str, settings: MemorySettings | None = None) -> None:
    graph = create_memory_graph(
        OfflineModel(), store=backend.store, checkpointer=backend.checkpointer, settings=settings
    )
    graph.invoke({"messages": [HumanMessage(text)]}, THREAD, context={"user_id": "ann"})
    assert wait_for_profiles()


def delete_a_note(backend: Any, folder: Path) -> None:
    scoped = ScopedMemory(backend.store)
    note = scoped.remember(ANN, f"My locker word is {WORD}")
    assert copies(folder)
    scoped.delete_note(ANN, note.key)


def remove_a_bounded_entry(backend: Any, folder: Path) -> None:
    bounded = BoundedMemory(backend.store, settings=SETTINGS)
    bounded.apply(HELPER, "add", "user", f"Locker word {WORD}")
    assert copies(folder)
    bounded.apply(HELPER, "remove", "user", old_text="Locker word")


def forget_an_entry(backend: Any, folder: Path) -> None:
    agent = AgentMemory(backend.store, settings=SETTINGS)
    agent.store_entry(HELPER, "locker", f"Ann's locker word is {WORD}")
    assert copies(folder)
    agent.forget(HELPER, "locker")


def turn_the_profile_off(backend: Any, folder: Path) -> None:
    profile = ProfileMemory(backend.store, model=OfflineModel())
    profile.consolidate(ANN, f"Hi, my name is Ann. My locker word is {WORD}.", "Noted.")
    assert copies(folder)
    profile.opt_out(ANN)


def delete_a_thread(backend: Any, folder: Path) -> None:
    only_the_thread = MemorySettings(scoped_memory=False, profile=False)
    _turn(backend, f"Remember that my locker word is {WORD}.", only_the_thread)
    assert copies(folder)
    delete_thread(backend.checkpointer, backend.store, "ann-thread", keep_journal=False)


def forget_everywhere(backend: Any, folder: Path) -> None:
    scoped = ScopedMemory(backend.store, settings=SETTINGS)
    scoped.remember(ANN, f"My locker word is {WORD}")
    scoped.write_document(ANN, f"# Memory\n- The locker word is {WORD}.\n- Prefers tea.")
    BoundedMemory(backend.store, settings=SETTINGS).apply(
        HELPER, "add", "user", f"Locker word {WORD}"
    )
    AgentMemory(backend.store, settings=SETTINGS).store_entry(HELPER, "locker", f"It is {WORD}")
    ProfileMemory(backend.store, model=OfflineModel(), settings=SETTINGS).consolidate(
        ANN, f"Hi, my name is Ann. My locker word is {WORD}.", "Noted."
    )
    assert copies(folder)
    forgetter = Forgetter.over(backend.store, SETTINGS)
    preview = forgetter.preview(Owner("ann"), WORD)
    assert len(preview.places) >= 4
    forgetter.apply(preview)


REMOVALS: dict[str, Callable[[Any, Path], None]] = {
    "note": delete_a_note,
    "entry": forget_an_entry,
    "bounded entry": remove_a_bounded_entry,
    "profile off": turn_the_profile_off,
    "thread": delete_a_thread,
    "forget everywhere": forget_everywhere,
}


@pytest.mark.slow
@pytest.mark.parametrize("removal", REMOVALS)
def test_removed_text_is_not_on_disk(removal: str, tmp_path: Path) -> None:
    with connect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        ScopedMemory(backend.store).remember(ANN, "Ann keeps a kayak")
        REMOVALS[removal](backend, tmp_path)
        assert copies(tmp_path) == {}
    assert copies(tmp_path) == {}
    assert copies(tmp_path, "kayak")  # what was not removed is still there


@pytest.mark.slow
def test_delete_user_from_the_command_line_leaves_nothing_on_disk(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    with connect(url) as backend:
        ScopedMemory(backend.store).remember(ANN, f"My locker word is {WORD}")
        _turn(backend, f"My locker word is {WORD}, remember it.")
    assert copies(tmp_path)
    assert main(["delete-user", "ann", "--threads", "--url", url]) == 0
    assert copies(tmp_path) == {}


@pytest.mark.slow
async def test_delete_user_under_async_leaves_nothing_on_disk(tmp_path: Path) -> None:
    async with aconnect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        await ScopedMemory(backend.store).aremember(ANN, f"My locker word is {WORD}")
        graph = create_memory_graph(
            OfflineModel(), store=backend.store, checkpointer=backend.checkpointer
        )
        said = {"messages": [HumanMessage(f"My locker word is {WORD}.")]}
        await graph.ainvoke(said, THREAD, context={"user_id": "ann"})
        await await_profiles()
        assert copies(tmp_path)
        erased = await aerase_user(backend.store, Owner("ann"), checkpointer=backend.checkpointer)
        assert erased.threads == 1
    assert copies(tmp_path) == {}


@pytest.mark.slow
def test_delete_user_over_rest_leaves_nothing_of_theirs_on_disk(tmp_path: Path) -> None:
    with seeded_console(tmp_path) as client:
        theirs = [str(SECRETS[name]) for name in ANNS]
        assert all(copies(tmp_path, word) for word in theirs)
        answer = client.delete("/api/users/ann?threads=true", headers=ANN_TOKEN)
        assert answer.status_code == 200, answer.text
    assert [word for word in theirs if copies(tmp_path, word)] == []
    assert copies(tmp_path, str(SECRETS["team_note"]))  # the workspace's memory stays


@pytest.mark.slow
def test_forget_from_the_command_line_with_threads_leaves_nothing_on_disk(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    with connect(url) as backend:
        ScopedMemory(backend.store).remember(ANN, f"My locker word is {WORD}")
        _turn(backend, f"My locker word is {WORD}, remember it.")
    assert copies(tmp_path)
    assert main(["forget", WORD, "--user", "ann", "--yes", "--threads", "--url", url]) == 0
    assert "ann-thread" in capsys.readouterr().out
    assert copies(tmp_path) == {}


class Scripted(GenericFakeChatModel):
    """A scripted model that takes the graph's tools."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> Scripted:  # type: ignore[override]
        return self


def _forgets_by_tool() -> Any:
    """A model that forgets the agent entry `locker`, then removes the bounded entry."""
    calls = [
        ("memory_forget", {"key": "locker"}),
        ("memory", {"action": "remove", "target": "user", "old_text": "Locker word"}),
    ]
    script = [
        AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"call-{n}"}])
        for n, (name, args) in enumerate(calls)
    ]
    return Scripted(messages=iter([*script, AIMessage("Both gone.")]))


TOOLS = MemorySettings(agent_memory=True, bounded_memory=True, profile=False)
"""The tool tests keep the thread in memory: its checkpoints hold the prompt blocks the turn
began with, conversation history that only deleting the thread removes."""


FORGET = HumanMessage("Forget my locker word.")


def _forgetting_graph(store: Any) -> Any:
    """The shipped graph over `store` whose model forgets the locker word with its tools (the
    thread kept in memory: its checkpoints hold the turn's prompt blocks)."""
    return create_memory_graph(
        _forgets_by_tool(), store=store, checkpointer=InMemorySaver(), settings=TOOLS
    )


@pytest.mark.slow
def test_the_models_memory_tools_leave_nothing_on_disk_under_invoke(tmp_path: Path) -> None:
    with connect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        AgentMemory(backend.store, settings=TOOLS).store_entry(HELPER, "locker", f"It is {WORD}")
        BoundedMemory(backend.store, settings=TOOLS).apply(
            HELPER, "add", "user", f"Locker word {WORD}"
        )
        assert copies(tmp_path)
        graph, said = _forgetting_graph(backend.store), {"messages": [FORGET]}
        out = graph.invoke(said, THREAD, context={"user_id": "ann", "agent_id": "helper"})
        assert out["messages"][-1].content == "Both gone."
        assert copies(tmp_path) == {}


@pytest.mark.slow
async def test_the_models_memory_tools_leave_nothing_on_disk_under_ainvoke(
    tmp_path: Path,
) -> None:
    async with aconnect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        agent = AgentMemory(backend.store, settings=TOOLS)
        await agent.astore_entry(HELPER, "locker", f"It is {WORD}")
        bounded = BoundedMemory(backend.store, settings=TOOLS)
        await bounded.aapply(HELPER, "add", "user", f"Locker word {WORD}")
        assert copies(tmp_path)
        graph, said = _forgetting_graph(backend.store), {"messages": [FORGET]}
        out = await graph.ainvoke(said, THREAD, context={"user_id": "ann", "agent_id": "helper"})
        assert out["messages"][-1].content == "Both gone."
        assert copies(tmp_path) == {}


@pytest.mark.slow
async def test_async_removals_leave_nothing_on_disk_while_open(tmp_path: Path) -> None:
    async with aconnect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        scoped = ScopedMemory(backend.store, settings=SETTINGS)
        await scoped.aremember(ANN, "Ann keeps a kayak")
        note = await scoped.aremember(ANN, f"My locker word is {WORD}")
        assert copies(tmp_path)
        await scoped.adelete_note(ANN, note.key)
        assert copies(tmp_path) == {}

        await scoped.awrite_document(ANN, f"# Memory\n- The locker word is {WORD}.\n- Tea.")
        forgetter = Forgetter.over(backend.store, SETTINGS)
        await forgetter.aapply(await forgetter.apreview(Owner("ann"), WORD))
        assert copies(tmp_path) == {}

        graph = create_memory_graph(
            OfflineModel(),
            store=backend.store,
            checkpointer=backend.checkpointer,
            settings=MemorySettings(scoped_memory=False, profile=False),
        )
        said = {"messages": [HumanMessage(f"Remember that my locker word is {WORD}.")]}
        await graph.ainvoke(said, THREAD, context={"user_id": "ann"})
        assert copies(tmp_path)
        await adelete_thread(backend.checkpointer, backend.store, "ann-thread", keep_journal=False)
        assert copies(tmp_path) == {}
    assert copies(tmp_path, "kayak")


@pytest.mark.slow
def test_forget_everywhere_over_rest_leaves_nothing_on_disk_while_open(tmp_path: Path) -> None:
    with seeded_console(tmp_path) as client:
        word = str(SECRETS["document"])
        assert copies(tmp_path, word)
        preview = client.post("/api/forget/preview", json={"text": word}, headers=ANN_TOKEN)
        assert preview.status_code == 200, preview.text
        assert preview.json()["places"]
        applied = client.post(
            f"/api/forget/{preview.json()['preview_id']}/apply", headers=ANN_TOKEN
        )
        assert applied.status_code == 200, applied.text
        assert copies(tmp_path, word) == {}


READER = (
    "import sqlite3, sys; db = sqlite3.connect(sys.argv[1], isolation_level=None); "
    "db.execute('BEGIN'); db.execute('SELECT count(*) FROM store').fetchone(); "
    "print('reading', flush=True); sys.stdin.readline()"
)


@pytest.mark.slow
def test_a_reader_in_another_process_delays_the_purge_and_never_fails_the_removal(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(index, "_logged", set())
    with connect(f"sqlite:///{tmp_path / 'memory.db'}") as backend:
        scoped = ScopedMemory(backend.store)
        note = scoped.remember(ANN, f"My locker word is {WORD}")
        reader = subprocess.Popen(
            [sys.executable, "-c", READER, str(tmp_path / "memory.db")],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        try:
            assert reader.stdout is not None and reader.stdout.readline() == "reading\n"
            scoped.delete_note(ANN, note.key)
        finally:
            reader.communicate("\n", timeout=60)
        assert scoped.get_note(ANN, note.key) is None
        assert "could not empty its write-ahead log" in caplog.text
        assert list(copies(tmp_path)) == ["memory.db-wal"]  # the reader kept the log
        assert operator_checkpoint(tmp_path) == "(0, 0, 0)"
        assert copies(tmp_path) == {}
    assert copies(tmp_path) == {}
