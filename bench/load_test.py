"""Many app-server processes, one PostgreSQL: throughput, turn latency, connections, and a
check that nothing was lost or corrupted.

Run: python bench/load_test.py [--processes 1,2,4] [--conversations 25] [--turns 10]
     [--postgres URL] [--restart-after S --restart-cmd CMD]
     (PostgreSQL from --postgres or $MEMORY_TEST_POSTGRES_URL)

For each process count N, N worker processes (bench/load_worker.py) each serve M concurrent
conversations through the prebuilt graph with a scripted model that answers instantly: every
turn stores a note (`remember`), rewrites the scope's document with compare-and-swap
(`update_memory` with the version it was shown), calls a tool with a long output (so masking
and then compaction happen), and the profile is rewritten after the turn. Users overlap: each
user holds conversations in several processes at once, and half the conversations are
shared threads in team workspaces that many users write to. While it runs the connections
to the database are sampled from pg_stat_activity. Afterwards it verifies:

- every acknowledged note is stored exactly once, every acknowledged document version is in
  the document's history exactly once with the content that was sent;
- every turn's fact is in the user's profile (no profile update lost);
- every thread's checkpoint loads, its turns are in order, every tool result follows its
  call, and its compaction dividers are well formed;
- no error reached a user (no failed turn, no tool error, every answer the scripted one).

With --restart-after S, CMD (e.g. `pg_ctl -D DATA restart -m fast`) is run S seconds in:
turns in flight then may fail, each within the pool timeout (the user sees the error and
retries), and every process must serve turns again afterwards without a restart. A post-turn
profile update that failed on the restart (it fails open: the answer was already out, the
failure is logged and emitted as a memory event) is counted apart and excused; nothing else is.
Prints a JSON line per run (prefixed "RESULT ") and a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psycopg
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

sys.path.insert(0, str(Path(__file__).resolve().parent))

from load_worker import KEEP_RATIO, TURN, build_graph, context_of, fact

from memory_plugin import MemoryContext, connect
from memory_plugin.backends.url import split_pool_options
from memory_plugin.context_management.masking import is_masked
from memory_plugin.profile.document import render
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.scoped import ScopedMemory

WORKER = Path(__file__).resolve().parent / "load_worker.py"


def plan(processes: int, conversations: int, run_id: str) -> list[list[dict[str, Any]]]:
    """Conversation specs per process: users spread over processes, team threads shared."""
    total = processes * conversations
    users = max(2, total // 3)
    teams = max(1, total // 10)
    specs: list[list[dict[str, Any]]] = [[] for _ in range(processes)]
    for g in range(total):
        name = f"{run_id}c{g}"
        conv = {"name": name, "thread": f"{run_id}-t{g}", "user": f"{run_id}u{g % users}"}
        if g % 2:
            conv["workspace"] = f"{run_id}w{g % teams}"
        specs[g % processes].append(conv)
    return specs


class Sampler(threading.Thread):
    """Samples the number of connections to the database from pg_stat_activity."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url, self.samples, self.stop = split_pool_options(url)[0], [], threading.Event()

    def run(self) -> None:
        """Sample every 0.2 s until stopped (a server being restarted is skipped)."""
        sql = (
            "SELECT count(*) FROM pg_stat_activity "
            "WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        conn: psycopg.Connection[Any] | None = None
        while not self.stop.wait(0.2):
            try:
                if conn is None or conn.closed:
                    conn = psycopg.connect(self.url, autocommit=True, connect_timeout=2)
                row = conn.execute(sql).fetchone()
                self.samples.append(int(row[0]) if row else 0)
            except psycopg.Error:
                conn = None
        if conn is not None:
            conn.close()


def percentile(values: list[float], share: float) -> float:
    """The `share` quantile of `values` (nearest rank), 0 when empty."""
    if not values:
        return 0.0
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(share * len(ordered)) - 1))]


