"""Connections per process to PostgreSQL (issue 24): LangGraph Server, an app process, the
nightly job, idle and under load, sampled from pg_stat_activity.

Run: python bench/connections.py --postgres URL [--only server,app,nightly]
     [--runs 20] [--rounds 3] [--isolated-loops] [--processes 2] [--conversations 25]
     [--turns 4] [--workers 2] [--scopes 200]
     (PostgreSQL from --postgres or $MEMORY_TEST_POSTGRES_URL; a scratch database: the
     nightly scenario empties the plugin's tables before it seeds them)

Each scenario tags its connections with libpq's `application_name` (a query option of the URL,
passed through to PostgreSQL), and a sampler thread reads
`SELECT application_name, state, client_port FROM pg_stat_activity` of the database every
0.1 s; each connection's client port is traced to the process that owns it through /proc
(Linux), so connections are counted per OS process.

- server: `langgraph dev` (the in-memory runtime: its assistants, threads and runs in memory,
  no PostgreSQL pool of its own) serves langgraph.postgres.json, so memory and checkpoints go
  to memory_plugin's backend at MEMORY_URL, with the offline model
  (memory_plugin.offline.demo:studio_model). Phases: idle after startup; `--runs` runs at once
  (one thread each, `runs.wait` through the langgraph-sdk, `--rounds` times, every run stores
  a note); idle after the load. With --isolated-loops the server runs with
  BG_JOB_ISOLATED_LOOPS=true (runs in N_JOBS_PER_WORKER event loops of their own).
- app: `--processes` processes of bench/load_worker.py (`aconnect(url)`, the prebuilt graph,
  `--conversations` concurrent conversations of `--turns` turns, a model that answers at
  once, as bench/load_test.py runs them). Phases: idle (backend open, before the turns start)
  and load.
- nightly: `memory-plugin consolidate --workers N` (the real command line) over `--scopes`
  scopes of 3 notes each, ten days old, with the instant folding model of
  bench/consolidation_shards.py.

The defaults of LangGraph Server's own pool (LANGGRAPH_POSTGRES_POOL_MAX_SIZE and friends)
are read from the installed langgraph_api and printed first: the production runtime that
opens that pool (langgraph-runtime-postgres, in the licensed server image) is not installed
here, so it is not measured. Prints one `RESULT {...}` JSON line per phase and a table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

import psycopg

BENCH = Path(__file__).resolve().parent
ROOT = BENCH.parent
sys.path.insert(0, str(BENCH))

from load_test import WORKER, plan  # noqa: E402

from memory_plugin.backends.url import split_pool_options  # noqa: E402

CLI = Path(sys.executable).parent
SERVER_CONFIG = "langgraph.postgres.json"
SAMPLE_EVERY = 0.1
SQL = (
    "SELECT application_name, state, client_port FROM pg_stat_activity "
    "WHERE datname = current_database() AND pid <> pg_backend_pid() "
    "AND backend_type = 'client backend'"
)


def tagged(url: str, name: str) -> str:
    """`url` with `application_name=name` in its query string."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query) if k != "application_name"]
    return parts._replace(query=urlencode([*query, ("application_name", name)])).geturl()


# --- who owns a client port (Linux /proc) -------------------------------------------------


def _socket_inodes(ports: set[int], server_port: int) -> dict[int, str]:
    """inode of the client socket of each port connected to `server_port`."""
    found: dict[int, str] = {}
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        try:
            lines = Path(table).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            local, remote, inode = fields[1], fields[2], fields[9]
            port, peer = int(local.rsplit(":", 1)[1], 16), int(remote.rsplit(":", 1)[1], 16)
            if port in ports and peer == server_port:
                found[port] = inode
    return found


def port_owners(ports: set[int], server_port: int) -> dict[int, int]:
    """The pid of the process holding the client end of each port (unknown ones left out)."""
    inodes = _socket_inodes(ports, server_port)
    wanted = {f"socket:[{inode}]": port for port, inode in inodes.items()}
    owners: dict[int, int] = {}
    if not wanted:
        return owners
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            for fd in (proc / "fd").iterdir():
                port = wanted.get(os.readlink(fd))
                if port is not None:
                    owners[port] = int(proc.name)
        except OSError:
            continue
    return owners


