"""Every benchmark of bench/ that has no test of its own runs once on tiny sizes and prints
sane figures (the numbers themselves are measured by hand, see bench/RESULTS.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.benches import run_bench

pytestmark = [pytest.mark.bench, pytest.mark.slow]


def bench(script: str, *args: str, timeout: int = 120) -> str:
    """Run bench/<script> with these arguments; its stdout (it must exit 0)."""
    done = run_bench(script, list(args), timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def table_rows(out: str, first_cell: str) -> list[list[str]]:
    """The cells of the Markdown table rows whose first cell is `first_cell`."""
    rows = [[c.strip() for c in line.strip("|").split("|")] for line in out.splitlines()]
    return [r for r in rows if r and r[0] == first_cell]


def test_token_counting_caches_the_count() -> None:
    out = bench("token_counting.py", "--sizes", "3000", "--turns", "3")
    rows = table_rows(out, "approximate") + table_rows(out, "tokenizer stand-in")
    assert len(rows) == 2
    for row in rows:
        full, cached = float(row[3]), float(row[4])
        assert full > 0 and cached > 0
        assert float(row[5].rstrip("x")) == pytest.approx(full / cached, rel=0.25, abs=0.1)


def test_context_nodes_compares_every_checkpointer_and_a_compaction_turn() -> None:
    out = bench(
        "context_nodes.py",
        *("--sizes", "3000", "--turns", "1", "--rounds", "1", "--compaction-rounds", "1"),
        *("--profile-turns", "1", "--no-steady", "--checkpointers", "memory,sqlite"),
    )
    for kind in ("memory", "sqlite"):
        rows = table_rows(out, kind)
        scenarios = {r[3] for r in rows if len(r) == 10}
        assert scenarios == {"nothing fires", "masking active", "compaction turn"}
        for row in (r for r in rows if len(r) == 10):
            ours, theirs = float(row[6]), float(row[8])
            assert ours > 0 and theirs > 0
            assert float(row[9].rstrip("x")) == pytest.approx(theirs / ours, abs=0.06)
        compaction = next(r for r in rows if len(r) == 11 and r[2] == "compaction turn")
        assert compaction[10] == "1, 1"  # both sides compacted on the timed turn
    assert "cProfile of 1 turns of ours, largest size, masking active, sqlite" in out


def test_context_replay_keeps_the_prefix_and_stays_under_the_trigger(tmp_path: Path) -> None:
    report = tmp_path / "replay.json"
    out = bench(
        "context_replay.py",
        *("--tokens", "30000", "--window", "12000", "--per-turn", "--json", str(report)),
    )
    figures = json.loads(report.read_text())
    assert figures["raw_history_tokens"] >= 30_000
    assert figures["model_calls"] == len(figures["calls"]) > figures["turns"]
    assert figures["over_trigger_calls"] == 0
    assert figures["max_input_tokens"] <= figures["trigger_tokens"]
    assert figures["summaries"] >= 1  # the window is small: compaction ran
    assert figures["prefix_kept_share"] >= 0.95
    assert figures["total_input_tokens"] < figures["total_full_history_tokens"]
    assert f"calls over the trigger: {figures['over_trigger_calls']}" in out
    assert len(table_rows(out, "0")) == 1  # the per-turn table starts at turn 0


def test_profile_consolidation_scores_the_scripted_model() -> None:
    out = bench("profile_consolidation.py", "--scripted")
    exact = re.search(r"Exact: (\d+)/(\d+); right operation: (\d+)/(\d+)", out)
    assert exact is not None
    assert int(exact.group(2)) > 0 and exact.group(1) == exact.group(2)
    assert {r[0] for r in table_rows(out, "ADD") + table_rows(out, "NOOP")} == {"ADD", "NOOP"}


def test_notes_append_measures_each_writer_count() -> None:
    out = bench(
        "notes_append.py", "--notes", "100", "--rounds", "1", "--no-before", "--postgres", ""
    )
    for kind in ("memory", "sqlite"):
        rows = table_rows(out, kind)
        assert [r[1] for r in rows] == ["sync (threads)", "async (gather)"]
        for row in rows:
            rates = [float(cell.split(" ")[0].replace(",", "")) for cell in row[3:]]
            assert len(rates) == 3 and all(rate > 0 for rate in rates)


def test_screen_reports_each_stage_in_sample_and_held_out() -> None:
    out = bench("screen.py", "--quick", "--offline", timeout=600)
    for title in ("In-sample", "Held out by origin", "Held out by family", "Credentials"):
        assert title in out
    held = out.split("Held out by family")[1].split("Credentials")[0]
    families = {row[1] for row in (table_rows(held, "attack"))}
    assert {"override", "extraction", "roleplay", "injected_task"} <= families
    assert {row[1] for row in table_rows(held, "benign")} >= {"team notes", "chat turns"}
    shares = [float(m) for m in re.findall(r"(\d+\.\d)% \(\d+/\d+\)", out)]
    assert shares and all(0 <= share <= 100 for share in shares)
    (samples,) = table_rows(out, "provider samples")
    assert samples[2].startswith("100.0%")
    assert "| rules |" in out and "| classifier: scoring |" in out


def test_profile_background_times_both_and_builds_the_profile() -> None:
    out = bench("profile_background.py", "--turns", "3", "--delay", "0.02")
    assert "turns: 3, model delay: 20 ms a call, SQLite" in out
    assert re.search(r"ratio on/off \(mean turn\): \d+\.\d{3}", out)
    saved = re.search(r"profile after the run: (\d+) consolidation\(s\) saved", out)
    assert saved is not None and int(saved.group(1)) >= 1


def test_screen_fresh_judges_the_set_never_trained_on_per_stage() -> None:
    out = bench("screen_fresh.py", "--show")
    (attacks,) = [r for r in table_rows(out, "attack") if r[1] == "all"]
    (benign,) = [r for r in table_rows(out, "benign") if r[1] == "all"]
    assert attacks[2] == benign[2] == "120"
    shares = [float(cell.split("%")[0]) for cell in attacks[3:] + benign[3:]]
    assert all(0 <= share <= 100 for share in shares)
    assert float(attacks[6].split("%")[0]) > float(benign[6].split("%")[0])
    assert "The screen's mistakes" in out
