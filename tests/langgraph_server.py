"""Running `langgraph dev` for the server tests: the root langgraph.json (with its bearer-token
auth, graphs/auth.py) served from this venv on a free 127.0.0.1 port, offline.

The server runs with `--no-browser --no-reload`, no analytics, no version check and no
LangSmith tracing, so it needs no network. Its working directory is a fresh temporary folder
holding a copy of the root langgraph.json with absolute paths: the in-memory server loads and
saves its threads and store in `.langgraph_api/` under its working directory, so state left in
the repository by an earlier `langgraph dev` would change what a run writes (and a run would
leave files there). The server is started in its own process group and stopped by its id.
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
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
CLI = Path(sys.executable).parent / "langgraph"
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")
STARTUP_TIMEOUT = 90.0
RUN_TIMEOUT = 120.0
STOP_TIMEOUT = 30.0

# Anything that could make the server or the graph reach the network.
_DROP_PREFIXES = ("LANGSMITH_", "LANGCHAIN_", "OPENAI_", "ANTHROPIC_", "MEMORY_AUTH_")


def require_tools() -> None:
    """Skip (fail in CI) when the langgraph CLI, SDK or API server is not installed."""
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
    message = f"server tests need {', '.join(missing)}: pip install -e '.[dev]'"
    if IN_CI:
        pytest.fail(message)
    pytest.skip(message)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_config(folder: Path, name: str = "langgraph.json") -> Path:
    """The root langgraph.json (or `name`) with absolute paths (and persistence off, which
    langgraph-api 0.16 still ignores: the fresh working directory is what isolates the run)."""
    config = json.loads((ROOT / name).read_text())

    def absolute(spec: str) -> str:
        return str((ROOT / spec).resolve()) if spec.startswith(".") else spec

    config["dependencies"] = [absolute(dep) for dep in config.get("dependencies", [])]
    config["graphs"] = {name: absolute(spec) for name, spec in config["graphs"].items()}
    if isinstance(config.get("auth", {}).get("path"), str):
        config["auth"]["path"] = absolute(config["auth"]["path"])
    index = config.get("store", {}).get("index")
    if index and isinstance(index.get("embed"), str):
        index["embed"] = absolute(index["embed"])
    config["disable_persistence"] = True
    path = folder / "langgraph.json"
    path.write_text(json.dumps(config, indent=2))
    return path


def _server_env(extra: Mapping[str, str]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(_DROP_PREFIXES)}
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        LANGSMITH_TRACING="false",
        MEMORY_MODEL="memory_plugin.offline.demo:studio_model",
        NO_PROXY="127.0.0.1,localhost",
        no_proxy="127.0.0.1,localhost",
        PYTHONUNBUFFERED="1",
    )
    env.update(extra)
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


@contextlib.contextmanager
def langgraph_dev(
    folder: Path, env: Mapping[str, str] | None = None, config_name: str = "langgraph.json"
) -> Iterator[str]:
    """A running `langgraph dev` serving the root `config_name` from `folder`; yields its URL."""
    require_tools()
    config = _server_config(folder, config_name)
    port = _free_port()
    url = f"http://127.0.0.1:{port}"
    log = folder / "server.log"
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
            cwd=folder,
            env=_server_env(env or {}),
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


@contextlib.contextmanager
def langgraph_dev_with_tokens(
    folder: Path, tokens: Mapping[str, Mapping[str, Any]], env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """`langgraph_dev` accepting exactly the bearer tokens of `tokens` (graphs/auth.py's table)."""
    path = folder / "tokens.json"
    path.write_text(json.dumps(tokens))
    with langgraph_dev(folder, {**(env or {}), "MEMORY_AUTH_TOKENS": str(path)}) as url:
        yield url


def refusal(call: Callable[[], Any]) -> tuple[int, Any]:
    """The HTTP status and JSON body of a request the server refused (the SDK raises its own
    errors, subclasses of httpx's HTTPStatusError, or from `runs.wait` that error itself)."""
    import httpx

    with pytest.raises(httpx.HTTPStatusError) as refused:
        call()
    response = refused.value.response
    response.read()
    return response.status_code, response.json()


def client_for(url: str, token: str | None) -> Any:
    """A langgraph-sdk sync client sending `Authorization: Bearer <token>`."""
    from langgraph_sdk import get_sync_client

    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return get_sync_client(url=url, timeout=RUN_TIMEOUT, headers=headers)


@dataclass
class Streamed:
    """What one streamed run sent back."""

    events: list[dict[str, Any]] = field(default_factory=list)
    values: list[dict[str, Any]] = field(default_factory=list)
    errors: list[Any] = field(default_factory=list)


def stream_run(client: Any, thread_id: str, text: str, context: dict[str, Any]) -> Streamed:
    """Stream one user message through memory_agent with custom events and values."""
    out = Streamed()
    for part in client.runs.stream(
        thread_id,
        "memory_agent",
        input={"messages": [{"role": "user", "content": text}]},
        context=context,
        stream_mode=["custom", "values"],
    ):
        if part.event == "custom":
            out.events.append(part.data)
        elif part.event == "values":
            out.values.append(part.data)
        elif part.event == "error":
            out.errors.append(part.data)
    return out
