"""A test that starts a process is marked `slow`, so the fast loop (`-m "not slow"`) starts none.

An audit hook sees every process a test starts (subprocess, asyncio's subprocesses, fork,
spawn, system); one started by a test not marked slow fails that test, naming the command.
Processes a shared fixture (session, package or module scope) starts, such as the throwaway
PostgreSQL, belong to the run, not to the test that happened to need them first.
"""

from __future__ import annotations

import platform
import sys
from collections.abc import Generator
from typing import Any

import pytest

EVENTS = frozenset(
    {"subprocess.Popen", "os.fork", "os.forkpty", "os.posix_spawn", "os.spawn", "os.system"}
)


class Watch:
    """The processes started while a test not marked slow runs its own code."""

    def __init__(self) -> None:
        self.watching = False
        self.shared_depth = 0
        self.started: list[str] = []

    def audit(self, event: str, args: tuple[Any, ...]) -> None:
        """The audit hook: note a process start of a watched test."""
        if event in EVENTS and self.watching and not self.shared_depth:
            self.started.append(f"{event}: {_command(event, args)}")


def _command(event: str, args: tuple[Any, ...]) -> str:
    """The command an audit event names, short."""
    if event == "subprocess.Popen":
        command = args[1] if args[1] is not None else args[0]
    elif event in ("os.posix_spawn", "os.spawn"):
        command = args[1] if event == "os.posix_spawn" else args[2]
    elif event == "os.system":
        command = args[0]
    else:
        return "(a forked copy of the test process)"
    words = [str(word) for word in command] if isinstance(command, list | tuple) else [command]
    text = " ".join(str(word) for word in words)
    return text if len(text) <= 200 else text[:197] + "..."


WATCH = Watch()
platform.processor()  # runs `uname -p` once and keeps the answer (the openai client asks for it)
sys.addaudithook(WATCH.audit)


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any]) -> Generator[None, Any, Any]:
    """A fixture shared beyond one test starts its processes for the whole run."""
    shared = fixturedef.scope != "function"
    WATCH.shared_depth += shared
    try:
        return (yield)
    finally:
        WATCH.shared_depth -= shared


@pytest.hookimpl(wrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Generator[None, Any, Any]:
    """Watch the test's setup and call when it is not marked slow."""
    WATCH.watching = item.get_closest_marker("slow") is None
    WATCH.started = []
    try:
        return (yield)
    finally:
        WATCH.watching = False


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    """After its call, a watched test that started a process fails, naming it; teardown is not
    watched (a shared fixture's finalizer may stop its server there)."""
    report = yield
    if call.when == "call":
        if WATCH.watching and WATCH.started and report.passed:
            report.outcome = "failed"
            report.longrepr = (
                f"{item.nodeid} started {len(WATCH.started)} process(es) but is not marked "
                "slow (mark it @pytest.mark.slow: the fast loop starts no process):\n  "
                + "\n  ".join(WATCH.started[:5])
            )
        WATCH.watching = False
    return report
