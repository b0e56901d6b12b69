"""bench/product.py runs on tiny sizes and prints what a reader of its tables looks for: every
side, scenario and checkpointer asked for, round trips counted at the connection, every
side's model calls, and the targets summary (the figures themselves are measured by hand)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.benches import run_bench

pytestmark = [pytest.mark.bench, pytest.mark.slow]

SIDES = {"ours", "ours-bounded", "langchain", "plain"}
SCENARIOS = {"idle", "masking", "compaction"}
MAIN_COLUMNS = 15


def main_rows(out: str, checkpointer: str) -> list[list[str]]:
    """The main table's rows of one checkpointer, as lists of cells."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()]
    return [r for r in rows if len(r) == MAIN_COLUMNS and r[0] == checkpointer]


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


def check_rows(out: str, checkpointer: str, sides: set[str]) -> None:
    rows = main_rows(out, checkpointer)
    assert {(r[2], r[3]) for r in rows} == {(sc, side) for sc in SCENARIOS for side in sides}
    for row in rows:
        total, agent, upkeep = model_calls(row[13])
        assert agent >= 2  # one tool call, then the answer
        assert total == agent + upkeep
        assert float(row[4]) > 0
        if checkpointer == "memory":
            assert row[6] == "-"  # no database: no round trips
        else:
            trips, split = float(row[6]), [float(v) for v in row[7:12]]
            assert trips > 0
            assert sum(split) == pytest.approx(trips)
            assert split[0] > 0 and split[1] > 0  # checkpoint puts and put_writes
        assert float(row[12].removesuffix(" KiB")) > 0
        if row[3] == "langchain":
            assert row[5] == "-"
        else:
            assert row[5].endswith("x")
    compaction = {r[3]: r for r in rows if r[2] == "compaction"}
    if "langchain" in compaction:  # the summarizer wrote one summary on the timed turn
        assert model_calls(compaction["langchain"][13])[2] == 1
    for side in {"ours", "ours-bounded"} & set(compaction):
        assert model_calls(compaction[side][13])[2] >= 1  # our compaction's summary


def test_every_side_on_memory_and_sqlite(tmp_path: Path) -> None:
    out, report = run(tmp_path, "--checkpointers", "memory,sqlite")
    for checkpointer in ("memory", "sqlite"):
        check_rows(out, checkpointer, SIDES)
    assert "Memory's cost over a plain create_agent" in out
    assert "| memory's cost over plain create_agent <= 2 ms | sqlite ~3k idle ours |" in out
    assert "| round trips <= LangChain's | sqlite ~3k idle ours |" in out
    assert "targets met." in out
    cells = report["cells"]
    assert isinstance(cells, list) and len(cells) == 2 * len(SCENARIOS)


def test_chosen_sides_on_postgres(tmp_path: Path, postgres_url: str) -> None:
    out, _ = run(
        tmp_path,
        *("--checkpointers", "postgres", "--postgres-url", postgres_url),
        *("--sides", "ours,langchain"),
    )
    check_rows(out, "postgres", {"ours", "langchain"})
