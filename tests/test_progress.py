"""Long commands show progress on a terminal and stay quiet in a pipe: `export`, `import`,
`forget`, `delete-user` and `consolidate` over a store of a few hundred items draw a bar on
standard error only when it is a terminal, and each ends saying what it did, in counts that
match what the store holds."""

from __future__ import annotations

import fcntl
import io
import json
import os
import pty
import re
import struct
import subprocess
import termios
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult

from memory_plugin import MemoryContext, ScopedMemory, aconnect, connect
from memory_plugin.cli import main
from memory_plugin.privacy import Forgetter, Owner, aerase_user
from memory_plugin.scoped.consolidation import ScopeResult
from memory_plugin.scoped.shards import run_workers
from tests.conftest import url_for
from tests.fakes import MergingModel
from tests.test_cli import SCRIPT, cli, environment

ANN = MemoryContext(user_id="ann")
ANN_ACME = MemoryContext(user_id="ann", workspace_id="acme")
BOB = MemoryContext(user_id="bob")
PERSONAL, IN_ACME = 240, 60
MODEL = "tests.fakes:merging_model"


class Terminal(io.StringIO):
    """Standard error as a terminal: it says it is one."""

    def isatty(self) -> bool:
        return True


def seed(url: str) -> None:
    """Ann's personal notes (three of them about Rex) and her notes in workspace acme, and
    Bob's few notes, written through the real API."""
    days = [f"2026-10-{day:02}" for day in range(1, 29)]
    personal = [(days[n % 28], f"ann's fact number {n}") for n in range(PERSONAL - 3)]
    personal += [(days[n], f"Rex came to the office on day {n}") for n in range(3)]
    with connect(url) as backend:
        memory = ScopedMemory(backend.store)
        memory.import_notes(ANN, personal)
        memory.import_notes(ANN_ACME, [(days[n % 28], f"acme fact {n}") for n in range(IN_ACME)])
        memory.import_notes(BOB, [(days[0], "Bob likes tea"), (days[1], "Bob rides a bike")])


def held(url: str, ctx: MemoryContext) -> int:
    """How many notes the store holds in a scope."""
    with connect(url) as backend:
        return len(ScopedMemory(backend.store).list_notes(ctx))


def command(
    monkeypatch: pytest.MonkeyPatch, *argv: str, terminal: bool, stdin: str = ""
) -> tuple[int, str, str]:
    """Run `memory-plugin argv` in this process, standard error a terminal or a pipe."""
    out, err = io.StringIO(), Terminal() if terminal else io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    monkeypatch.setattr("sys.stderr", err)
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def assert_bar(err: str, *shown: str) -> str:
    """A bar was drawn in place (carriage returns, no new line) showing each of `shown`, then
    cleared; returns what standard error says after it."""
    bar, _, said = err.rpartition("\r")
    assert re.search(r"\r +$", bar) and "\n" not in bar, err
    for text in shown:
        assert text in bar, (text, err)
    return said


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    found = url_for(request.param, request, tmp_path)
    seed(found)
    return found


