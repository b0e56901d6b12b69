"""`memory-plugin serve`: the real command in a subprocess, called over HTTP."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from memory_plugin import MemoryContext, connect
from memory_plugin.scoped import ScopedMemory

pytestmark = pytest.mark.slow

pytest.importorskip("uvicorn")
pytest.importorskip("fastapi")

STARTUP_SECONDS = 60


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _env(**extra: str) -> dict[str, str]:
    drop = ("MEMORY_AUTH_TOKENS", "MEMORY_URL", "MEMORY_MODEL", "MEMORY_MAINTENANCE_MODEL")
    return {k: v for k, v in os.environ.items() if k not in drop} | extra


def _command(*args: str) -> list[str]:
    return [sys.executable, "-m", "memory_plugin.cli", "serve", *args]


class Console:
    """A running `memory-plugin serve`: its base URL, what it printed, its process."""

    def __init__(self, process: subprocess.Popen[str], base: str, printed: list[str]) -> None:
        self.process = process
        self.base = base
        self.printed = printed

    def token(self) -> str:
        """The development token, read from the printed URL (and checked against the line
        that prints it alone)."""
        (console,) = [line for line in self.printed if line.startswith("Console: ")]
        match = re.fullmatch(rf"Console: {re.escape(self.base)}/#token=(\S+)", console)
        assert match, console
        assert f"Development token: {match.group(1)}" in self.printed
        return match.group(1)

    def get(self, path: str, token: str | None) -> httpx.Response:
        """GET a path, with the bearer token when given."""
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        return httpx.get(self.base + path, headers=headers, timeout=30)


def _printed(process: subprocess.Popen[str]) -> list[str]:
    """The lines the command prints before it serves: up to the token, else the URL."""
    assert process.stdout is not None
    lines: list[str] = []
    while True:
        line = process.stdout.readline()
        assert line, f"the command ended early; printed {lines}"
        lines.append(line.rstrip("\n"))
        if line.startswith("Development token: "):
            return lines
        if line.startswith("Console: ") and "#token=" not in line:
            return lines


@contextmanager
def serving(tmp_path: Path, *args: str, **env: str) -> Iterator[Console]:
    """Start `memory-plugin serve` on a free port over a temp SQLite file; yields it once it
    answers HTTP, and stops it with Ctrl-C (SIGINT) at the end, expecting a clean exit."""
    port = free_port()
    url = f"sqlite:///{tmp_path / 'console.db'}"
    with (tmp_path / "serve.log").open("w") as log:
        process = subprocess.Popen(
            _command("--url", url, "--port", str(port), "--log-level", "warning", *args),
            cwd=tmp_path,
            env=_env(**env),
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        console = Console(process, base, _printed(process))
        deadline = time.monotonic() + STARTUP_SECONDS
        while True:
            assert process.poll() is None, (tmp_path / "serve.log").read_text()
            try:
                httpx.get(f"{base}/openapi.json", timeout=2)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the console did not start"
                time.sleep(0.2)
        yield console
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30) == 0, (tmp_path / "serve.log").read_text()
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def test_serve_starts_the_console_with_a_development_token(tmp_path: Path) -> None:
    with serving(tmp_path, USER="ann") as console:
        token = console.token()
        assert len(token) >= 32
        assert console.printed[0] == f"Store: sqlite:///{tmp_path / 'console.db'}"
        me = console.get("/api/me", token)
        assert me.status_code == 200
        body = me.json()
        assert (body["user_id"], body["workspaces"]) == ("ann", [])
        assert body["admin"] == ["platform", "org"]
        assert [scope["path"] for scope in body["scopes"]] == ["/api/personal"]
        page = console.get("/", None)
        assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
        assert "<html" in page.text.lower()
        assert console.get("/api/me", None).status_code == 401
        assert console.get("/api/me", token[::-1]).status_code == 401
    assert (tmp_path / "console.db").exists()


def test_serve_with_user_workspaces_and_spaces(tmp_path: Path) -> None:
    args = ("--user", "ann", "--workspace", "acme", "--workspace", "globex", "--space", "s1")
    with serving(tmp_path, *args) as console:
        body = console.get("/api/me", console.token()).json()
    assert (body["user_id"], body["workspaces"]) == ("ann", ["acme", "globex"])
    assert body["admin"] == ["platform", "org", "space:s1"]


def test_serve_on_every_interface_prints_a_local_url_and_warns(tmp_path: Path) -> None:
    with serving(tmp_path, "--host", "0.0.0.0", USER="dev") as console:
        assert console.get("/api/me", console.token()).json()["user_id"] == "dev"
    log = (tmp_path / "serve.log").read_text()
    assert "the development token administers every settings layer" in log
    assert "listens on 0.0.0.0; use --tokens" in log


@pytest.mark.parametrize("how", ["option", "env"])
def test_serve_with_a_token_file_prints_no_token(tmp_path: Path, how: str) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"ann-secret": {"identity": "ann", "workspaces": ["acme"]}}))
    with connect(f"sqlite:///{tmp_path / 'console.db'}") as backend:
        ScopedMemory(backend.store).remember(
            MemoryContext(user_id="ann", workspace_id="personal"), "Ann's dog is called Rex"
        )
    args = ("--tokens", str(tokens)) if how == "option" else ()
    env = {"MEMORY_AUTH_TOKENS": str(tokens)} if how == "env" else {}
    with serving(tmp_path, *args, **env) as console:
        assert not any("token=" in line or "Development token" in line for line in console.printed)
        assert f"Console: {console.base}/ (sign in with a token from {tokens})" in console.printed
        me = console.get("/api/me", "ann-secret")
        assert me.status_code == 200 and me.json()["user_id"] == "ann"
        assert me.json()["admin"] == []
        assert me.json()["workspaces"] == ["acme"]
        hidden = console.get("/api/personal/notes?workspace=personal", "ann-secret")
        assert hidden.json() == {"detail": "not found"}


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--tokens", "missing.json"), "token file missing.json cannot be read as JSON"),
        (("--user", " "), "--user must not be blank"),
        (("--workspace", ""), "--workspace must not be empty"),
        (("--url", "mysql://db/memory"), "mysql"),
        (("--port", "0"), "argument --port: must be a port number from 1 to 65535, got '0'"),
        (("--port", "http"), "argument --port: must be a port number from 1 to 65535"),
    ],
)
def test_serve_refuses_bad_options_before_listening(
    tmp_path: Path, args: tuple[str, ...], message: str
) -> None:
    port = () if "--port" in args else ("--port", str(free_port()))
    done = subprocess.run(
        _command(*port, *args),
        cwd=tmp_path,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2, done.stderr
    assert message in done.stderr and done.stdout == ""
    assert not (tmp_path / ".memory").exists()


def _chat_as_ann(tmp_path: Path, text: str) -> str:
    """`memory-plugin chat` as $USER ann on the console's SQLite file: what it printed."""
    told = subprocess.run(
        [
            sys.executable,
            "-m",
            "memory_plugin.cli",
            "chat",
            "--url",
            f"sqlite:///{tmp_path / 'console.db'}",
        ],
        input=f"{text}\n",
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=_env(USER="ann"),
        timeout=300,
        check=True,
    )
    return told.stdout


