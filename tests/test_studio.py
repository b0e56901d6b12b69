"""LangGraph Studio smoke test: `langgraph dev` serves the root langgraph.json, and a run of
`memory_agent` through the langgraph-sdk client writes memory to the server's store and
streams the memory events.

The server runs from this venv (`langgraph dev --no-browser --no-reload`) on a free
127.0.0.1 port with the offline fake model (MEMORY_MODEL=memory_plugin.demo:studio_model),
no analytics, no version check and no LangSmith tracing, so it needs no network. Its working
directory is a fresh temporary folder holding a copy of the root langgraph.json with absolute
paths: the in-memory server loads and saves its threads and store in `.langgraph_api/` under
its working directory, so state left in the repository by an earlier `langgraph dev` would
change what this run writes (and this run would leave files there). The server is started in
its own process group and stopped by its process id.
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLI = Path(sys.executable).parent / "langgraph"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
STARTUP_TIMEOUT = 90.0
RUN_TIMEOUT = 120.0
STOP_TIMEOUT = 30.0
USER = "ann"
NOTES_NS = ["memory_plugin", "personal", USER, "notes"]
PROFILE_NS = ["memory_plugin", "profile", USER]
PROFILE_KEY = "memory.md"

# Anything that could make the server or the graph reach the network.
_DROP_PREFIXES = ("LANGSMITH_", "LANGCHAIN_", "OPENAI_", "ANTHROPIC_")


def _require_tools() -> None:
    missing = [
        what
        for what, ok in (
            (f"langgraph CLI at {CLI}", CLI.exists()),
            ("langgraph_sdk", importlib.util.find_spec("langgraph_sdk") is not None),
            ("langgraph_api", importlib.util.find_spec("langgraph_api") is not None),
        )
        if not ok
    ]
    if not missing:
        return
    message = f"Studio test needs {', '.join(missing)}: pip install -e '.[dev]'"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_config(folder: Path) -> Path:
    """The root langgraph.json with absolute paths (and persistence off, which langgraph-api
    0.16 still ignores: the fresh working directory is what isolates the run)."""
    config = json.loads((ROOT / "langgraph.json").read_text())

    def absolute(spec: str) -> str:
        return str((ROOT / spec).resolve()) if spec.startswith(".") else spec

    config["dependencies"] = [absolute(dep) for dep in config.get("dependencies", [])]
    config["graphs"] = {name: absolute(spec) for name, spec in config["graphs"].items()}
    index = config.get("store", {}).get("index")
    if index and isinstance(index.get("embed"), str):
        index["embed"] = absolute(index["embed"])
    config["disable_persistence"] = True
    path = folder / "langgraph.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def _server_env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES)}
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGSMITH_TRACING="false",
        MEMORY_MODEL="memory_plugin.demo:studio_model",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        PYTHONUNBUFFERED="1",
    )
    return env


def _log_tail(log: Path, lines: int = 60) -> str:
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return "(no server log)"
    return "\n".join(text.splitlines()[-lines:])


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log: Path) -> None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            pytest.fail(
                f"langgraph dev exited with {proc.returncode} before it was ready:\n"
                + _log_tail(log)
            )
        try:
            with opener.open(f"{url}/ok", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    pytest.fail(f"langgraph dev not ready after {STARTUP_TIMEOUT:.0f} s:\n" + _log_tail(log))


def _stop(proc: subprocess.Popen[bytes], log: Path) -> None:
    """Terminate the server's process group (its id is the server's pid) and check it exited."""
    pgid = proc.pid
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pgid, signal.SIGTERM)
    try:
        proc.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(pgid, signal.SIGKILL)
        proc.wait(timeout=STOP_TIMEOUT)
        pytest.fail(f"langgraph dev ignored SIGTERM for {STOP_TIMEOUT:.0f} s:\n" + _log_tail(log))
    deadline = time.monotonic() + STOP_TIMEOUT
    while time.monotonic() < deadline:
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.2)
    else:
        os.killpg(pgid, signal.SIGKILL)
        pytest.fail("processes of langgraph dev's group outlived it")
    assert proc.returncode is not None


@pytest.fixture
def studio_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A running `langgraph dev` serving langgraph.json; yields its URL."""
    _require_tools()
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")
    monkeypatch.setenv("no_proxy", "127.0.0.1,localhost")
    config = _server_config(tmp_path)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = tmp_path / "server.log"
    command = [
        str(CLI),
        "dev",
        "--no-browser",
        "--no-reload",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--config",
        str(config),
    ]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            command,
            cwd=tmp_path,
            env=_server_env(),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        _wait_ready(proc, url, log)
        yield url
    finally:
        _stop(proc, log)


def test_memory_agent_on_langgraph_dev(studio_server: str) -> None:
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=studio_server, timeout=RUN_TIMEOUT)
    thread = client.threads.create()
    events: list[dict[str, Any]] = []
    values: list[dict[str, Any]] = []
    errors: list[Any] = []
    message = {"role": "user", "content": "Hi, my name is Ann. I prefer short answers."}
    run_input: dict[str, Any] = {"messages": [message]}
    for part in client.runs.stream(
        thread["thread_id"],
        "memory_agent",
        input=run_input,
        context={"user_id": USER},
        stream_mode=["custom", "values"],
    ):
        if part.event == "custom":
            events.append(part.data)
        elif part.event == "values":
            values.append(part.data)
        elif part.event == "error":
            errors.append(part.data)
    assert not errors, errors

    memory_events = {(e.get("kind"), e.get("action")) for e in events}
    assert all(e.get("type") == "memory_event" for e in events), events
    assert ("scoped", "note_stored") in memory_events, events
    assert ("profile", "updated") in memory_events, events
    assert values, "no values were streamed"
    assert values[-1]["messages"][-1]["content"] == "Noted, I'll keep it short."

    notes = client.store.search_items(NOTES_NS, limit=20)["items"]
    assert [item["value"]["text"] for item in notes] == ["- Prefers short answers"], notes
    profile = client.store.get_item(PROFILE_NS, PROFILE_KEY)
    assert profile is not None
    text = profile["value"]["text"]
    assert "Name is Ann." in text, text
    assert "Prefers short answers." in text, text
