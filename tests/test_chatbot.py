"""The example chatbot: the offline demo, the interactive loop and its slash commands."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from memory_plugin.chat import _divider_positions

ROOT = Path(__file__).parent.parent
MANUAL = {"compaction_manual": "true"}
COMMANDS = [
    "/help",
    "Hi, my name is Ann.",
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
    cwd: Path, *args: str, stdin: str = "", model: str | None = None, **settings: str
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    if model:
        env["MEMORY_MODEL"] = model
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


def test_offline_demo_shows_every_memory_kind(tmp_path: Path) -> None:
    done = chatbot(tmp_path)
    out = done.stdout
    assert done.returncode == 0, done.stderr
    assert (
        out.splitlines()[0]
        == "No model configured (MEMORY_MODEL is unset): running the offline demo."
    )
    assert "DEMO (offline, scripted stand-in model, not an LLM)" in out
    assert (
        "profile updated" in out and "- Name is Ann." in out and "- Prefers short answers." in out
    )
    assert "scoped note stored" in out and "scoped recalled hits=1" in out
    assert "From memory: the release freeze starts on Friday." in out
    assert "context masked" in out and "context compacted" in out
    assert "──── Earlier messages were summarized to free up context" in out
    assert (tmp_path / ".memory" / "memory.db").is_file()


def test_interactive_chat_commands_and_a_resumed_thread(tmp_path: Path) -> None:
    model = "memory_plugin.demo:studio_model"
    first = chatbot(
        tmp_path,
        "--user",
        "ann",
        stdin="\n".join(COMMANDS),
        model=model,
    )
    out = first.stdout
    assert first.returncode == 0, first.stderr
    assert "assistant> Noted, I'll keep it short." in out
    assert "1. - [" in out and "Prefers short answers" in out
    assert "## Identity\n- Name is Ann." in out
    assert "<recent_memory_notes>" in out
    assert "Summarize now is off (set MEMORY_COMPACTION_MANUAL=true to enable it)." in out
    assert "forgot note 1" in out and "(no notes)" in out
    assert "unknown command /nope" in out
    assert "/forget N" in out and "/summarize  compact" not in out
    again = chatbot(tmp_path, "--user", "ann", stdin="/quit\n", model=model)
    assert "you> Hi, my name is Ann." in again.stdout
    assert "assistant> Noted, I'll keep it short." in again.stdout
    other = chatbot(tmp_path, "--user", "bob", stdin="/profile\n/quit\n", model=model)
    assert "(no profile yet)" in other.stdout


def test_memory_plugin_chat_command_runs_the_demo(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    done = subprocess.run(
        [sys.executable, "-m", "memory_plugin.cli", "chat"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    assert "Demo done." in done.stdout


def test_summarize_is_offered_when_enabled(tmp_path: Path) -> None:
    env_model = "memory_plugin.demo:studio_model"
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMORY_")}
    env |= {"MEMORY_MODEL": env_model, "MEMORY_COMPACTION_MANUAL": "true"}
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


def test_a_reloaded_thread_shows_every_divider_and_the_turns_before_them(tmp_path: Path) -> None:
    said = [
        "We are planning the Lisbon offsite.",
        "The budget is 5000 euros.",
        "Book the venue near the river.",
        "Invite the whole team.",
    ]
    commands = [*said[:2], "/summarize", *said[2:], "/summarize", "/quit"]
    model = "memory_plugin.demo:studio_model"
    first = chatbot(tmp_path, "--user", "ann", stdin="\n".join(commands), model=model, **MANUAL)
    assert first.returncode == 0, first.stderr
    assert first.stdout.count("Context summarized on request") == 2
    again = chatbot(tmp_path, "--user", "ann", stdin="/quit\n", model=model)
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
    assert history[1] == "assistant> Noted, I'll keep it short."


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
