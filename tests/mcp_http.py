"""An MCP gateway served over streamable HTTP in a subprocess, for the tests that reach it."""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

import httpx

from tests.browser import free_port


@contextmanager
def mcp_over_http(
    command: Sequence[str], log: Path, env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """Start `command` (an `mcp --http` command line, without --port) on a free port, logging
    to `log`; yields the MCP endpoint once it answers, and stops the server after."""
    port = free_port()
    with log.open("wb") as sink:
        process = subprocess.Popen(
            [*command, "--port", str(port)], env=env, stdout=sink, stderr=subprocess.STDOUT
        )
    base = f"http://127.0.0.1:{port}/mcp"
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, log.read_text()
            try:
                httpx.get(base, timeout=1)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline, "the MCP server did not start"
                time.sleep(0.2)
        yield base
    finally:
        process.terminate()
        process.wait(10)
