"""The package as a user installs it: build the sdist and, from it, the wheel; `twine check
--strict` both; install the built wheel (not the checkout) with its `server` and `mcp` extras
into a fresh venv; and run its three entry points from a directory outside the checkout: the
chat (offline model, a temporary SQLite `--url`), the console (`serve`, its page and API with
the printed token) and the MCP gateway (stdio, through the `mcp` SDK's client).

CI runs it after the tests (`.venv/bin/python .ci/wheel.py`); tests/test_wheel.py calls the
same functions. Exits non-zero, saying what was wrong, when a step fails.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import TextContent

ROOT = Path(__file__).resolve().parent.parent
EXTRAS = "server,mcp"
TIMEOUT = 600
STARTUP_SECONDS = 60
TOLD = "remember that my dog is called Rex"
ASKED = "what is my dog called?"


class WheelCheckError(RuntimeError):
    """A step of the check failed; the message says which and what it saw."""


@dataclass(frozen=True)
class Dist:
    """The built sdist and the wheel built from it."""

    sdist: Path
    wheel: Path


@dataclass(frozen=True)
class Console:
    """What `memory-plugin serve` answered: its printed lines, /api/me with the token, / and
    /api/me without it, and its exit status after Ctrl-C."""

    printed: list[str]
    me: dict[str, object]
    page: str
    without_token: int
    exit_code: int


@dataclass(frozen=True)
class Gateway:
    """What `memory-plugin mcp` answered over stdio: its server name, its tools, a recall."""

    server: str
    tools: list[str]
    recalled: str


def run(command: list[str | Path], cwd: Path, stdin: str | None = None) -> str:
    """Run a command to its end, `stdin` its input; its output, or WheelCheckError with it."""
    done = subprocess.run(
        [str(part) for part in command],
        cwd=cwd,
        env=user_env(),
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        input=stdin,
    )
    if done.returncode != 0:
        shown = " ".join(map(str, command))
        raise WheelCheckError(f"`{shown}` exited {done.returncode}:\n{done.stdout}{done.stderr}")
    return str(done.stdout)


def user_env() -> dict[str, str]:
    """This environment without the project's settings or a venv of its own."""
    drop = ("VIRTUAL_ENV", "PYTHONPATH", "PYTHONHOME")
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORY_", "OPENAI_", "ANTHROPIC_")) and k not in drop
    }


def build(out: Path) -> Dist:
    """Build the checkout's sdist, then the wheel from that sdist alone, into `out`."""
    python = sys.executable
    run([python, "-m", "build", "--sdist", "--outdir", out, ROOT], ROOT)
    (sdist,) = out.glob("memory_plugin-*.tar.gz")
    unpacked = out / "sdist"
    with tarfile.open(sdist) as archive:
        archive.extractall(unpacked, filter="data")
    (source,) = unpacked.iterdir()
    run([python, "-m", "build", "--wheel", "--outdir", out, source], source)
    (wheel,) = out.glob("memory_plugin-*.whl")
    return Dist(sdist, wheel)


def twine_check(dist: Dist) -> str:
    """`twine check --strict` on the wheel and the sdist; its report."""
    return run([sys.executable, "-m", "twine", "check", "--strict", dist.wheel, dist.sdist], ROOT)


def fresh_venv(where: Path, wheel: Path, extras: str = EXTRAS) -> Path:
    """A new venv with the wheel and its `extras` (server and mcp) installed; its bin folder."""
    run([sys.executable, "-m", "venv", where], where.parent)
    bin_dir = where / "bin"
    run([bin_dir / "python", "-m", "pip", "install", "-q", f"{wheel}[{extras}]"], where.parent)
    return bin_dir


def imported_from(bin_dir: Path, cwd: Path) -> Path:
    """Where the venv's python imports memory_plugin from, run in `cwd`."""
    code = "import memory_plugin; print(memory_plugin.__file__)"
    return Path(run([bin_dir / "python", "-c", code], cwd).strip())


def chat(bin_dir: Path, cwd: Path, url: str) -> str:
    """Tell the offline chat a fact and ask it back in one session; what it printed."""
    lines = f"{TOLD}\n{ASKED}\n/quit\n"
    command: list[str | Path] = [bin_dir / "memory-plugin", "chat", "--user", "ann", "--url", url]
    return run(command, cwd, stdin=lines)


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def console(bin_dir: Path, cwd: Path, url: str) -> Console:
    """Start `memory-plugin serve` as ann, GET its page and /api/me, and stop it with Ctrl-C."""
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    args = ["serve", "--url", url, "--port", str(port), "--user", "ann", "--log-level", "warning"]
    log = cwd / "serve.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [str(bin_dir / "memory-plugin"), *args],
            cwd=cwd,
            env=user_env(),
            stdout=subprocess.PIPE,
            stderr=sink,
            text=True,
        )
    try:
        printed = token_lines(process, log)
        token = printed[-1].removeprefix("Development token: ")
        wait_until_serving(process, base, log)
        headers = {"Authorization": f"Bearer {token}"}
        me = httpx.get(f"{base}/api/me", headers=headers, timeout=30)
        if me.status_code != 200:
            raise WheelCheckError(f"GET /api/me with the token answered {me.status_code}")
        page = httpx.get(f"{base}/", timeout=30).text
        without_token = httpx.get(f"{base}/api/me", timeout=30).status_code
        process.send_signal(signal.SIGINT)
        return Console(printed, me.json(), page, without_token, process.wait(timeout=30))
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(timeout=30)
        if process.stdout is not None:
            process.stdout.close()


