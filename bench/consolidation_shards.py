"""The sharded nightly job: scopes consolidated per minute with 1, 2 and 4 workers.

Run: python bench/consolidation_shards.py --url postgresql://... [--scopes 10000]
     [--notes 3] [--workers 1,2,4] [--seed-threads 8] [--model-latency 0]
     (the URL must name a scratch database: its plugin tables are emptied before each round;
     a sqlite:///path URL works too, its file is replaced each round)

Each round empties the database, writes `--scopes` personal scopes of `--notes` notes each,
ten days old (past the 7-day minimum age), with `ScopedMemory.import_notes`, raises the
per-run scope cap to cover them all, then starts that many worker processes at once through
`memory_plugin.scoped.shards.run_workers` (what `memory-plugin consolidate --workers N`
runs), each with a fast scripted maintenance model that appends the notes to the document
(`--model-latency S`: it sleeps S seconds per call first, as a real model's answer takes).
Afterwards it checks that every note was folded exactly once (the folded marks counted in
the database, the notes folded counted by the workers). Reported: the job's span (the
slowest worker's time consolidating, process start excluded) and the wall time including
process start, scopes per minute over the span, and the ratio against 1 worker.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import psycopg
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pgtables import empty_postgres

from memory_plugin import MemoryContext, connect
from memory_plugin.backends.url import parse_url
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.shards import WorkerOutcome, run_workers
from memory_plugin.settings import LayeredSettings

MODEL = f"{Path(__file__).resolve()}:folding_model"
_DOC = re.compile(r"<memory_document>\n(.*?)\n</memory_document>", re.S)
_NOTES = re.compile(r"<notes>\n(.*?)\n</notes>", re.S)
LATENCY_ENV = "BENCH_MODEL_LATENCY"  # read by the worker processes' folding_model()


class FoldingModel(BaseChatModel):
    """Stands in for the maintenance LLM: the document with the notes appended, after
    `latency` seconds (0: at once)."""

    latency: float = 0.0

    @property
    def _llm_type(self) -> str:
        return "folding-bench"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if self.latency > 0:
            time.sleep(self.latency)
        prompt = str(messages[-1].content)
        document, notes = _DOC.search(prompt), _NOTES.search(prompt)
        current = document.group(1) if document and document.group(1) != "(empty)" else ""
        lines = [re.sub(r"^- \[[^\]]+\] ", "- ", line) for line in notes.group(1).splitlines()]
        text = "\n".join(part for part in [current, *lines] if part)
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


def folding_model() -> FoldingModel:
    """A fresh FoldingModel (the workers' --model), as slow as $BENCH_MODEL_LATENCY says."""
    return FoldingModel(latency=float(os.environ.get(LATENCY_ENV) or 0))


def _reset(url: str) -> None:
    """Empty the scratch database (PostgreSQL: every plugin table; SQLite: a new file)."""
    parsed = parse_url(url)
    if parsed.kind == "sqlite":
        path = Path(url.removeprefix("sqlite:///"))
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)
        return
    empty_postgres(url)


def _seed(url: str, scopes: int, notes: int, threads: int) -> float:
    """Write the scopes' notes; returns the seconds it took."""
    day = (datetime.now(UTC) - timedelta(days=10)).date()
    began = time.perf_counter()
    with connect(url) as backend:
        memory = ScopedMemory(backend.store)
        LayeredSettings(backend.store).update(
            "platform", MemoryContext(), set={"consolidation_max_scopes": max(scopes, 1)}
        )

        def write(i: int) -> None:
            ctx = MemoryContext(user_id=f"u{i:06d}", workspace_id="bench")
            memory.import_notes(ctx, [(day, f"user {i} fact {j}") for j in range(notes)])

        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(write, range(scopes)))
    return time.perf_counter() - began


def _folded_marks(url: str) -> int:
    """Notes marked folded, counted in the database."""
    if parse_url(url).kind == "sqlite":
        import sqlite3

        with sqlite3.connect(url.removeprefix("sqlite:///")) as db:
            (count,) = db.execute(
                "SELECT count(*) FROM store WHERE prefix GLOB 'memory_plugin.*.notes' "
                "AND json_extract(value, '$.consolidated') = 1"
            ).fetchone()
            return int(count)
    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM store WHERE prefix LIKE 'memory_plugin.%.notes' "
            "AND value->>'consolidated' = 'true'"
        ).fetchone()
        return int(row[0]) if row else 0


def _round(url: str, workers: int, args: argparse.Namespace) -> dict[str, Any]:
    _reset(url)
    seeded = _seed(url, args.scopes, args.notes, args.seed_threads)
    began = time.perf_counter()
    outcomes: list[WorkerOutcome] = run_workers(url, MODEL, workers, worker_id=f"bench{workers}")
    wall = time.perf_counter() - began
    failed = [failure for outcome in outcomes for failure in outcome.failed]
    folded = sum(outcome.folded for outcome in outcomes)
    marks = _folded_marks(url)
    expected = args.scopes * args.notes
    if failed or folded != expected or marks != expected:
        sys.exit(f"{workers} workers: folded {folded}, marked {marks} of {expected}; {failed[:3]}")
    span = max(outcome.seconds for outcome in outcomes)
    return {
        "workers": workers,
        "seed": seeded,
        "span": span,
        "wall": wall,
        "per_minute": args.scopes / span * 60,
        "skipped": sum(outcome.skipped for outcome in outcomes),
        "folded": folded,
    }


def main() -> None:
    """Run the rounds and print the table."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--url", required=True, help="a scratch database (emptied each round)")
    parser.add_argument("--scopes", type=int, default=10_000)
    parser.add_argument("--notes", type=int, default=3, help="notes per scope")
    parser.add_argument("--workers", default="1,2,4", help="worker counts, comma-separated")
    parser.add_argument("--seed-threads", type=int, default=8)
    parser.add_argument(
        "--model-latency", type=float, default=0.0, help="seconds the model takes per call"
    )
    args = parser.parse_args()
    os.environ[LATENCY_ENV] = str(args.model_latency)  # the spawned workers inherit it
    counts = [int(n) for n in args.workers.split(",")]
    kind = parse_url(args.url).kind
    print(
        f"{args.scopes} scopes x {args.notes} notes on {kind}, workers {counts}, "
        f"model latency {args.model_latency:g} s"
    )
    print(
        "| workers | scopes | seconds (span) | wall (with start) | scopes/min | vs 1 worker "
        "| skipped (held) | notes folded |"
    )
    print("|---|---|---|---|---|---|---|---|")
    base: float | None = None
    for workers in counts:
        row = _round(args.url, workers, args)
        base = base or row["per_minute"]
        print(
            f"| {workers} | {args.scopes} | {row['span']:.1f} | {row['wall']:.1f} "
            f"| {row['per_minute']:.0f} | {row['per_minute'] / base:.2f}x "
            f"| {row['skipped']} | {row['folded']} |",
            flush=True,
        )
        print(f"(seeding took {row['seed']:.1f} s)", file=sys.stderr, flush=True)


if __name__ == "__main__":
    main()