def run_once(
    args: argparse.Namespace, processes: int, restart: Callable[[], None] | None = None
) -> dict[str, Any]:
    """Run N worker processes to completion (calling `restart` args.restart_after seconds
    in), verify, and summarise."""
    run_id = f"L{uuid.uuid4().hex[:6]}"
    specs = plan(processes, args.conversations, run_id)
    work = Path(tempfile.mkdtemp(prefix="load-"))
    start_at = time.time() + args.warmup
    children = []
    for index, conversations in enumerate(specs):
        spec = {
            "url": args.postgres,
            "conversations": conversations,
            "turns": args.turns,
            "start_at": start_at,
            "max_attempts": args.max_attempts,
            "keep_ratio": args.keep_ratio,
            "ready": str(work / f"ready{index}"),
        }
        (work / f"spec{index}.json").write_text(json.dumps(spec))
        command = [sys.executable, str(WORKER), str(work / f"spec{index}.json")]
        children.append(subprocess.Popen([*command, str(work / f"out{index}.json")]))
    sampler = Sampler(args.postgres)
    sampler.start()
    restarted = None
    if restart is not None:
        ready = [work / f"ready{index}" for index in range(processes)]
        while not all(path.exists() for path in ready):
            if any(child.poll() is not None for child in children):
                break
            time.sleep(0.05)
        began = max(start_at, time.time())
        time.sleep(max(0.0, began + args.restart_after - time.time()))
        began = time.time()
        restart()
        restarted = (began, time.time())
    codes = [child.wait(timeout=args.timeout) for child in children]
    sampler.stop.set()
    sampler.join()
    if any(codes):
        raise SystemExit(f"a worker process failed: exit codes {codes}")
    outs = [json.loads((work / f"out{i}.json").read_text()) for i in range(processes)]
    summary = summarise(outs, processes, args, sampler.samples, restarted)
    summary["verification"] = verify(args.postgres, specs, outs, args.turns, restarted)
    return {**summary, "outs": outs, "specs": specs}


def summarise(
    outs: list[dict[str, Any]],
    processes: int,
    args: argparse.Namespace,
    samples: list[int],
    restarted: tuple[float, float] | None,
) -> dict[str, Any]:
    """Throughput, latency percentiles, connections, and the restart's cost (`restarted`:
    when the restart began and when the server was back)."""
    latencies = [s for out in outs for s in out["latencies"]]
    began = min(out["started"] for out in outs)
    ended = max(out["ended"] for out in outs)
    summary: dict[str, Any] = {
        "processes": processes,
        "conversations": args.conversations,
        "turns": len(latencies),
        "seconds": round(ended - began, 2),
        "turns_per_second": round(len(latencies) / (ended - began), 2),
        "p50_ms": round(1000 * percentile(latencies, 0.5), 1),
        "p95_ms": round(1000 * percentile(latencies, 0.95), 1),
        "p99_ms": round(1000 * percentile(latencies, 0.99), 1),
        "connections_max": max(samples, default=0),
        "connections_median": statistics.median(samples) if samples else 0,
        "failed_turns": [f for out in outs for f in out["failed_turns"]],
    }
    if restarted is not None:
        began, back = restarted
        failed = summary["failed_turns"]
        ends = sorted(t for out in outs for t in out["turn_ends"] if t > back)
        summary["restart"] = {
            "restart_took_s": round(back - began, 2),
            "turns_before": sum(t < began for out in outs for t in out["turn_ends"]),
            "turns_after": len(ends),
            "failed_turns": len(failed),
            "failed_after_server_back": sum(f["at"] > back for f in failed),
            "slowest_failure_s": round(max((f["seconds"] for f in failed), default=0.0), 2),
            "first_success_after_s": round(ends[0] - back, 2) if ends else None,
            "processes_serving_after": sum(any(t > back for t in out["turn_ends"]) for out in outs),
        }
    return summary