# --- the sampler ---------------------------------------------------------------------------


class Sampler(threading.Thread):
    """Samples the database's client connections every 0.1 s, labelled with the phase."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = split_pool_options(url)[0]
        self.server_port = urlsplit(self.url).port or 5432
        self.phase = "start"
        self.samples: list[tuple[str, list[tuple[str, str, int]]]] = []
        self.owners: dict[int, int] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        """Sample until stopped."""
        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self.stop.wait(SAMPLE_EVERY):
                found = conn.execute(SQL).fetchall()
                rows = [(str(a), str(s or "starting"), int(p or 0)) for a, s, p in found]
                new = {port for _, _, port in rows if port and port not in self.owners}
                if new:
                    self.owners.update(port_owners(new, self.server_port))
                self.samples.append((self.phase, rows))

    def summary(self, phase: str, app: str) -> dict[str, Any]:
        """Connections of application `app` in `phase`: per process the most and the typical
        (the median over the samples the process had any in; the largest over the processes
        seen in at least half the samples, so a process that only opens a backend briefly,
        the nightly job's coordinator, does not set it), in all, and the most in each
        state."""
        series: dict[int, list[int]] = {}
        totals: list[int] = []
        states: dict[str, int] = {}
        for label, rows in self.samples:
            if label != phase:
                continue
            mine = [(state, port) for name, state, port in rows if name == app]
            for pid, count in Counter(self.owners.get(port, -1) for _, port in mine).items():
                series.setdefault(pid, []).append(count)
            totals.append(len(mine))
            for state, count in Counter(state for state, _ in mine).items():
                states[state] = max(states.get(state, 0), count)
        return {
            "app": app,
            "phase": phase,
            "samples": len(totals),
            "processes": len(set(series) - {-1}),
            "unattributed": -1 in series,
            "per_process_max": max((max(counts) for counts in series.values()), default=0),
            "per_process_typical": max(
                (statistics.median(counts) for counts in _lasting(series, len(totals))),
                default=0,
            ),
            "total_max": max(totals, default=0),
            "states_max": states,
        }


def _lasting(series: dict[int, list[int]], samples: int) -> list[list[int]]:
    """The counts of the processes seen in at least half the samples (all when none was)."""
    lasting = [counts for counts in series.values() if 2 * len(counts) >= samples]
    return lasting or list(series.values())


@contextmanager
def sampling(url: str) -> Iterator[Sampler]:
    """A running Sampler, stopped on exit."""
    sampler = Sampler(url)
    sampler.start()
    try:
        yield sampler
    finally:
        sampler.stop.set()
        sampler.join()


def hold(sampler: Sampler, phase: str, seconds: float) -> None:
    """Label the next `seconds` of samples `phase`."""
    sampler.phase = phase
    time.sleep(seconds)


# --- scenario: LangGraph Server (langgraph dev) ---------------------------------------------


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _server_config(folder: Path) -> Path:
    """langgraph.postgres.json with absolute paths, in `folder`."""
    config = json.loads((ROOT / SERVER_CONFIG).read_text())

    def absolute(spec: str) -> str:
        return str((ROOT / spec).resolve()) if spec.startswith(".") else spec

    config["dependencies"] = [absolute(dep) for dep in config["dependencies"]]
    config["graphs"] = {name: absolute(spec) for name, spec in config["graphs"].items()}
    config["auth"]["path"] = absolute(config["auth"]["path"])
    path = folder / "langgraph.json"
    path.write_text(json.dumps(config))
    return path


@contextmanager
def langgraph_dev(url: str, users: int, isolated: bool) -> Iterator[tuple[str, list[str]]]:
    """`langgraph dev` on langgraph.postgres.json with MEMORY_URL=url; yields its address
    and one bearer token per user. Stopped (its process group) on exit."""
    folder = Path(tempfile.mkdtemp(prefix="conn-server-"))
    tokens = {f"tok-{i}": {"identity": f"user{i}"} for i in range(users)}
    (folder / "tokens.json").write_text(json.dumps(tokens))
    port = _free_port()
    drop = ("LANGSMITH_", "LANGCHAIN_", "OPENAI_", "ANTHROPIC_", "MEMORY_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    env |= {
        "MEMORY_URL": url,
        "MEMORY_AUTH_TOKENS": str(folder / "tokens.json"),
        "MEMORY_MODEL": "memory_plugin.offline.demo:studio_model",
        "LANGGRAPH_CLI_NO_ANALYTICS": "1",
        "LANGGRAPH_NO_VERSION_CHECK": "true",
        "LANGSMITH_TRACING": "false",
        "NO_PROXY": "127.0.0.1,localhost",
        "no_proxy": "127.0.0.1,localhost",
        "BG_JOB_ISOLATED_LOOPS": "true" if isolated else "false",
    }
    command = [str(CLI / "langgraph"), "dev", "--no-browser", "--no-reload", "--host"]
    command += ["127.0.0.1", "--port", str(port), "--config", str(_server_config(folder))]
    log = (folder / "server.log").open("wb")
    proc = subprocess.Popen(
        command, cwd=folder, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
    )
    address = f"http://127.0.0.1:{port}"
    try:
        _wait_ready(proc, address, folder / "server.log")
        yield address, list(tokens)
    finally:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
        shutil.rmtree(folder, ignore_errors=True)


def _wait_ready(proc: subprocess.Popen[bytes], address: str, log: Path) -> None:
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"langgraph dev exited: {log.read_text()[-3000:]}")
        try:
            with opener.open(f"{address}/ok", timeout=5) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.5)
    raise SystemExit(f"langgraph dev not ready: {log.read_text()[-3000:]}")


def _one_user(address: str, token: str, rounds: int) -> int:
    """`rounds` runs of memory_agent on a thread of this user's; the runs that failed."""
    from langgraph_sdk import get_sync_client

    client = get_sync_client(url=address, timeout=300, headers={"Authorization": f"Bearer {token}"})
    thread = client.threads.create()["thread_id"]
    failed = 0
    for turn in range(rounds):
        message: Any = {
            "messages": [{"role": "user", "content": f"Remember that my code is K{turn}."}]
        }
        result = client.runs.wait(thread, "memory_agent", input=message)
        if not isinstance(result, dict) or "__error__" in result or not result.get("messages"):
            failed += 1
    return failed


def server_scenario(args: argparse.Namespace, sampler: Sampler) -> list[dict[str, Any]]:
    """Idle, under load, idle again: connections of one langgraph dev process."""
    app = "lg-server-isolated" if args.isolated_loops else "lg-server"
    with langgraph_dev(tagged(args.postgres, app), args.runs, args.isolated_loops) as (
        address,
        tokens,
    ):
        hold(sampler, f"{app}:idle", args.idle)
        sampler.phase = f"{app}:load"
        began = time.monotonic()
        with ThreadPoolExecutor(len(tokens)) as pool:
            failed = sum(pool.map(lambda t: _one_user(address, t, args.rounds), tokens))
        seconds = time.monotonic() - began
        hold(sampler, f"{app}:idle after load", args.idle)
    load = sampler.summary(f"{app}:load", app)
    load |= {"runs": args.runs * args.rounds, "failed_runs": failed, "seconds": round(seconds, 1)}
    load["concurrent_runs"] = args.runs
    idle = sampler.summary(f"{app}:idle", app)
    after = sampler.summary(f"{app}:idle after load", app)
    return [idle, load, after]


# --- scenario: app processes (bench/load_worker.py) -------------------------------------------


def app_scenario(args: argparse.Namespace, sampler: Sampler) -> list[dict[str, Any]]:
    """N load_worker processes: idle with the backend open, then serving conversations."""
    work = Path(tempfile.mkdtemp(prefix="conn-app-"))
    specs = plan(args.processes, args.conversations, f"C{int(time.time())}")
    start_at = time.time() + args.warmup
    children = []
    for index, conversations in enumerate(specs):
        spec = {
            "url": tagged(args.postgres, "app"),
            "conversations": conversations,
            "turns": args.turns,
            "start_at": start_at,
            "max_attempts": 1,
            "ready": str(work / f"ready{index}"),
        }
        (work / f"spec{index}.json").write_text(json.dumps(spec))
        command = [sys.executable, str(WORKER), str(work / f"spec{index}.json")]
        children.append(subprocess.Popen([*command, str(work / f"out{index}.json")]))
    while not all((work / f"ready{i}").exists() for i in range(args.processes)):
        if any(child.poll() is not None for child in children):
            raise SystemExit("a worker process failed while opening its backend")
        time.sleep(0.05)
    idle_for = start_at - time.time() - 0.3
    if idle_for > 0.5:
        hold(sampler, "app:idle", idle_for)
    else:
        opened = time.time() - (start_at - args.warmup)
        print(
            f"NOTE app:idle not measured: the {args.processes} processes took {opened:.1f} s to "
            f"open their backends, past --warmup {args.warmup} (a loaded host? raise --warmup)",
            flush=True,
        )
    sampler.phase = "app:load"
    codes = [child.wait(timeout=1800) for child in children]
    sampler.phase = "app:done"
    if any(codes):
        raise SystemExit(f"a worker process failed: exit codes {codes}")
    outs = [json.loads((work / f"out{i}.json").read_text()) for i in range(args.processes)]
    shutil.rmtree(work, ignore_errors=True)
    load = sampler.summary("app:load", "app")
    load |= {
        "concurrent_conversations": args.conversations,
        "turns": sum(len(out["latencies"]) for out in outs),
        "failed_turns": sum(len(out["failed_turns"]) for out in outs),
    }
    rows = [sampler.summary("app:idle", "app")] if idle_for > 0.5 else []
    return [*rows, load]


# --- scenario: the nightly job --------------------------------------------------------------


def nightly_scenario(args: argparse.Namespace, sampler: Sampler) -> list[dict[str, Any]]:
    """`memory-plugin consolidate --workers N` over seeded scopes."""
    from consolidation_shards import MODEL, _reset, _seed

    _reset(args.postgres)
    _seed(args.postgres, args.scopes, 3, 4)
    url = tagged(args.postgres, "nightly")
    command = [str(CLI / "memory-plugin"), "consolidate", "--url", url, "--model", MODEL]
    command += ["--workers", str(args.workers)]
    sampler.phase = "nightly:run"
    began = time.monotonic()
    path = os.pathsep.join(filter(None, [str(BENCH), os.environ.get("PYTHONPATH")]))
    env = os.environ | {"PYTHONPATH": path}  # the model's module imports bench/pgtables.py
    done = subprocess.run(
        command, capture_output=True, text=True, timeout=1800, check=False, env=env
    )
    seconds = time.monotonic() - began
    sampler.phase = "nightly:done"
    if done.returncode != 0:
        raise SystemExit(f"consolidate failed: {done.stdout}\n{done.stderr[-3000:]}")
    row = sampler.summary("nightly:run", "nightly")
    row |= {"workers": args.workers, "scopes": args.scopes, "seconds": round(seconds, 1)}
    row["summary"] = done.stdout.strip().splitlines()
    return [row]


# --- report ---------------------------------------------------------------------------------


def server_defaults() -> dict[str, Any]:
    """LangGraph Server's own pool settings, as the installed langgraph_api reads them (in a
    child process: its config module needs REDIS_URI and DATABASE_URI set, to anything)."""
    code = (
        "import json; from importlib.metadata import version; from langgraph_api import config; "
        "print(json.dumps({'langgraph_api': version('langgraph-api'), "
        "'LANGGRAPH_POSTGRES_POOL_MAX_SIZE': config.POSTGRES_POOL_MAX_SIZE, "
        "'LANGGRAPH_CHECKPOINTER_POSTGRES_POOL_MIN_SIZE': "
        "config.CHECKPOINTER_POSTGRES_POOL_MIN_SIZE, "
        "'N_JOBS_PER_WORKER': config.N_JOBS_PER_WORKER, "
        "'BG_JOB_ISOLATED_LOOPS': config.BG_JOB_ISOLATED_LOOPS}))"
    )
    names = {"LANGGRAPH_POSTGRES_POOL_MAX_SIZE", "LANGGRAPH_CHECKPOINTER_POSTGRES_POOL_MIN_SIZE"}
    names |= {"N_JOBS_PER_WORKER", "BG_JOB_ISOLATED_LOOPS"}
    env = {k: v for k, v in os.environ.items() if k not in names}
    env |= {"REDIS_URI": "redis://unused", "DATABASE_URI": "postgres://unused"}
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, check=False
    )
    if done.returncode != 0:
        return {"error": done.stderr.strip().splitlines()[-1:] or "langgraph_api not installed"}
    found: dict[str, Any] = json.loads(done.stdout)
    return found


