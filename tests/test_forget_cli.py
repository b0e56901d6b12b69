"""`memory-plugin forget` as a user runs it: it lists every place the user's memory holds the
fact with its provenance, asks before changing anything (`--yes` does not ask), lists the
threads that mention the fact and deletes them only with `--threads`, and refuses an empty
text; afterwards a new thread does not know the fact."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from memory_plugin import MemoryContext, OfflineModel, connect, create_memory_graph
from memory_plugin.cli import main
from memory_plugin.context_management.journal import entries_plan
from memory_plugin.plans import run
from memory_plugin.profile.memory import ProfileMemory, wait_for_profiles
from memory_plugin.scope.identity import OWNER_METADATA_KEY
from memory_plugin.scoped import ScopedMemory
from tests.test_cli import cli, said

ANN = MemoryContext(user_id="ann", workspace_id="acme")
TEAM = MemoryContext(user_id="ann", workspace_id="acme", thread_visibility="shared")


def say(url: str, text: str, thread: str) -> str:
    with connect(url) as backend:
        graph = create_memory_graph(
            OfflineModel(), [], store=backend.store, checkpointer=backend.checkpointer
        )
        config: Any = {
            "configurable": {"thread_id": thread},
            "metadata": {OWNER_METADATA_KEY: "ann"},
        }
        out = graph.invoke({"messages": [HumanMessage(text)]}, config, context=ANN)
        assert wait_for_profiles()
        return str(out["messages"][-1].text)


def forget(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], *args: str, stdin: str = ""
) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(["forget", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def url(tmp_path: Path) -> str:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    say(url, "Remember that my dog is called Rex.", "first")
    say(url, "I have a dog called Rex.", "first")
    say(url, "Remember that the offsite is in Lisbon.", "second")
    with connect(url) as backend:
        ScopedMemory(backend.store).remember(TEAM, "Rex comes to the office on Fridays")
    return url


def test_forget_lists_asks_and_forgets(
    url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = forget(monkeypatch, capsys, "--user", "ann", "Rex", "--url", url, stdin="n\n")
    assert code == 1
    assert 'ann\'s memory holds "Rex" in 4 place(s):' in out
    assert "profile: the profile's change log (1 mention)" in out
    assert "personal memory of workspace acme: note " in out
    assert '"The user\'s dog is called Rex."  (tool, tool remember, thread first, by ann, ' in out
    assert 'profile: bullet in Identity\n     "Dog is called Rex."  (node, job profile' in out
    assert "Threads whose journal mentions it: first\n" in out
    assert "Thread journals are conversation history, not memory" in out
    assert "Forget 4 place(s)? [y/N] Nothing was changed." in out
    with connect(url) as backend:
        assert len(ScopedMemory(backend.store).list_notes(ANN)) == 3

    code, out, _ = forget(
        monkeypatch,
        capsys,
        "--user",
        "ann",
        "rex",
        "--workspace",
        "acme",
        "--url",
        url,
        stdin="y\n",
    )
    assert code == 0
    assert "team memory of workspace acme: note " in out
    assert out.endswith("Forget 5 place(s)? [y/N] Forgot 5 place(s).\n")
    with connect(url) as backend:
        notes = ScopedMemory(backend.store).list_notes(ANN)
        assert [n.body for n in notes] == ["The offsite is in Lisbon."]
        assert ScopedMemory(backend.store).list_notes(TEAM) == []
        profile = ProfileMemory(backend.store).read(ANN)
        assert profile is not None and "Rex" not in str(profile.sections)
        assert run(backend.store, entries_plan("first"))  # the thread is kept
    assert "Rex" not in say(url, "What is my dog called?", "third")


def test_forget_yes_does_not_ask_and_threads_deletes_the_threads(
    url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = forget(monkeypatch, capsys, "--user", "ann", "Rex", "--yes", "--url", url)
    assert (code, out.count("[y/N]")) == (0, 0)
    assert out.endswith(
        "Thread journals are conversation history, not memory: they are kept; "
        "pass --threads to delete these threads too.\nForgot 4 place(s).\n"
    )
    code, out, _ = forget(
        monkeypatch, capsys, "--user", "ann", "Rex", "--threads", "--url", url, stdin="y\n"
    )
    assert code == 0
    assert 'ann\'s memory holds "Rex" in 0 place(s):' in out
    assert "Forget 0 place(s) and 1 thread(s)? [y/N] " in out
    assert out.endswith("Deleted 1 thread(s): first\n")
    with connect(url) as backend:
        assert run(backend.store, entries_plan("first")) == []
        assert run(backend.store, entries_plan("second"))
    code, out, _ = forget(monkeypatch, capsys, "--user", "ann", "Rex", "--url", url)
    assert (code, out) == (0, 'Nothing in ann\'s memory mentions "Rex".\n')


@pytest.mark.parametrize("text", ["", "   "])
def test_an_empty_text_is_refused(
    url: str, text: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = forget(monkeypatch, capsys, "--user", "ann", text, "--yes", "--url", url)
    assert (code, out) == (2, "")
    assert err == (
        "memory-plugin: the text to forget is empty; name the fact or the word to forget\n"
    )
    with connect(url) as backend:
        assert len(ScopedMemory(backend.store).list_notes(ANN)) == 3


@pytest.mark.slow
def test_the_chatbot_forgets_a_fact_forgotten_with_the_console_script(tmp_path: Path) -> None:
    told = cli(tmp_path, "chat", "--user", "ann", stdin="remember that my dog is called Rex\n")
    assert told.returncode == 0 and "Rex" in told.stdout, told.stderr
    asked = cli(tmp_path, "chat", "--user", "ann", "--thread", "t2", stdin="what is my dog called?")
    assert "Rex" in next(line for line in said(asked.stdout) if line.startswith("assistant> "))
    done = cli(tmp_path, "forget", "--user", "ann", "Rex", "--yes")
    assert done.returncode == 0, done.stderr
    assert "  1. personal memory: note " in done.stdout
    assert done.stdout.endswith("place(s).\n") and "Forgot " in done.stdout
    again = cli(tmp_path, "chat", "--user", "ann", "--thread", "t3", stdin="what is my dog called?")
    assert again.returncode == 0, again.stderr
    (answer,) = [line for line in said(again.stdout) if line.startswith("assistant> ")]
    assert "Rex" not in answer
