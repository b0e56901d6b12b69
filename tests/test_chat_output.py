"""What `memory-plugin chat` shows: the lines saying what memory did (and --quiet without them),
a background message on a line of its own with the prompt drawn again (in a terminal), and an
unreachable model's one-line failure naming the URL it tried."""

from __future__ import annotations

import argparse
import io
import os
import pty
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage

from memory_plugin.offline.chat import chat
from memory_plugin.offline.model import OfflineModel
from memory_plugin.profile.prompts import CONSOLIDATE_SYSTEM

ROOT = Path(__file__).parent.parent
SCRIPT = Path(sys.executable).parent / "memory-plugin"
GO = "CHAT_OUTPUT_PROFILE_GO"  # a file: the profile update answers once it exists
REFUSAL = "I'm sorry, I can't help with that."


class LateRefusingModel(OfflineModel):
    """The offline model, whose profile updates answer only once the file named by $GO exists,
    with a refusal: the update is discarded in the background, after the turn."""

    def respond(self, messages: Sequence[BaseMessage], **kwargs: Any) -> AIMessage:
        """A refusal for a profile update (once allowed to answer), else the offline answer."""
        first = messages[0] if messages else None
        if isinstance(first, SystemMessage) and first.text.startswith(CONSOLIDATE_SYSTEM):
            go = Path(os.environ[GO])
            deadline = time.monotonic() + 60
            while not go.exists() and time.monotonic() < deadline:
                time.sleep(0.05)
            return AIMessage(REFUSAL)
        return super().respond(messages, **kwargs)


def late_refusing_model() -> LateRefusingModel:
    """For `memory-plugin chat --model tests.test_chat_output:late_refusing_model`."""
    return LateRefusingModel()


def options(tmp_path: Path, **given: Any) -> argparse.Namespace:
    """`memory-plugin chat`'s parsed options: ann on a SQLite file in tmp_path."""
    values = {
        "user": "ann",
        "workspace": None,
        "shared": False,
        "thread": "main",
        "url": f"sqlite:///{tmp_path / 'memory.db'}",
        "model": None,
        "quiet": False,
        "timeout": 60.0,
    }
    return argparse.Namespace(**(values | given))


def chatted(args: argparse.Namespace, *lines: str) -> str:
    """What the chat printed for the lines typed."""
    out = io.StringIO()
    assert chat(args, io.StringIO("".join(f"{line}\n" for line in lines)), out) == 0
    return out.getvalue()


TOLD = ("Remember that the release freeze starts on Friday.", "When does the release freeze start?")


def test_the_chat_says_what_memory_did_and_quiet_leaves_that_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MEMORY_MODEL", raising=False)
    shown = chatted(options(tmp_path / "shown"), *TOLD)
    quiet = chatted(options(tmp_path / "quiet", quiet=True), *TOLD)
    answers = [
        "assistant> Noted: the release freeze starts on Friday.",
        "assistant> From memory: The release freeze starts on Friday (noted ",
    ]
    for out in (shown, quiet):
        assert all(answer in out for answer in answers), out
    assert "  · scoped memory note stored" in shown and "  ↳ recall(query=" in shown
    assert "  · scoped memory recalled hits=1" in shown
    assert not [line for line in quiet.splitlines() if line.startswith(("  ·", "  ↳"))], quiet


def closed_port() -> int:
    """A local port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_an_unreachable_model_is_named_by_the_url_tried(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    base = f"http://127.0.0.1:{closed_port()}/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", base)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    out = chatted(options(tmp_path, model="openai:gpt-4o-mini"), "Hello")
    (failure,) = [line for line in out.splitlines() if "  ! " in line]
    assert failure.endswith(
        f"  ! the model could not be reached at {base}/chat/completions "
        "(OpenAIConnectionError: Connection error.); the turn was taken back, try again."
    ), failure


class Terminal:
    """The console script running on a pseudo-terminal, as a user's shell starts it."""

    def __init__(self, cwd: Path, *args: str, env: dict[str, str]) -> None:
        self.master, worker = pty.openpty()
        self.process = subprocess.Popen(
            [str(SCRIPT), *args], cwd=cwd, env=env, stdin=worker, stdout=worker, stderr=worker
        )
        os.close(worker)
        self._out: list[bytes] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 4096)
            except OSError:  # the process is gone and its side of the terminal closed
                return
            if not chunk:
                return
            self._out.append(chunk)

    @property
    def screen(self) -> str:
        """Everything shown so far, lines ending in \\n."""
        return b"".join(self._out).decode(errors="replace").replace("\r\n", "\n")

    def wait_for(self, shown: Callable[[str], bool], what: str, seconds: float = 120) -> None:
        """Wait until the terminal shows something; fail (and stop the process) if it never does."""
        deadline = time.monotonic() + seconds
        while not shown(self.screen):
            if time.monotonic() > deadline or self.process.poll() is not None:
                self.process.kill()
                pytest.fail(f"never showed {what}:\n{self.screen}")
            time.sleep(0.05)

    def type(self, line: str) -> None:
        """Type a line and Enter."""
        os.write(self.master, f"{line}\n".encode())

    def close(self) -> int:
        """The exit code, after at most a minute."""
        try:
            return self.process.wait(timeout=60)
        finally:
            os.close(self.master)


def ends_with_prompt_after(marker: str) -> Callable[[str], bool]:
    return lambda screen: marker in screen and screen.endswith("\nyou> ")


@pytest.mark.slow
def test_a_background_message_never_breaks_the_prompt_line(tmp_path: Path) -> None:
    """A profile update discarded after its turn, while the prompt waits for the next line, is
    told on a line of its own, and the prompt is drawn again below it."""
    go = tmp_path / "go"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "OPENAI_"))}
    env |= {"PYTHONPATH": str(ROOT), GO: str(go)}
    model = "tests.test_chat_output:late_refusing_model"
    terminal = Terminal(tmp_path, "chat", "--user", "ann", "--model", model, env=env)
    terminal.wait_for(ends_with_prompt_after("Type a message"), "the prompt")
    terminal.type("Hi, I'm Ann.")
    terminal.wait_for(ends_with_prompt_after("assistant> "), "the answer, then the prompt")
    go.touch()  # the profile update answers now, with the prompt showing
    discarded = "  ! profile update of ann discarded: it is a refusal"
    terminal.wait_for(ends_with_prompt_after(discarded), "the discarded update")
    terminal.type("/quit")
    assert terminal.close() == 0, terminal.screen
    screen = terminal.screen
    (told,) = [line for line in screen.splitlines() if "discarded" in line]
    assert told.startswith(discarded), screen
    assert f"\nyou> \n{told}\nyou> /quit\n" in screen, screen
    assert "Traceback" not in screen
