"""bench/context_replay.py --session: a short scripted session whose cache figures come from
the bytes the fake model was sent, with the notes and the profile really stored."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from memory_plugin import MemoryContext, ProfileMemory, ScopedMemory, connect
from tests.benches import run_bench

pytestmark = [pytest.mark.bench, pytest.mark.slow]


def test_session_measures_the_bytes_sent_and_stores_the_memory_it_scripts(
    tmp_path: Path,
) -> None:
    report, url = tmp_path / "session.json", f"sqlite:///{tmp_path / 'session.db'}"
    args = ["--session", "--turns", "15", "--window", "18000", "--backend", url]
    done = run_bench("context_replay.py", [*args, "--json", str(report)], 180)
    assert done.returncode == 0, done.stderr[-3000:]
    out, figures = done.stdout, json.loads(report.read_text())
    rows = figures["calls"]

    # every agent model call the script makes was recorded, in order
    assert figures["turns"] == 15
    # (and the summaries a compaction asked by repeating the agent's request, which keep
    # that request as their byte prefix; the call after one is sent the compacted thread)
    asked = [r["call"] for r in rows if r["summary_request"]]
    assert figures["summaries_from_cache"] == len(asked) >= 1
    assert figures["model_calls"] == figures["scripted_calls"] + len(asked) == len(rows)
    assert all(rows[i]["byte_prefix"] and rows[i + 1]["summaries_since_last_call"] for i in asked)
    assert [r["call"] for r in rows] == list(range(len(rows)))
    assert {r["turn"] for r in rows} == set(range(15))
    later = rows[1:]
    assert figures["byte_prefix_calls"] == sum(r["byte_prefix"] for r in later)
    assert figures["byte_prefix_share"] == pytest.approx(figures["byte_prefix_calls"] / len(later))
    calls = f"{figures['byte_prefix_calls']}/{len(later)}"
    assert f"calls sending the previous request as a byte prefix: {calls}" in out

    # the metric comes from the bytes: a call that extends the previous request reuses all
    # of it, one that does not reuses less and names the first element that differed
    for previous, row in zip(rows, later, strict=False):
        assert 0 <= row["cacheable_bytes"] <= row["request_bytes"]
        if row["byte_prefix"]:
            assert row["cacheable_bytes"] == previous["request_bytes"]
            assert row["broken_by"] == ""
        else:
            assert row["cacheable_bytes"] < previous["request_bytes"]
            assert row["broken_by"]
    assert [b["call"] for b in figures["breaks"]] == [
        r["call"] for r in later if not r["byte_prefix"]
    ]
    assert sum(figures["breaks_by_cause"].values()) == len(figures["breaks"])
    assert 0 < figures["cacheable_bytes_share"] < 1

    # the window is small: compaction ran, as often as reported, and a compaction removes
    # history, so the call after it cannot extend the previous request
    compacted = [r for r in rows if r["summaries_since_last_call"]]
    assert figures["summaries"] >= 1
    assert sum(r["summaries_since_last_call"] for r in rows) == figures["summaries"]
    assert f"compactions (summarization calls): {figures['summaries']}," in out
    assert compacted and not any(r["byte_prefix"] for r in compacted)

    # memory writes never rewrite the front of the request: the system message changes only
    # on the call that compacts; what memory learned reaches the model after the history
    system_breaks = [r for r in later if r["broken_by"].startswith("system message")]
    assert {r["call"] for r in system_breaks} <= {r["call"] for r in compacted}
    noted = next(r for r in later if r["turn"] in (5, 10))
    assert noted["byte_prefix"] or noted["summaries_since_last_call"]

    # the notes the model saved with `remember` and the facts of the profile are stored
    context = MemoryContext(user_id="replay")
    with connect(url) as backend:
        notes = [n.body for n in ScopedMemory(backend.store).list_notes(context)]
        profile = ProfileMemory(backend.store).read(context)
    scripted = [f"Decision on turn {n}:" for n in (4, 9, 14)]
    assert figures["notes_saved"] == len(scripted)
    assert all(any(note.startswith(s) for note in notes) for s in scripted)
    assert sorted(figures["notes_stored"]) == sorted(notes)
    assert profile is not None and figures["profile_rewrites"] >= 1
    assert "Works as an SRE at Northwind" in profile.bullets("Identity")


def test_removals_leave_the_prompt_and_both_sessions_are_reported(tmp_path: Path) -> None:
    report = tmp_path / "removals.json"
    args = ["--session", "--removals", "--turns", "15", "--window", "18000"]
    done = run_bench("context_replay.py", [*args, "--json", str(report)], 180)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(report.read_text())
    plain, removed = figures["without_removals"], figures["with_removals"]
    assert plain["removals"] == 0 and plain["turns"] == removed["turns"] == 15

    # a note deleted before turn 6, a fact corrected on turn 13: neither is shown after
    assert removed["removals"] == 2 and len(removed["removal_calls"]) == 2
    assert removed["removed_still_shown_calls"] == 0
    assert "still showing the removed text in the system message or a memory update: 0" in (
        done.stdout
    )
    assert f"cacheable bytes {plain['cacheable_bytes_share']:.1%} / " in done.stdout

    # the system message changes on a compaction call or the first call after a removal only
    rows = removed["calls"]
    allowed = {r["call"] for r in rows if r["summaries_since_last_call"]}
    allowed |= set(removed["removal_calls"])
    system_breaks = {b["call"] for b in removed["breaks"] if b["broken_by"].startswith("system")}
    assert system_breaks <= allowed
    assert system_breaks & set(removed["removal_calls"]), "a removal starts a new snapshot"

    # each break names the byte where the request first differs: past the elements it kept
    for b in removed["breaks"]:
        call, before = rows[b["call"]], rows[b["call"] - 1]
        assert call["cacheable_bytes"] <= b["first_differing_byte"] < before["request_bytes"]
        assert f"| {b['first_differing_byte']:,} | {b['reused']:.1%} |" in done.stdout
    # the compaction the next turns would bring lands on a removal's break: one break, not two
    on_removals = [
        rows[b["call"]] for b in removed["breaks"] if b["call"] in removed["removal_calls"]
    ]
    assert any(row["summaries_since_last_call"] for row in on_removals)


def test_bill_compares_ours_with_langchain_on_both_variants(tmp_path: Path) -> None:
    report = tmp_path / "bill.json"
    args = ["--bill", "--turns", "15", "--windows", "18000,24000", "--json", str(report)]
    done = run_bench("context_replay.py", args, 300)
    assert done.returncode == 0, done.stderr[-3000:]
    figures = json.loads(report.read_text())
    rows = figures["rows"]
    assert [(r["variant"], r["window"], r["side"]) for r in rows] == [
        (variant, window, side)
        for variant in ("session", "with removals")
        for window in (18_000, 24_000)
        for side in ("ours", "langchain")
    ]
    assert figures["counter"] == "approximate"
    assert set(figures["host"]) >= {"cores", "load_before", "load_after", "loaded"}
    assert "host: " in done.stdout and "| with removals | 24,000 | langchain |" in done.stdout

    for ours, theirs in zip(rows[::2], rows[1::2], strict=True):
        # the same script reaches both sides; ours also sends the summaries it asks by
        # repeating the agent's request to the agent's model
        assert ours["model_calls"] - ours["summaries_from_cache"] == theirs["model_calls"]
        assert theirs["summaries_from_cache"] == 0
        for row in (ours, theirs):
            assert 0 < row["prefix_tokens"] < row["input_tokens"]
            cached, full = row["prefix_tokens"], row["input_tokens"] - row["prefix_tokens"]
            # the summaries sent as a transcript are billed at the full price
            transcripts = row["summary_input_tokens"]
            assert row["bill_10"] == pytest.approx(full + 0.1 * cached + transcripts)
            assert (transcripts > 0) == (row["compactions"] > row["summaries_from_cache"])
        # ours runs again with the 50% price set (prompt_cache_read_ratio)
        assert theirs["bill_50"] == pytest.approx(
            theirs["input_tokens"] - 0.5 * theirs["prefix_tokens"] + theirs["summary_input_tokens"]
        )
        assert ours["bill_10"] < ours["bill_50"] and 0 < ours["share_50"] <= 1
    assert any(r["summaries_from_cache"] for r in rows[::2]), "a summary repeated a request"

    # a removal takes the removed text out of our next input, and that call is counted
    removed = [r for r in rows if r["variant"] == "with removals" and r["side"] == "ours"]
    assert all(r["removed_still_shown_calls"] == 0 for r in removed)
    assert all(1 <= r["removal_breaks"] <= r["breaks"] for r in removed)
