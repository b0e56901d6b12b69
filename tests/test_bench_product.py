"""bench/product.py runs on tiny sizes and prints what a reader of its tables looks for: every
durability, side, scenario and checkpointer asked for, wall and CPU time, round trips counted
at the connection, the replies a PostgreSQL turn waited for (every reply delayed), every
side's model calls, the host's load, and the targets summary (the figures themselves are
measured by hand)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.benches import run_bench

pytestmark = [pytest.mark.bench, pytest.mark.slow]

SIDES = {"ours", "ours-bounded", "langchain", "plain", "plain-delta"}
SCENARIOS = {"idle", "masking", "compaction"}
MAIN_COLUMNS = 18


def main_rows(out: str, checkpointer: str, durability: str = "async") -> list[list[str]]:
    """The main table's rows of one checkpointer and durability, as lists of cells from the
    checkpointer on."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()]
    return [
        r[1:]
        for r in rows
        if len(r) == MAIN_COLUMNS and r[1] == checkpointer and r[0] == durability
    ]


def model_calls(cell: str) -> tuple[float, float, float]:
    """'3 (2 + 1)' -> (3, 2, 1)."""
    total, rest = cell.split(" (")
    agent, upkeep = rest.rstrip(")").split(" + ")
    return float(total), float(agent), float(upkeep)


def run(tmp_path: Path, *args: str) -> tuple[str, dict[str, object]]:
    report = tmp_path / "product.json"
    done = run_bench("product.py", ["--quick", "--json", str(report), *args], timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout, json.loads(report.read_text())


def check_rows(
    out: str, checkpointer: str, sides: set[str], durability: str = "async", waited: bool = False
) -> None:
    rows = main_rows(out, checkpointer, durability)
    assert {(r[2], r[3]) for r in rows} == {(sc, side) for sc in SCENARIOS for side in sides}
    for row in rows:
        total, agent, upkeep = model_calls(row[15])
        assert agent >= 2  # one tool call, then the answer
        assert total == agent + upkeep
        assert float(row[4]) > 0 and float(row[5]) > 0  # wall and CPU ms
        if checkpointer == "memory":
            assert row[7] == "-"  # no database: no round trips
        else:
            trips, split = float(row[7]), [float(v) for v in row[9:14]]
            assert trips > 0
            assert sum(split) == pytest.approx(trips)
            assert split[0] > 0  # checkpoint puts
        if waited:  # the turn waited for at least LangGraph's own reads and writes
            assert float(row[8]) >= 1
        else:
            assert row[8] == "-"
        assert float(row[14].removesuffix(" KiB")) > 0
        if row[3] == "langchain" or "langchain" not in sides:
            assert row[6] == "-"
        else:
            assert row[6].endswith("x")
    compaction = {r[3]: r for r in rows if r[2] == "compaction"}
    if "langchain" in compaction:  # the summarizer wrote one summary on the timed turn
        assert model_calls(compaction["langchain"][15])[2] == 1
    for side in {"ours", "ours-bounded"} & set(compaction):
        assert model_calls(compaction[side][15])[2] >= 1  # our compaction's summary


def test_every_side_on_memory_and_sqlite(tmp_path: Path) -> None:
    out, report = run(tmp_path, "--checkpointers", "memory,sqlite")
    for checkpointer in ("memory", "sqlite"):
        check_rows(out, checkpointer, SIDES)
    assert "Memory's cost over a plain create_agent" in out
    assert "| SQLite statements <= plain + 5 | async sqlite ~3k idle ours |" in out
    assert "| SQLite statements <= plain-delta + 5 | async sqlite ~3k idle ours |" in out
    calls = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()]
    history = {r[4]: r[9] for r in calls if len(r) == 14 and r[1] == "sqlite" and r[3] == "idle"}
    assert history["plain"] == "0" and history["plain-delta"] == history["ours"] == "1"
    assert "| compaction turn >= 1x LangChain | async sqlite ~3k compaction ours |" in out
    assert "targets met." in out
    assert re.search(r"^host: \d+ cores, load [\d.]+ before, [\d.]+ after \(", out, re.M)
    assert isinstance(report["host"], dict) and "loaded" in report["host"]
    cells = report["cells"]
    assert isinstance(cells, list) and len(cells) == 2 * len(SCENARIOS)


def test_chosen_sides_on_postgres_waiting_for_delayed_replies_under_each_durability(
    tmp_path: Path, postgres_url: str
) -> None:
    out, report = run(
        tmp_path,
        *("--checkpointers", "postgres", "--postgres-url", postgres_url),
        *("--sides", "ours,plain", "--durability", "async,exit", "--pg-latency-ms", "20"),
    )
    for durability in ("async", "exit"):
        check_rows(out, "postgres", {"ours", "plain"}, durability, waited=True)
        assert f"| replies waited <= plain + 3 | {durability} postgres ~3k idle ours |" in out
    delayed = [c for c in report["cells"] if c["latency_ms"] == 20]  # type: ignore[attr-defined]
    assert len(delayed) == 2 * len(SCENARIOS)
