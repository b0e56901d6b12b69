"""Issue 34, point 9: nothing is lost at exit. A script that runs a turn and exits without
closing its backend keeps that turn's profile update (the process waits for it, bounded); an
unclosed `aconnect()` never holds the process; a job past the bound is given up, and the
process says so. Each script is tests/unclosed_turn.py in a process of its own, on every
backend: SQLite and PostgreSQL are read back from this process, memory:// (which dies with its
process) is printed by the script at exit."""

from __future__ import annotations

import ast
import os
import subprocess
import sys
from pathlib import Path

import pytest

from memory_plugin import MemoryContext, connect
from memory_plugin.profile.memory import ProfileMemory
from tests.unclosed_turn import bullets

ROOT = Path(__file__).parent.parent
EXIT_LIMIT = 120
"""Seconds a script may take, starting the interpreter included: one that hangs at exit (an
unclosed aconnect on SQLite did, for good) runs into it."""
TURNS = [
    ("I just moved to Lisbon", "Lives in Lisbon."),
    ("I write Rust at work", "Writes Rust."),
    ("I drink tea, no coffee", "Likes tea."),
]


def run_turn(
    mode: str, url: str, text: str, thread: str, delay: float, **env: str
) -> subprocess.CompletedProcess[str]:
    """Run tests/unclosed_turn.py; it must answer and exit within EXIT_LIMIT seconds."""
    done = subprocess.run(
        [sys.executable, "-m", "tests.unclosed_turn", mode, url, text, thread, str(delay)],
        cwd=ROOT,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=EXIT_LIMIT,
    )
    assert done.returncode == 0 and "answered" in done.stdout, done.stdout + done.stderr
    return done


def profile_after(done: subprocess.CompletedProcess[str], url: str) -> list[str]:
    """The profile's bullets once the script has exited."""
    if url.startswith("memory://"):
        printed = [line for line in done.stdout.splitlines() if line.startswith("profile: ")]
        assert printed, done.stdout + done.stderr
        return list(ast.literal_eval(printed[0].removeprefix("profile: ")))
    with connect(url) as backend:
        return bullets(ProfileMemory(backend.store).read(MemoryContext(user_id="ann")))


@pytest.mark.slow
def test_a_script_that_never_closes_connect_keeps_every_turns_profile_update(
    backend_url: str,
) -> None:
    expected: list[str] = []
    for number, (text, bullet) in enumerate(TURNS):
        done = run_turn("sync", backend_url, text, f"t{number}", delay=1.0)
        expected = [bullet] if backend_url.startswith("memory://") else [*expected, bullet]
        assert profile_after(done, backend_url) == sorted(expected), done.stderr


@pytest.mark.slow
def test_an_unclosed_aconnect_keeps_the_profile_update_and_does_not_hold_the_exit(
    backend_url: str,
) -> None:
    text, bullet = TURNS[0]
    done = run_turn("async", backend_url, text, "t", delay=1.0)
    assert profile_after(done, backend_url) == [bullet], done.stderr
    assert "gave up" not in done.stderr


@pytest.mark.slow
@pytest.mark.parametrize(
    ("mode", "when"), [("sync", "at exit"), ("async", "as its event loop closed")]
)
def test_a_job_past_the_exit_wait_is_given_up_and_said_so(
    backend_url: str, mode: str, when: str
) -> None:
    text, _ = TURNS[0]
    done = run_turn(mode, backend_url, text, "t", delay=600, MEMORY_EXIT_WAIT_SECONDS="1")
    said = "memory: gave up waiting for 1 background job (profile) after 1 s"
    assert f"{said} {when}" in done.stderr
    assert profile_after(done, backend_url) == []