def postgres_settings(url: str) -> dict[str, str]:
    """The server's connection limits."""
    names = ["max_connections", "superuser_reserved_connections", "reserved_connections"]
    names += ["max_wal_senders", "server_version"]
    with psycopg.connect(split_pool_options(url)[0]) as conn:
        found = {}
        for name in names:
            try:
                found[name] = str(conn.execute(f"SHOW {name}").fetchone()[0])  # type: ignore[index]
            except psycopg.Error:
                conn.rollback()
        return found


def table(rows: list[dict[str, Any]]) -> str:
    """The Markdown table of the phases."""
    lines = [
        "| process | phase | processes | per process: most / typical | all: most "
        "| most active / idle | work |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        states = row["states_max"]
        work = ""
        if "runs" in row:
            work = (
                f"{row['runs']} runs, {row['concurrent_runs']} at once, {row['failed_runs']} failed"
            )
        elif "turns" in row:
            work = (
                f"{row['turns']} turns, {row['concurrent_conversations']} conversations "
                f"per process, {row['failed_turns']} failed"
            )
        elif "workers" in row:
            work = f"{row['scopes']} scopes, {row['workers']} workers, {row['seconds']} s"
        lines.append(
            f"| {row['app']} | {row['phase'].split(':', 1)[1]} | {row['processes']} "
            f"| {row['per_process_max']} / {row['per_process_typical']:g} | {row['total_max']} "
            f"| {states.get('active', 0)} / {states.get('idle', 0)} | {work} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Run the scenarios and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--postgres", default=os.environ.get("MEMORY_TEST_POSTGRES_URL"))
    parser.add_argument("--only", default="server,app,nightly")
    parser.add_argument("--idle", type=float, default=5.0, help="seconds sampled idle")
    parser.add_argument("--runs", type=int, default=20, help="server runs at once")
    parser.add_argument("--rounds", type=int, default=3, help="runs per server thread")
    parser.add_argument("--isolated-loops", action="store_true")
    parser.add_argument("--processes", type=int, default=2)
    parser.add_argument("--conversations", type=int, default=25)
    parser.add_argument("--turns", type=int, default=4)
    parser.add_argument("--warmup", type=float, default=15.0, help="seconds to open backends")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--scopes", type=int, default=200)
    args = parser.parse_args()
    if not args.postgres:
        parser.error("give --postgres or set MEMORY_TEST_POSTGRES_URL")
    print(f"LangGraph Server defaults (installed source): {json.dumps(server_defaults())}")
    print(f"PostgreSQL: {json.dumps(postgres_settings(args.postgres))}")
    scenarios = {"server": server_scenario, "app": app_scenario, "nightly": nightly_scenario}
    rows: list[dict[str, Any]] = []
    with sampling(args.postgres) as sampler:
        for name in args.only.split(","):
            for row in scenarios[name](args, sampler):
                print("RESULT " + json.dumps(row), flush=True)
                rows.append(row)
    print(table(rows))


if __name__ == "__main__":
    main()
