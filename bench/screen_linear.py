"""How screening time grows with a text's length: each shape at 20k, 40k and 80k characters.

Run: python bench/screen_linear.py

A linear screen takes twice as long for twice the text (growth 2.0); a pattern that
backtracks over a run gives 4.0. Ordinary prose is the baseline measured in the same run.
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from memory_plugin.safety import violation

SIZES = (20_000, 40_000, 80_000)
WORDS = [
    "the",
    "team",
    "deploys",
    "the",
    "service",
    "on",
    "friday",
    "after",
    "review",
    "and",
    "notes",
    "the",
    "build",
]


def prose(n: int) -> str:
    """Ordinary words, the baseline."""
    rng = random.Random(7)
    return " ".join(rng.choice(WORDS) for _ in range(n // 4))[:n]


SHAPES: dict[str, Callable[[int], str]] = {
    "prose (baseline)": prose,
    "'-' run": lambda n: "-" * n,
    "'a.' run": lambda n: "a." * (n // 2),
    "digit run": lambda n: "1" * n,
    "'1.' run": lambda n: "1." * (n // 2),
    "'a://' run": lambda n: "a://" * (n // 4),
    "spaces": lambda n: " " * n,
    "newlines": lambda n: "\n" * n,
    "'user: ' run": lambda n: "user: " * (n // 6),
    "'a@' run": lambda n: "a@" * (n // 2),
}


def seconds(text: str) -> float:
    """Wall time of one shared-scope screen of the text."""
    started = time.perf_counter()
    violation(text, visibility="shared")
    return time.perf_counter() - started


def main() -> None:
    """Print the table recorded in bench/RESULTS.md."""
    print("| shape | " + " | ".join(f"{n // 1000}k (ms)" for n in SIZES) + " | growth 40k->80k |")
    print("| --- |" + " --- |" * (len(SIZES) + 1))
    for name, make in SHAPES.items():
        times = [seconds(make(n)) for n in SIZES]
        cells = " | ".join(f"{1000 * t:.0f}" for t in times)
        print(f"| {name} | {cells} | {times[2] / times[1]:.1f}x |")


if __name__ == "__main__":
    main()
