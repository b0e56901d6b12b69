"""The example chatbot (examples/chatbot.py): the interactive loop, its slash commands and a
resumed thread; the console script itself is tested in test_cli.py."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from memory_plugin.offline.chat import _divider_positions

ROOT = Path(__file__).parent.parent
MANUAL = {"compaction_manual": "true"}
COMMANDS = [
    "/help",
    "Hi, my name is Ann. Remember that I prefer short answers.",
    "/notes",
    "/profile",
    "/memory",
    "/summarize",
    "/forget 1",
    "/notes",
    "/nope",
    "/quit",
    "",
]


def chatbot(
    cwd: Path, *args: str, stdin: str = "", **settings: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env |= {f"MEMORY_{name.upper()}": value for name, value in settings.items()}
    return subprocess.run(
        [sys.executable, str(ROOT / "examples" / "chatbot.py"), *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.slow
def test_interactive_chat_commands_and_a_resumed_thread(tmp_path: Path) -> None:
    first = chatbot(tmp_path, "--user", "ann", stdin="\n".join(COMMANDS))
    out = first.stdout
    assert first.returncode == 0, first.stderr
    assert "assistant> Noted: your name is Ann. You prefer short answers." in out
    assert "1. - [" in out and "2. - [" in out and "prefers short answers" in out
    assert "## Identity\n- Name is Ann." in out
    assert "<recent_memory_notes>" in out
    assert "Summarize now is off (set MEMORY_COMPACTION_MANUAL=true to enable it)." in out
    listed = re.findall(r"(\d)\. - \[[^\]]+\] (.+)", out.split("forgot note 1")[0])
    forgotten = dict(listed)["1"]  # the two notes were stored by parallel tool calls, in any order
    kept = dict(listed)["2"]
    assert "forgot note 1\nyou> 1. - [" in out
    after = out.split("forgot note 1")[1]
    assert kept in after and forgotten not in after
    assert "unknown command /nope" in out
    assert "/forget N" in out and "/summarize  compact" not in out
    again = chatbot(tmp_path, "--user", "ann", stdin="/quit\n")
    assert "you> Hi, my name is Ann. Remember that I prefer short answers." in again.stdout
    assert "assistant> Noted: your name is Ann. You prefer short answers." in again.stdout
    other = chatbot(tmp_path, "--user", "bob", stdin="/profile\n/notes\n/quit\n")
    assert "(no profile yet)" in other.stdout and "(no notes)" in other.stdout
    assert "Ann" not in other.stdout


@pytest.mark.slow
def test_summarize_is_offered_when_enabled(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env |= {"MEMORY_COMPACTION_MANUAL": "true"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "chatbot.py"), "--user", "ann"],
        cwd=tmp_path,
        env=env,
        input="/help\n/summarize\n/quit\n",
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "/summarize  compact the thread now" in done.stdout
    assert "nothing to compact yet" in done.stdout


@pytest.mark.slow
def test_a_reloaded_thread_shows_every_divider_and_the_turns_before_them(tmp_path: Path) -> None:
    said = [
        "We are planning the Lisbon offsite.",
        "The budget is 5000 euros.",
        "Book the venue near the river.",
        "Invite the whole team.",
    ]
    commands = [*said[:2], "/summarize", *said[2:], "/summarize", "/quit"]
    first = chatbot(tmp_path, "--user", "ann", stdin="\n".join(commands), **MANUAL)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("Context summarized on request") == 2
    again = chatbot(tmp_path, "--user", "ann", stdin="/quit\n")
    assert again.returncode == 0, again.stderr
    history = again.stdout.split("Type a message, or /help.")[0].splitlines()
    divider = re.compile(r"──── Context summarized on request \(~[\d,]+ → ~[\d,]+ tokens\) ────")
    shown = [
        "(divider)" if divider.fullmatch(line) else line
        for line in history
        if line.startswith(("you> ", "────"))
    ]
    assert shown == [
        f"you> {said[0]}",
        "(divider)",
        f"you> {said[1]}",
        f"you> {said[2]}",
        "(divider)",
        f"you> {said[3]}",
    ]
    assert history[0].startswith("No model configured")
    assert history[1] == "Chatting as ann in no workspace (personal), agent default, thread main."
    assert history[3].startswith("assistant> ")


def test_a_divider_whose_message_is_unknown_goes_before_the_next_later_message() -> None:
    times = ["2026-11-30T10:00:00+00:00", "2026-11-30T11:00:00+00:00", None]
    cut_at_b = {"before_message_id": "b", "at": "2026-11-30T10:30:00+00:00"}
    unknown = {"before_message_id": "gone", "at": "2026-11-30T10:30:00+00:00"}
    never_earlier = {"before_message_id": "a", "at": "2026-11-30T09:00:00+00:00"}
    late = {"before_message_id": None, "at": "2026-11-30T12:00:00+00:00"}
    dividers = [cut_at_b, unknown, never_earlier, late]
    assert _divider_positions(dividers, ["a", "b", "c"], times) == [1, 1, 1, 2]
    assert _divider_positions([unknown], ["a", "b"], times[:2]) == [1]
    assert _divider_positions([late], ["a", "b"], times[:2]) == [2]