def test_what_chat_remembered_is_the_consoles_first_page(tmp_path: Path) -> None:
    """The README's walk-through: chat as $USER, then serve: the console's first personal
    scope is the one chat wrote to."""
    assert "Rex" in _chat_as_ann(tmp_path, "Remember that my dog is called Rex.")
    with serving(tmp_path, USER="ann") as console:
        token = console.token()
        first = console.get("/api/me", token).json()["scopes"][0]
        scope, _, query = first["path"].partition("?")
        notes = console.get(f"{scope}/notes{'?' if query else ''}{query}", token).json()
    assert first["kind"] == "personal"
    assert any("Rex" in note["text"] for day in notes["days"] for note in day["notes"])


def test_serve_shows_what_chat_made_in_any_workspace_and_its_threads(tmp_path: Path) -> None:
    """Chat outside workspaces (its default), then serve for a workspace: the development
    user is still offered what chat remembered, and the chat's thread is theirs to
    summarize."""
    _chat_as_ann(tmp_path, "Remember that my dog is called Rex.")
    args = ("--workspace", "acme")
    with serving(tmp_path, *args, USER="ann", MEMORY_COMPACTION_MANUAL="true") as console:
        token = console.token()
        me = console.get("/api/me", token).json()
        notes = console.get("/api/personal/notes", token).json()
        threads = console.get("/api/threads", token).json()
        summary = httpx.post(
            f"{console.base}/api/threads/user%3A%3Aann%3Amain/summarize",
            headers={"Authorization": f"Bearer {token}"},
            timeout=60,
        )
    assert me["workspaces"] == ["acme"]
    assert me["scopes"][0]["workspace"] == "acme"
    assert any("Rex" in note["text"] for day in notes["days"] for note in day["notes"])
    assert [thread["thread_id"] for thread in threads["threads"]] == ["user::ann:main"]
    assert threads["threads"][0]["last_message"] == "Remember that my dog is called Rex."
    assert threads["summarize"]["enabled"] is True
    assert summary.status_code == 200 and summary.json()["kind"] == "manual"
    assert summary.json()["status"] != "failed", summary.json()