def token_lines(process: subprocess.Popen[str], log: Path) -> list[str]:
    """The lines `serve` prints up to its development token."""
    assert process.stdout is not None
    lines: list[str] = []
    for line in process.stdout:
        lines.append(line.rstrip("\n"))
        if line.startswith("Development token: "):
            return lines
    raise WheelCheckError(f"serve ended before printing a token: {lines}\n{log.read_text()}")


def wait_until_serving(process: subprocess.Popen[str], base: str, log: Path) -> None:
    """Return once the console answers HTTP; WheelCheckError if it exits or never does."""
    deadline = time.monotonic() + STARTUP_SECONDS
    while process.poll() is None and time.monotonic() < deadline:
        try:
            httpx.get(f"{base}/openapi.json", timeout=2)
            return
        except httpx.TransportError:
            time.sleep(0.2)
    raise WheelCheckError(f"the console did not start on {base}:\n{log.read_text()}")


def gateway(bin_dir: Path, cwd: Path, url: str) -> Gateway:
    """Initialize `memory-plugin mcp` over stdio as ann, list its tools and recall her dog."""
    return asyncio.run(_gateway(bin_dir, cwd, url))


async def _gateway(bin_dir: Path, cwd: Path, url: str) -> Gateway:
    params = StdioServerParameters(
        command=str(bin_dir / "memory-plugin"),
        args=["mcp", "--url", url, "--user", "ann"],
        env=user_env(),
        cwd=cwd,
    )
    with (cwd / "mcp.log").open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            started = await client.initialize()
            tools = sorted(tool.name for tool in (await client.list_tools()).tools)
            result = await client.call_tool("recall", {"query": "dog"})
    if result.isError:
        raise WheelCheckError(f"the gateway's recall failed: {result.content}")
    text = "".join(part.text for part in result.content if isinstance(part, TextContent))
    return Gateway(started.serverInfo.name, tools, text)


def check(work: Path) -> list[str]:
    """Every step, in order, into the folder `work`; a line for each step that passed."""
    dist = build(work / "dist")
    done = [f"built {dist.sdist.name} and, from it, {dist.wheel.name}"]
    if twine_check(dist).count("PASSED") != 2:
        raise WheelCheckError("twine check --strict did not pass both files")
    done.append("twine check --strict: both PASSED")
    bin_dir = fresh_venv(work / "venv", dist.wheel)
    user = work / "user"
    user.mkdir()
    where = imported_from(bin_dir, user)
    if not where.is_relative_to(work / "venv"):
        raise WheelCheckError(f"the fresh venv imports memory_plugin from {where}")
    done.append(f"installed {dist.wheel.name}[{EXTRAS}] into a fresh venv")
    url = f"sqlite:///{user / 'memory.db'}"
    answers = [line for line in chat(bin_dir, user, url).splitlines() if "assistant> " in line]
    if len(answers) != 2 or "Rex" not in answers[-1]:
        raise WheelCheckError(f"the chat did not answer from memory: {answers}")
    done.append(f"chat: {answers[-1].strip()}")
    served = console(bin_dir, user, url)
    if served.me.get("user_id") != "ann" or served.without_token != 401 or served.exit_code:
        raise WheelCheckError(f"the console answered {served}")
    done.append("console: /api/me as ann with the token, 401 without, stopped by Ctrl-C")
    mcp = gateway(bin_dir, user, url)
    if "recall" not in mcp.tools or "Rex" not in mcp.recalled:
        raise WheelCheckError(f"the MCP gateway answered {mcp}")
    done.append(f"mcp: {len(mcp.tools)} tools; recall: {mcp.recalled.splitlines()[0]}")
    return done


def main() -> int:
    """Run the check in a temporary folder (or --work); 1 with the reason when a step fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--work", type=Path, help="keep the build and venv here (empty folder)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memory-plugin-wheel-") as scratch:
        work = args.work.resolve() if args.work else Path(scratch)
        work.mkdir(parents=True, exist_ok=True)
        try:
            for line in check(work):
                print(f"ok  {line}", flush=True)
        except WheelCheckError as error:
            print(f"FAILED  {error}", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