def verify(
    url: str,
    specs: list[list[dict[str, Any]]],
    outs: list[dict[str, Any]],
    turns: int,
    restarted: tuple[float, float] | None = None,
) -> dict[str, Any]:
    """Check every acknowledged write, every profile and every thread; the problems found.

    With `restarted` (when a server restart began, when it was back), turns that failed and
    were retried, tools that answered "Memory is unavailable right now" meanwhile (or within
    10 s after) and profile updates that failed, or whose outcome the turn did not see (they
    run in the background), are counted, not problems."""
    problems: list[str] = []
    stats = {"notes": sum(len(o["notes"]) for o in outs), "versions": 0, "dividers": 0}
    stats["versions"] = sum(len(o["versions"]) for o in outs)
    stats["masked"] = 0
    convs = {conv["name"]: conv for per in specs for conv in per}
    done = {(name, turn): attempt for out in outs for name, turn, attempt in out["completed"]}
    with connect(url) as backend:
        notes, profiles = ScopedMemory(backend.store), ProfileMemory(backend.store)
        graph = build_graph(backend)
        _check_notes(notes, convs, outs, problems)
        _check_versions(notes, convs, outs, problems)
        skipped = {(name, turn): status for o in outs for name, turn, status in o["profile_failed"]}
        stats["profile_failed"] = len(skipped)
        for name, conv in convs.items():
            ctx = MemoryContext(**context_of(conv))
            profile = profiles.read(ctx)
            text = render(profile) if profile is not None else ""
            for turn in range(1, turns + 1):
                if (name, turn) not in done or fact(name, turn)[1] in text:
                    continue
                unseen = skipped.get((name, turn), "updated") in ("failed", None)
                if not (restarted is not None and unseen):
                    problems.append(f"profile of {conv['user']} lacks turn {turn} of {name}")
            _check_thread(graph, conv, done, problems, stats)
    errors = [e for out in outs for e in out["user_errors"]]
    if restarted is not None:
        began, back = restarted
        clear = [e for e in errors if "unavailable" in e["error"] and began <= e["at"] <= back + 10]
        stats["tool_unavailable_on_restart"] = len(clear)
        errors = [e for e in errors if e not in clear]
    problems += [f"error reached a user: {e}" for e in errors]
    if restarted is None:
        failed = [f for out in outs for f in out["failed_turns"]]
        problems += [f"turn failed: {f}" for f in failed]
    completed = len(done)
    expected = len(convs) * turns
    if completed != expected:
        problems.append(f"{expected - completed} of {expected} turns never completed")
    return {
        "ok": not problems,
        "problems": problems[:20],
        "problem_count": len(problems),
        **stats,
    }


def _check_notes(
    memory: ScopedMemory,
    convs: dict[str, dict[str, Any]],
    outs: list[dict[str, Any]],
    problems: list[str],
) -> None:
    by_scope: dict[tuple[str, str], list[str]] = {}
    for out in outs:
        for name, day, position, text in out["notes"]:
            conv = convs[name]
            ctx = MemoryContext(**context_of(conv))
            key = (conv.get("workspace") or conv["user"], conv["user"])
            if key not in by_scope:
                by_scope[key] = [note.text for note in memory.list_notes(ctx)]
            stored = by_scope[key]
            count = sum(text in line for line in stored)
            if count != 1:
                problems.append(f"note {text!r} ({day} #{position}) stored {count} times")


def _check_versions(
    memory: ScopedMemory,
    convs: dict[str, dict[str, Any]],
    outs: list[dict[str, Any]],
    problems: list[str],
) -> None:
    histories: dict[str, list[Any]] = {}
    for out in outs:
        for name, version, turn, attempt in out["versions"]:
            conv = convs[name]
            scope = conv.get("workspace") or conv["user"]
            if scope not in histories:
                histories[scope] = memory.history(MemoryContext(**context_of(conv)))
            same = [doc for doc in histories[scope] if doc.version == version]
            line = f"- {name} turn {turn} attempt {attempt}"
            if len(same) != 1 or line not in same[0].text:
                problems.append(f"document version {version} of {scope} ({line}) not kept once")


