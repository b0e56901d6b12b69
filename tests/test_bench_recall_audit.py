"""CI runs the recall-audit benchmark once on a tiny conversation in LoCoMo's shape (the
benchmark's data is not in the repository), so it keeps working."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from tests.benches import run_bench

pytestmark = [pytest.mark.bench, pytest.mark.slow]

WORDS = [
    "river",
    "garden",
    "violin",
    "pottery",
    "heron",
    "market",
    "bakery",
    "cycling",
    "chess",
    "lantern",
    "harbor",
]


def _conversation() -> dict[str, Any]:
    """Forty turns over four sessions, and four questions naming a turn's words."""
    rng = random.Random(12)
    talk: dict[str, Any] = {"speaker_a": "Ann", "speaker_b": "Bob"}
    texts = {}
    for session in range(1, 5):
        talk[f"session_{session}_date_time"] = f"1:00 pm on {session} May, 2023"
        talk[f"session_{session}"] = []
        for turn in range(1, 11):
            text = " ".join(rng.sample(WORDS, 4))
            texts[f"D{session}:{turn}"] = text
            speaker = "Ann" if turn % 2 else "Bob"
            talk[f"session_{session}"].append(
                {"speaker": speaker, "dia_id": f"D{session}:{turn}", "text": f"I like the {text}."}
            )
    asked = ["D1:3", "D2:5", "D3:7", "D4:9"]
    qa = [{"question": f"Who likes the {texts[d]}?", "evidence": [d], "category": 4} for d in asked]
    return {"sample_id": "tiny-audit", "conversation": talk, "qa": qa}


def test_recall_audit_bench_runs_on_a_tiny_slice(tmp_path: Path) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps([_conversation()]))
    args = ["--data", str(data), "--conversations", "1", "--questions", "4", "--per-scope", "4"]
    args += ["--embeddings", "hashed", "--candidates", "100,3", "--evidence"]
    done = run_bench("recall_audit.py", args)
    assert done.returncode == 0, done.stderr
    audit, evidence = done.stdout.strip().split("\n\n")
    rows = [line.split("|")[1:-1] for line in audit.splitlines()[2:]]
    assert [(r[0].strip(), r[1].strip(), r[2].strip()) for r in rows] == [
        ("questions", "100", "4"),
        ("sampled", "100", "4"),
        ("questions", "3", "4"),
        ("sampled", "3", "4"),
    ]
    wide = [float(cell) for r in rows[:2] for cell in r[3:6]]
    narrow = [float(cell) for r in rows[2:] for cell in r[3:6]]
    assert wide == [1.0] * 6
    assert all(0.0 <= value <= 1.0 for value in narrow) and min(narrow) < 1.0
    orders = [line.split("|")[1:-1] for line in evidence.splitlines()[2:]]
    assert [(r[0].strip(), r[1].strip()) for r in orders] == [
        ("recall (fused)", "4"),
        ("exact search", "4"),
    ]
    assert all(0.0 <= float(cell) <= 100.0 for r in orders for cell in r[2:])
