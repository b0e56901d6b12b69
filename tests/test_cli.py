"""The `memory-plugin` console script as a user runs it: --version, chat (its options, the
offline model, one-line errors that take the turn back), demo, consolidate, history and
restore."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from importlib.metadata import version
from pathlib import Path

import pytest

from memory_plugin import MemoryContext, connect
from memory_plugin.context_management.journal import entries_plan
from memory_plugin.offline.chat import thread_id
from memory_plugin.plans import run
from memory_plugin.scoped import ScopedMemory
from tests.openai_server import API_KEY, OpenAIServer, hang, text

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
SCRIPT = Path(sys.executable).parent / "memory-plugin"
FLAKY = "tests.chat_models:flaky_model"
ANN = MemoryContext(user_id="ann")


def environment(model: str | None = None, openai_url: str | None = None) -> dict[str, str]:
    """The console script's environment: no MEMORY_* or OPENAI_* setting but `model` and, for
    an OpenAI-compatible server, its URL and a key."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "OPENAI_"))}
    env["PYTHONPATH"] = str(ROOT)
    if model:
        env["MEMORY_MODEL"] = model
    if openai_url:
        env |= {"OPENAI_BASE_URL": openai_url, "OPENAI_API_KEY": API_KEY}
    return env


def cli(
    cwd: Path, *args: str, stdin: str = "", model: str | None = None, openai_url: str | None = None
) -> subprocess.CompletedProcess[str]:
    """Run the installed console script in cwd, with no MEMORY_* setting but `model`."""
    return subprocess.run(
        [str(SCRIPT), *args],
        cwd=cwd,
        env=environment(model, openai_url),
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


def as_in_a_terminal() -> None:
    """Ctrl-C as a terminal delivers it: a shell without job control starts background jobs
    (CI steps run with `&`) with SIGINT ignored, and the child would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Running:
    """The console script running in cwd, its output read as it comes (a pipe, not a pty)."""

    def __init__(self, cwd: Path, *args: str, env: dict[str, str]) -> None:
        self.errors = cwd / "stderr.txt"
        with self.errors.open("w") as errors:
            self.process = subprocess.Popen(
                [str(SCRIPT), *args],
                cwd=cwd,
                env=env,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=errors,
                text=True,
                preexec_fn=as_in_a_terminal,
            )
        self._out: list[str] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        with self.process.stdout as stdout:
            while chunk := stdout.read(1):
                self._out.append(chunk)

    @property
    def out(self) -> str:
        """Everything printed so far."""
        return "".join(self._out)

    def wait_for(self, shown: Callable[[str], bool], what: str, seconds: float = 60) -> None:
        """Wait until the output shows something; fail (and stop the process) if it never does."""
        deadline = time.monotonic() + seconds
        while not shown(self.out):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.process.kill()
                pytest.fail(f"never showed {what}:\n{self.out}")
            time.sleep(0.05)

    def type(self, line: str) -> None:
        """Type a line at the prompt."""
        assert self.process.stdin is not None
        self.process.stdin.write(line + "\n")
        self.process.stdin.flush()

    def exit_code(self) -> int:
        """The exit code, after at most a minute (stdin left open: the process ends by itself)."""
        code = self.process.wait(timeout=60)
        assert self.process.stdin is not None
        self.process.stdin.close()
        return code

    def stderr(self) -> str:
        """What the process wrote to stderr."""
        return self.errors.read_text()


def prompt_after(marker: str) -> Callable[[str], bool]:
    """Whether the output shows `marker` and then the prompt again."""
    return lambda out: marker in out and "you> " in out.split(marker, 1)[1]


def said(out: str) -> list[str]:
    """The assistant's answers and the one-line errors, in order."""
    lines = [line.removeprefix("you> ").strip() for line in out.splitlines()]
    return [line for line in lines if line.startswith(("assistant> ", "! "))]


def test_version(tmp_path: Path) -> None:
    done = cli(tmp_path, "--version")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"memory-plugin {version('memory-plugin')}"


def test_chat_help_lists_its_options(tmp_path: Path) -> None:
    done = cli(tmp_path, "chat", "--help")
    assert done.returncode == 0, done.stderr
    for option in ("--user", "--workspace", "--shared", "--thread", "--url", "--model"):
        assert option in done.stdout
    assert not (tmp_path / ".memory").exists()


def test_chat_takes_its_options_itself(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'team.db'}"
    args = ("chat", "--user", "ann", "--workspace", "acme", "--shared", "--thread", "t1")
    done = cli(tmp_path, *args, "--url", url, "--model", FLAKY, stdin="hello\n/quit\n")
    assert done.returncode == 0, done.stderr
    assert said(done.stdout) == ["assistant> echo: hello (1 of your messages in view)"]
    assert (tmp_path / "team.db").is_file() and not (tmp_path / ".memory").exists()
    with connect(url) as backend:
        team = MemoryContext(user_id="ann", workspace_id="acme", thread_visibility="shared")
        (first, answer) = run(backend.store, entries_plan(thread_id(team, "t1")))
    assert first.text == "hello" and answer.text.startswith("echo: hello")
    bad = cli(tmp_path, "chat", "--model", "tests.chat_models:nothing_here", stdin="hi\n")
    assert bad.returncode == 2 and "cannot load model" in bad.stderr
    assert "Traceback" not in bad.stderr


def test_demo_plays_the_scripted_tour(tmp_path: Path) -> None:
    done = cli(tmp_path, "demo")
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert out.splitlines()[0] == "DEMO (offline, scripted stand-in model, not an LLM)"
    assert "- Name is Ann." in out and "- Prefers short answers." in out
    assert "scoped memory note stored" in out and "scoped memory recalled hits=1" in out
    assert "From memory: the release freeze starts on Friday." in out
    assert "context management masked" in out and "context management compacted" in out
    assert "──── Earlier messages were summarized to free up context" in out
    assert "Demo done." in out
    assert (tmp_path / ".memory" / "memory.db").is_file()


def test_a_failed_turn_is_one_line_and_taken_back(backend_url: str, tmp_path: Path) -> None:
    lines = [
        "fail with connection",
        "hello",
        "fail with connection",
        "fail with timeout",
        "fail with rate limit",
        "fail with anything else",
        "fail with ctrl-c",
        "note then fail",
        "again",
        "/quit",
    ]
    args = ("chat", "--user", "ann", "--url", backend_url, "--model", FLAKY)
    done = cli(tmp_path, *args, stdin="\n".join(lines))
    assert done.returncode == 0, done.stderr
    taken_back = "; the turn was taken back, try again."
    reached = "! the model could not be reached at https://api.example.com/v1/chat/completions"
    assert said(done.stdout) == [
        f"{reached} (APIConnectionError: Connection error.){taken_back}",
        "assistant> echo: hello (1 of your messages in view)",
        f"{reached} (APIConnectionError: Connection error.){taken_back}",
        "! the model timed out at https://api.example.com/v1/chat/completions "
        f"(APITimeoutError: Request timed out.){taken_back}",
        "! the model's rate limit was hit "
        f"(RateLimitError: Rate limit reached for gpt-4o-mini){taken_back}",
        f"! the turn failed (ValueError: unexpected anything else){taken_back}",
        f"! interrupted (KeyboardInterrupt){taken_back}",
        f"{reached} (APIConnectionError: Connection error.){taken_back}",
        "assistant> echo: again (2 of your messages in view)",
    ]
    assert "Traceback" not in done.stdout + done.stderr
    if backend_url == "memory://":
        return
    with connect(backend_url) as backend:
        journal = run(backend.store, entries_plan(thread_id(ANN, "main")))
        assert [entry.text for entry in journal if entry.role == "human"] == ["hello", "again"]
        assert not any(entry.tool_calls for entry in journal)
    again = cli(tmp_path, *args, stdin="/quit\n")
    replayed = [line for line in again.stdout.splitlines() if line.startswith("you> ")]
    assert replayed[:2] == ["you> hello", "you> again"]


def test_forget_explains_what_there_is_to_forget(tmp_path: Path) -> None:
    lines = ["/forget 99", "note then fail", "/forget 99", "/forget x", "/forget", "/forget 1"]
    lines.append("/notes")
    done = cli(tmp_path, "chat", "--model", FLAKY, stdin="\n".join(lines))
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "There are no notes to forget yet." in out
    assert "There is no note 99: /forget N, with N from /notes (1-1)" in out
    assert "There is no note x: /forget N, with N from /notes (1-1)" in out
    assert "usage: /forget N, with N from /notes (1-1)" in out
    assert "forgot note 1" in out and "(no notes)" in out


def test_the_offline_chat_recalls_a_fact_in_the_next_session(tmp_path: Path) -> None:
    first = cli(
        tmp_path,
        "chat",
        "--user",
        "ann",
        stdin="remember that my dog is called Rex\n/notes\n/quit\n",
    )
    assert first.returncode == 0, first.stderr
    assert first.stdout.splitlines()[0].startswith("No model configured (--model or $MEMORY_MODEL)")
    assert "offline model" in first.stdout.splitlines()[0]
    assert "scoped memory note stored" in first.stdout and "Rex" in first.stdout
    second = cli(
        tmp_path,
        "chat",
        "--user",
        "ann",
        "--thread",
        "another-day",
        stdin="what is my dog called?\n/quit\n",
    )
    assert second.returncode == 0, second.stderr
    (answer,) = [line for line in said(second.stdout) if line.startswith("assistant> ")]
    assert "Rex" in answer
    assert "Traceback" not in first.stderr + second.stderr
    other = cli(tmp_path, "chat", "--user", "bob", stdin="what is my dog called?\n/quit\n")
    assert other.returncode == 0 and [line for line in said(other.stdout) if "assistant" in line]
    assert "Rex" not in other.stdout


def test_every_slash_command_works_on_the_offline_model(tmp_path: Path) -> None:
    commands = ["/help", "Hi, my name is Ann.", "/notes", "/profile", "/memory", "/summarize"]
    done = cli(tmp_path, "chat", "--user", "ann", stdin="\n".join([*commands, "/nope", "/quit"]))
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert "/forget N" in out and "assistant> " in out
    assert "(no notes)" in out or "1. - [" in out
    assert "Summarize now is off" in out and "unknown command /nope" in out
    assert "! " not in out and "Traceback" not in done.stderr


def _seed_notes(url: str, ages: list[int]) -> None:
    with connect(url) as backend:
        for days in ages:
            clock = lambda days=days: datetime.now(UTC) - timedelta(days=days)  # noqa: E731
            ScopedMemory(backend.store, clock=clock).remember(ANN, f"a fact from {days} days ago")


@pytest.mark.parametrize("kind", ["sqlite", "postgres"])
def test_consolidate_says_why_nothing_was_folded(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    from tests.conftest import url_for

    url = url_for(kind, request, tmp_path)
    model = "tests.fakes:merging_model"
    empty = cli(tmp_path, "consolidate", "--url", url, "--model", model)
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout.strip() == (
        "Folded 0 notes into 0 of 0 scopes; no notes are waiting to be folded."
    )
    _seed_notes(url, [0, 1, 2])
    young = cli(tmp_path, "consolidate", "--url", url, "--model", model)
    assert young.returncode == 0, young.stderr
    assert (
        young.stdout.strip() == "Folded 0 notes into 0 of 0 scopes; 3 notes are newer than 7 days."
    )
    _seed_notes(url, [10])
    mixed = cli(tmp_path, "consolidate", "--url", url, "--model", model)
    assert (
        mixed.stdout.strip() == "Folded 1 notes into 1 of 1 scopes; 3 notes are newer than 7 days."
    )


def test_history_and_restore_through_the_console_script(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    scope = ("--url", url, "--user", "ann")
    assert cli(tmp_path, "history", *scope).stdout == "No memory document in this scope yet.\n"
    with connect(url) as backend:
        memory = ScopedMemory(backend.store)
        memory.write_document(ANN, "- Likes tea")
        memory.write_document(ANN, "- Likes coffee")
    listed = cli(tmp_path, "history", *scope)
    assert [line.split()[1] for line in listed.stdout.splitlines()] == ["2", "1"]
    restored = cli(tmp_path, "restore", *scope, "1")
    assert restored.stdout.strip() == "Restored version 1 as version 3 (11 characters)."
    with connect(url) as backend:
        document = ScopedMemory(backend.store).read_document(ANN)
    assert document is not None and document.text == "- Likes tea"
    missing = cli(tmp_path, "restore", *scope, "9")
    assert missing.returncode == 2 and missing.stderr.startswith("memory-plugin: ")


def test_ctrl_c_at_the_prompt_leaves_quietly(tmp_path: Path) -> None:
    chat = Running(tmp_path, "chat", "--user", "ann", env=environment())
    chat.wait_for(prompt_after("Type a message"), "the prompt")
    chat.process.send_signal(signal.SIGINT)
    assert chat.exit_code() == 0, chat.stderr()
    assert "Traceback" not in chat.stderr()


def test_ctrl_c_cancels_a_model_call_that_never_answers(backend_url: str, tmp_path: Path) -> None:
    """The first Ctrl-C ends a turn (or /summarize) at once, not at the model's timeout (here
    300 s): one line, a turn taken back, the prompt again; a second Ctrl-C at the prompt quits."""
    told = "Remember that the release freeze starts on Friday."
    with OpenAIServer(lifetime=300) as server:
        server.script(hang(300), text("Hello, Ann!"), text("NOOP"), text("Fine."), text("NOOP"))
        server.script(hang(300), hang(300))  # the summary, and the flush note beside it
        args = ("chat", "--user", "ann", "--url", backend_url, "--model", "openai:gpt-test")
        env = environment(None, server.base_url) | {"MEMORY_COMPACTION_MANUAL": "true"}
        chat = Running(tmp_path, *args, "--timeout", "300", env=env)
        chat.wait_for(prompt_after("Type a message"), "the prompt")
        chat.type(told)
        chat.wait_for(lambda out: len(server.completions) == 1, "the model call")
        chat.process.send_signal(signal.SIGINT)
        interrupted = "  ! interrupted (KeyboardInterrupt); the turn was taken back, try again."
        chat.wait_for(prompt_after(interrupted), "the prompt after Ctrl-C")
        chat.type("Hello")
        chat.wait_for(prompt_after("assistant> Hello, Ann!"), "the next answer")
        chat.wait_for(lambda out: len(server.completions) == 3, "the profile's call after it")
        chat.type("How are you?")
        chat.wait_for(prompt_after("assistant> Fine."), "the answer after that")
        chat.wait_for(lambda out: len(server.completions) == 5, "the profile's call after it")
        chat.type("/summarize")
        chat.wait_for(lambda out: len(server.completions) >= 6, "the summary's model call")
        chat.process.send_signal(signal.SIGINT)
        chat.wait_for(prompt_after("  ! interrupted (KeyboardInterrupt)\n"), "/summarize ended")
        chat.process.send_signal(signal.SIGINT)
        assert chat.exit_code() == 0, chat.stderr()
        asked = server.completions[1]
    assert [m["role"] for m in asked.messages] == ["system", "user"]
    assert asked.messages[-1]["content"] == "Hello" and told not in json.dumps(asked.body)
    assert chat.out.count("  ! ") == 2 and "Traceback" not in chat.out + chat.stderr()
    if backend_url == "memory://":
        return
    with connect(backend_url) as backend:
        journal = run(backend.store, entries_plan(thread_id(ANN, "main")))
    assert [entry.text for entry in journal if entry.role == "human"] == ["Hello", "How are you?"]


def test_the_chat_timeout_is_a_model_calls_whole_budget(backend_url: str, tmp_path: Path) -> None:
    """--timeout 1 against a server that never answers: the request is sent once (no retry),
    the turn ends with one line and the chat goes on; --help says so."""
    with OpenAIServer(lifetime=300) as server:
        server.script(hang(300), text("Hello, Ann!"), text("NOOP"))
        args = ("chat", "--url", backend_url, "--model", "openai:gpt-test", "--timeout", "1")
        done = cli(tmp_path, *args, stdin="Hi\nHello\n/quit\n", openai_url=server.base_url)
        asked = [r.messages[-1]["content"] for r in server.completions]
        tried = f"{server.base_url}/chat/completions"
    assert done.returncode == 0, done.stderr
    (failed, answer) = said(done.stdout)
    assert failed.startswith(f"! the model timed out at {tried} (")
    assert failed.endswith("try again.")
    assert answer == "assistant> Hello, Ann!"
    assert asked[:2] == ["Hi", "Hello"]
    shown = " ".join(cli(tmp_path, "chat", "--help").stdout.split())
    assert "a model call's whole budget in seconds: the request is sent once, not retried" in shown