def _check_thread(
    graph: Any,
    conv: dict[str, Any],
    done: dict[tuple[str, int], int],
    problems: list[str],
    stats: dict[str, int],
) -> None:
    config = {"configurable": {"thread_id": conv["thread"]}}
    try:
        state = graph.get_state(config)
    except Exception as exc:
        problems.append(f"thread {conv['thread']} does not load: {exc}")
        return
    messages = state.values.get("messages", [])
    human = [
        int(found[1])
        for found in (TURN.match(str(m.content)) for m in messages if isinstance(m, HumanMessage))
        if found
    ]
    if human != sorted(human):
        problems.append(f"thread {conv['thread']}: turns out of order {human}")
    last = max((t for (name, t) in done if name == conv["name"]), default=0)
    if last and (not human or human[-1] != last):
        problems.append(f"thread {conv['thread']}: last turn {human[-1:]} instead of {last}")
    calls = set()
    for message in messages:
        if isinstance(message, AIMessage):
            calls.update(call["id"] for call in message.tool_calls)
        elif isinstance(message, ToolMessage) and message.tool_call_id not in calls:
            problems.append(f"thread {conv['thread']}: tool result without its call")
    info = state.values.get("memory_context", {}) or {}
    for divider in info.get("dividers", []):
        if not divider.get("tokens_after", 0) < divider.get("tokens_before", 0):
            problems.append(f"thread {conv['thread']}: divider did not shrink: {divider}")
    dividers = info.get("dividers", [])
    stats["dividers"] += len(dividers)
    stats["masked"] += max(int(info.get("masked", 0)), sum(is_masked(m) for m in messages))
    ids = {m.id for m in messages}
    if dividers and dividers[-1].get("before_message_id") not in ids | {None}:
        problems.append(f"thread {conv['thread']}: last divider points at no message")


def table(rows: list[dict[str, Any]]) -> str:
    """The results as a Markdown table, ratios against the first row."""
    base = rows[0]["turns_per_second"] or 1.0
    lines = [
        "| processes | conversations | turns | turns/s | vs 1st | p50 ms | p95 ms | p99 ms "
        "| connections (max / median) | notes / versions acked | masked / compactions "
        "| verified |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        total = row["processes"] * row["conversations"]
        check = row["verification"]
        lines.append(
            f"| {row['processes']} | {total} | {row['turns']} | {row['turns_per_second']} "
            f"| {row['turns_per_second'] / base:.2f}x | {row['p50_ms']} | {row['p95_ms']} "
            f"| {row['p99_ms']} | {row['connections_max']} / {row['connections_median']} "
            f"| {check['notes']} / {check['versions']} | {check['masked']} / {check['dividers']} "
            f"| {'yes' if check['ok'] else 'NO'} |"
        )
    return "\n".join(lines)


def main() -> None:
    """Parse the arguments and run each process count."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", default="1,2,4")
    parser.add_argument("--conversations", type=int, default=25)
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--postgres", default=os.environ.get("MEMORY_TEST_POSTGRES_URL"))
    parser.add_argument("--warmup", type=float, default=3.0, help="seconds to open backends")
    parser.add_argument("--timeout", type=float, default=1800.0)
    parser.add_argument("--restart-after", type=float, default=None)
    parser.add_argument("--restart-cmd", default=None)
    parser.add_argument("--max-attempts", type=int, default=None)
    parser.add_argument(
        "--keep-ratio", type=float, default=KEEP_RATIO, help="summarization_keep_ratio"
    )
    args = parser.parse_args()
    if not args.postgres:
        raise SystemExit("no PostgreSQL: pass --postgres URL or set MEMORY_TEST_POSTGRES_URL")
    if (args.restart_after is None) != (args.restart_cmd is None):
        raise SystemExit("--restart-after and --restart-cmd go together")
    if args.max_attempts is None:
        args.max_attempts = 1 if args.restart_after is None else 5
    restart = None
    if args.restart_cmd is not None:
        command = args.restart_cmd

        def restart() -> None:
            subprocess.run(command, shell=True, check=True, timeout=120)

    rows = []
    for processes in (int(p) for p in args.processes.split(",")):
        row = run_once(args, processes, restart)
        del row["outs"], row["specs"]
        print("RESULT " + json.dumps(row), flush=True)
        rows.append(row)
    print(table(rows))
    if not all(row["verification"]["ok"] for row in rows):
        raise SystemExit("verification failed")


if __name__ == "__main__":
    main()