def test_export_and_import_show_a_bar_on_a_terminal_and_say_how_many_items(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = command(monkeypatch, "export", "--user", "ann", "--url", url, terminal=True)
    assert code == 0
    document = json.loads(out)
    assert len(document["items"]) == held(url, ANN) + held(url, ANN_ACME) == PERSONAL + IN_ACME
    assert assert_bar(err, "export ann: items read") == (
        "Exported user 'ann': personal memory in no workspace (personal) and workspaces acme; "
        f"{PERSONAL + IN_ACME} items.\n"
    )
    path = tmp_path / "ann.json"
    path.write_text(out, encoding="utf-8")
    other = f"sqlite:///{tmp_path / 'other.db'}"
    code, out, err = command(monkeypatch, "import", str(path), "--url", other, terminal=True)
    assert code == 0
    total = PERSONAL + IN_ACME
    said = assert_bar(err, "items checked: 100%", f"{total}/{total}", "items written: 100%")
    assert said == ""
    assert out.startswith(f"Imported {PERSONAL + IN_ACME} items for user 'ann': ")
    assert (held(other, ANN), held(other, ANN_ACME)) == (PERSONAL, IN_ACME)


def test_export_and_import_in_a_pipe_draw_no_bar(
    url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = command(monkeypatch, "export", "--user", "bob", "--url", url, terminal=False)
    assert code == 0 and len(json.loads(out)["items"]) == held(url, BOB) == 2
    assert err == "Exported user 'bob': personal memory in no workspace (personal); 2 items.\n"
    path = tmp_path / "bob.json"
    path.write_text(out, encoding="utf-8")
    code, out, err = command(
        monkeypatch, "import", str(path), "--merge", "--url", url, terminal=False
    )
    assert (code, err) == (0, "")
    assert out.splitlines()[:2] == [
        "Imported 0 items for user 'bob': 0 scoped_memory, 0 profile, 0 agent_memory, "
        "0 bounded_memory, 0 settings.",
        "Skipped 2:",
    ]


def test_delete_user_shows_the_deleting_and_says_what_it_deleted(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    code, out, err = command(monkeypatch, "delete-user", "ann", "--url", url, terminal=True)
    assert code == 0
    total = PERSONAL + IN_ACME
    said = assert_bar(err, "delete-user ann: items read", "items deleted: 100%", f"{total}/{total}")
    assert said == ""
    assert out == (
        f"Deleted user 'ann': {total} scoped_memory, 0 profile, 0 agent_memory, "
        "0 bounded_memory, 0 settings items.\n"
    )
    assert (held(url, ANN), held(url, ANN_ACME), held(url, BOB)) == (0, 0, 2)
    code, out, err = command(monkeypatch, "delete-user", "bob", "--url", url, terminal=False)
    assert code == 0 and out.startswith("Deleted user 'bob': 2 scoped_memory, ")
    assert err == ""


@pytest.mark.parametrize("terminal", [True, False])
def test_forget_across_a_large_store_shows_the_search_where_asked(
    url: str, terminal: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ("forget", "--user", "ann", "Rex", "--yes", "--url", url)
    code, out, err = command(monkeypatch, *argv, terminal=terminal)
    assert code == 0
    assert 'ann\'s memory holds "Rex" in 3 place(s):' in out
    assert out.endswith("Forgot 3 place(s).\n")
    if terminal:
        assert assert_bar(err, "forget ann: kinds searched", "places forgotten: 100%", "3/3") == ""
    else:
        assert err == ""
    with connect(url) as backend:
        notes = ScopedMemory(backend.store).list_notes(ANN)
    assert len(notes) == PERSONAL - 3 and not any("Rex" in note.body for note in notes)


def seed_scopes(url: str, users: int) -> None:
    """Two notes ten days old in each of `users` scopes."""
    old = lambda: datetime.now(UTC) - timedelta(days=10)  # noqa: E731
    with connect(url) as backend:
        memory = ScopedMemory(backend.store, clock=old)
        for n in range(users):
            for fact in ("likes tea", "rides a bike"):
                memory.remember(MemoryContext(user_id=f"user{n}"), f"user {n} {fact}")


@pytest.mark.parametrize("terminal", [True, False])
def test_consolidate_shows_scopes_only_on_a_terminal(
    terminal: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    seed_scopes(url, 6)
    argv = ("consolidate", "--url", url, "--model", MODEL)
    code, out, err = command(monkeypatch, *argv, terminal=terminal)
    assert code == 0
    assert out == "Folded 12 notes into 6 of 6 scopes.\n"
    if terminal:
        assert "consolidating: " in err and "6scope" in err.replace(" ", "") and "\r" in err
    else:
        assert err == ""


def run_on_a_terminal(cwd: Path, *args: str) -> tuple[int, str, str]:
    """The console script with standard error on a pseudo-terminal (100 columns, as a window
    has them), standard output a file."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 24, 100, 0, 0))
    with (cwd / "stdout.txt").open("w+") as out:
        process = subprocess.Popen(
            [str(SCRIPT), *args],
            cwd=cwd,
            env=environment(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=follower,
        )
        os.close(follower)
        seen = b""
        while chunk := _read(leader):
            seen += chunk
        os.close(leader)
        code = process.wait(timeout=300)
        out.seek(0)
        return code, out.read(), seen.decode()


def _read(leader: int) -> bytes:
    """The next output of a pseudo-terminal, nothing once its other end is closed."""
    try:
        return os.read(leader, 4096)
    except OSError:
        return b""


@pytest.mark.slow
def test_the_console_script_draws_on_a_terminal_and_not_in_a_pipe(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    seed(url)
    code, out, err = run_on_a_terminal(tmp_path, "export", "--user", "ann", "--url", url)
    assert code == 0 and len(json.loads(out)["items"]) == PERSONAL + IN_ACME
    assert "\rexport ann: items read" in err, err
    assert err.endswith(
        "Exported user 'ann': personal memory in no workspace (personal) and workspaces acme; "
        f"{PERSONAL + IN_ACME} items.\r\n"
    ), err
    piped = cli(tmp_path, "delete-user", "ann", "--url", url)
    assert (piped.returncode, piped.stderr) == (0, "")
    assert piped.stdout.startswith(f"Deleted user 'ann': {PERSONAL + IN_ACME} scoped_memory, ")


@pytest.mark.slow
def test_consolidate_with_workers_stays_quiet_in_a_pipe(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    seed_scopes(url, 4)
    done = cli(tmp_path, "consolidate", "--url", url, "--model", MODEL, "--workers", "2")
    assert done.returncode == 0, done.stderr
    assert "\r" not in done.stderr and "consolidating" not in done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and all(": Folded " in line for line in lines), lines
    folded = sum(int(line.split(": Folded ")[1].split()[0]) for line in lines)
    assert folded == 8


Step = tuple[str, int, int | None]


async def test_the_async_twins_report_what_the_sync_ones_report(url: str) -> None:
    steps: dict[str, list[Step]] = {"sync": [], "async": []}
    ann = Owner("ann", None)
    with connect(url) as backend:
        forgetter = Forgetter.over(backend.store)
        preview = forgetter.preview(ann, "Rex", lambda *step: steps["sync"].append(step))
    async with await aconnect(url) as backend:
        forgetter = Forgetter.over(backend.store)
        again = await forgetter.apreview(ann, "Rex", lambda *step: steps["async"].append(step))
        assert again.places == preview.places
        done = await forgetter.aapply(again, None, lambda *step: steps["async"].append(step))
        await aerase_user(backend.store, ann, progress=lambda *step: steps["async"].append(step))
    kinds = len(forgetter.services)
    assert steps["sync"] == [("kinds searched", n, kinds) for n in range(1, kinds + 1)]
    searched, forgotten = steps["async"][:kinds], steps["async"][kinds]
    assert searched == steps["sync"] and forgotten == ("places forgotten", 3, 3)
    assert done.removed == 3
    erased = steps["async"][kinds + 1 :]
    reads = [step for step in erased if step[0] == "items read"]
    deletes = [step for step in erased if step[0] == "items deleted"]
    total = PERSONAL + IN_ACME  # a forgotten note stays as its tombstone until the user goes
    assert reads and reads[-1][1] >= total
    assert deletes[-1] == ("items deleted", total, total)
    assert erased == reads + deletes


@pytest.mark.slow
def test_consolidate_with_workers_draws_one_bar_of_every_scope_on_a_terminal(
    tmp_path: Path,
) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    seed_scopes(url, 6)
    argv = ("consolidate", "--url", url, "--model", MODEL, "--workers", "2", "--worker-id", "t")
    code, out, err = run_on_a_terminal(tmp_path, *argv)
    assert code == 0, err
    lines = out.splitlines()
    assert [line.split(": ")[0] for line in lines] == ["t-1", "t-2"], out
    assert sum(int(line.split(": Folded ")[1].split()[0]) for line in lines) == 12, out
    counts = [int(n) for n in re.findall(r"consolidating: (\d+)scope \[", err)]
    assert counts and counts == sorted(counts) and counts[-1] == 6, err
    assert err.count("\n") == 1 and err.endswith("status=consolidated]\r\n"), err


@pytest.mark.slow
def test_run_workers_hands_progress_each_scope_once_as_it_is_done(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    seed_scopes(url, 5)
    done: list[ScopeResult] = []
    outcomes = run_workers(url, MODEL, 3, worker_id="p", progress=done.append)
    assert sorted(result.namespace[-1] for result in done) == [f"user{n}" for n in range(5)]
    assert {(result.status, result.folded) for result in done} == {("consolidated", 2)}
    assert sum(outcome.folded for outcome in outcomes) == 10


def test_consolidate_with_workers_refused_leaves_no_bar_behind(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    argv = ("consolidate", "--url", "memory://", "--model", MODEL, "--workers", "2")
    code, out, err = command(monkeypatch, *argv, terminal=True)
    assert (code, out) == (2, "")
    said = assert_bar(err, "consolidating: 0scope")
    assert said.startswith("memory-plugin: several workers need a shared database: "), err


class HalfRefusingModel(MergingModel):
    """Merges every scope's notes but user1's, whose consolidation it refuses."""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if "user 1 " in str(messages[-1].content):
            return ChatResult(generations=[ChatGeneration(message=AIMessage("I can't help."))])
        return super()._generate(messages, *args, **kwargs)


def half_refusing_model() -> HalfRefusingModel:
    """`--model tests.test_progress:half_refusing_model`."""
    return HalfRefusingModel()


def test_a_warning_during_consolidate_gets_a_line_above_the_bar(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    seed_scopes(url, 3)
    argv = ("consolidate", "--url", url, "--model", "tests.test_progress:half_refusing_model")
    code, out, err = command(monkeypatch, *argv, terminal=True)
    assert code == 1 and out.startswith("Folded 4 notes into 2 of 3 scopes; 1 failed"), out
    shown = [line.rsplit("\r", 1)[-1] for line in err.split("\n")]
    warned = [line for line in shown if "consolidation of personal/user1 failed" in line]
    assert warned, err
    assert all(line.startswith("consolidation of personal/user1 failed") for line in warned), err
