"""The MCP Inspector command docs/mcp.md names reaches `memory-plugin mcp --http` on this
machine's Node: its version is a 2.x release, and it lists the caller's tools with the bearer
token it sends. Skipped, with the reason, where npm or its registry cannot be reached."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.mcp_http import mcp_over_http

pytestmark = pytest.mark.slow

ROOT = Path(__file__).parent.parent
PACKAGE = "@modelcontextprotocol/inspector"
DOC_URL = "http://127.0.0.1:8766/mcp"
DOC_TOKEN = "<ann's token>"


def documented() -> str:
    """The Inspector command line docs/mcp.md shows."""
    page = (ROOT / "docs" / "mcp.md").read_text(encoding="utf-8")
    found = re.findall(rf"^\$ (npx {re.escape(PACKAGE)}@\S+ --cli .*)$", page, re.MULTILINE)
    assert len(found) == 1, found
    return str(found[0])


def unreachable() -> str | None:
    """Why npm cannot fetch the Inspector here, if it cannot."""
    if shutil.which("npx") is None or shutil.which("npm") is None:
        return "npm is not installed"
    try:
        subprocess.run(
            ["npm", "view", PACKAGE, "version"], capture_output=True, timeout=60, check=True
        )
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired) as exc:
        return f"the npm registry cannot be reached ({exc})"
    return None


@pytest.fixture(scope="module")
def npm() -> None:
    reason = unreachable()
    if reason is not None:
        pytest.skip(reason)


def test_the_documented_version_is_a_2x_release(npm: None) -> None:
    spec = shlex.split(documented())[1]
    done = subprocess.run(
        ["npm", "view", spec, "version", "--json"], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    versions = json.loads(done.stdout)
    versions = versions if isinstance(versions, list) else [versions]
    assert versions and all(version.split(".")[0] == "2" for version in versions), versions


def test_the_documented_command_lists_the_tools_of_the_tokens_user(
    npm: None, tmp_path: Path
) -> None:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"ann-token": {"identity": "ann"}}))
    server = [sys.executable, "-m", "memory_plugin.cli", "mcp", "--http", "--tokens", str(tokens)]
    server += ["--url", f"sqlite:///{tmp_path / 'memory.db'}"]
    env = {**os.environ, "MEMORY_AGENT_MEMORY": "true", "npm_config_yes": "true"}
    with mcp_over_http(server, tmp_path / "server.log", env) as base:
        line = documented().replace(DOC_URL, base).replace(DOC_TOKEN, "ann-token")
        done = subprocess.run(
            shlex.split(line), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300
        )
    assert done.returncode == 0, done.stdout + done.stderr
    names = {tool["name"] for tool in json.loads(done.stdout)["tools"]}
    assert {"remember", "recall", "memory_store"} <= names, names
