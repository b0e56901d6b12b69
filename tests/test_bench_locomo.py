"""bench/locomo.py runs once on a tiny conversation in LoCoMo's shape (the benchmark's data is
not in the repository) and prints sane recall figures, per backend and with --tune."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from tests.benches import run_bench

pytestmark = [pytest.mark.bench, pytest.mark.slow]

CONVERSATION = {
    "sample_id": "tiny-1",
    "conversation": {
        "speaker_a": "Ann",
        "speaker_b": "Bob",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [
            {"speaker": "Ann", "dia_id": "D1:1", "text": "I went hiking near the lake today."},
            {"speaker": "Bob", "dia_id": "D1:2", "text": "Did you see any birds?"},
            {
                "speaker": "Ann",
                "dia_id": "D1:3",
                "text": "Yes, two herons.",
                "blip_caption": "a photo of two herons",
            },
        ],
        "session_2_date_time": "7:00 pm on 20 June, 2023",
        "session_2": [
            {"speaker": "Bob", "dia_id": "D2:1", "text": "I adopted a tabby cat called Miso."},
            {"speaker": "Ann", "dia_id": "D2:2", "text": "Lovely! I started pottery classes."},
        ],
    },
    "qa": [
        {"question": "Where did Ann go hiking?", "evidence": ["D1:1"], "category": 4},
        {"question": "What birds did Ann see?", "evidence": ["D1:3", "D:1:2"], "category": 1},
        {"question": "When did Bob adopt a cat?", "evidence": ["D2:01"], "category": 2},
        {"question": "What did Ann start in June 2023?", "evidence": ["D2:2"], "category": 4},
        {
            "question": "What is Bob's dog called?",
            "adversarial_answer": "Miso",
            "evidence": [],
            "category": 5,
        },
    ],
}


SECOND = {
    "sample_id": "tiny-2",
    "conversation": {
        "speaker_a": "Cleo",
        "speaker_b": "Dan",
        "session_1_date_time": "9:00 am on 2 March, 2023",
        "session_1": [
            {"speaker": "Cleo", "dia_id": "D1:1", "text": "I went hiking by the lake with Dan."},
            {"speaker": "Dan", "dia_id": "D1:2", "text": "The lake was cold, the birds loud."},
            {"speaker": "Cleo", "dia_id": "D1:3", "text": "My cat Pixel hates birds and hiking."},
        ],
    },
    "qa": [
        {"question": "Where did Cleo go hiking?", "evidence": ["D1:1"], "category": 4},
        {"question": "What is Cleo's cat called?", "evidence": ["D1:3"], "category": 4},
    ],
}


def _run(tmp_path: Path, *args: str, conversations: int = 1) -> str:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([CONVERSATION, SECOND][:conversations]))
    done = run_bench("locomo.py", ["--data", str(data), "--embeddings", "hashed", *args], 600)
    assert done.returncode == 0, done.stderr
    return done.stdout


def _backends() -> list[str]:
    return ["memory", "sqlite"] + (
        ["postgres"] if os.environ.get("MEMORY_TEST_POSTGRES_URL") else []
    )


def _rows(out: str, mode: str) -> list[list[float]]:
    return [
        [float(c) for c in line.split("|")[2:7]]
        for line in out.splitlines()
        if line.startswith(f"| {mode} |")
    ]


def test_locomo_bench_prints_recall_per_backend(tmp_path: Path) -> None:
    backends = _backends()
    out = _run(tmp_path, "--backend", *backends, "--json", str(tmp_path / "out.json"))
    figures = json.loads((tmp_path / "out.json").read_text())
    assert sorted(figures) == sorted(backends)
    for mode in ("keyword", "semantic", "hybrid"):
        rows = _rows(out, mode)
        assert len(rows) == len(backends)
        for row in rows:
            assert all(0 <= value <= 100 for value in row)
            assert row == sorted(row)  # recall@k never falls as k grows
    for backend in backends:
        hybrid = figures[backend]["hybrid"]
        assert hybrid["50/all"] == 100.0  # five notes: every evidence turn is in the top 50
        assert figures[backend]["keyword"]["50/all"] == 100.0  # each question shares a word
        assert hybrid["10/adversarial"] == 100.0  # no evidence counts as found
        assert figures[backend]["timing"]["import_s"] >= 0


def test_locomo_bench_tune_prints_steps_and_held_out_figures(tmp_path: Path) -> None:
    out = _run(tmp_path, "--tune")
    steps = [line for line in out.splitlines() if line.startswith(("| semantic only", "| +"))]
    assert len(steps) == 3
    assert re.search(r"leave-one-conversation-out: @10 \d+\.\d", out)
    assert "| tiny-1 |" in out


def test_locomo_bench_figures_are_the_same_with_a_store_per_user(tmp_path: Path) -> None:
    """Two users in one store or each in their own: each user's figures are the same."""
    figures = {}
    for stores in ("shared", "per-user"):
        path = tmp_path / f"{stores}.json"
        out = _run(
            tmp_path,
            "--backend",
            *_backends(),
            "--stores",
            stores,
            "--json",
            str(path),
            conversations=2,
        )
        assert ("a store per user" in out) == (stores == "per-user")
        figures[stores] = json.loads(path.read_text())
    for backend in _backends():
        for mode in ("keyword", "semantic", "hybrid"):
            shared, alone = figures["shared"][backend][mode], figures["per-user"][backend][mode]
            assert shared == alone and shared["50/all"] == 100.0


def test_locomo_bench_tune_gives_the_held_out_figure_of_every_backend(tmp_path: Path) -> None:
    path = tmp_path / "tune.json"
    out = _run(tmp_path, "--tune", "--backend", *_backends(), "--json", str(path), conversations=2)
    held = {
        backend: figures["held_out"] for backend, figures in json.loads(path.read_text()).items()
    }
    assert sorted(held) == sorted(_backends())
    assert len(re.findall(r"leave-one-conversation-out: @10 \d+\.\d", out)) == len(held)
    assert held["sqlite"] == held["memory"] and 0 < held["memory"] <= 100
    assert all(abs(value - held["memory"]) <= 1.0 for value in held.values())
