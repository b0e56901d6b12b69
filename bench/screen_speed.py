"""How long the memory write screen takes: 2,000-character notes and a 100,000-character
document, with the rules' prefilter (rules.first_broken) and, as the baseline measured in the
same run, the plain loop it replaced (every pattern of every rule on every normalised form).

Run: taskset -c 0 python bench/screen_speed.py   (one core; the script pins itself too)

Notes are lines of tests/data/screen_benign.txt and screen_attacks.txt joined up to 2,000
characters ("mixed": most hold an attack line and are refused), and of screen_benign.txt alone
("benign": every rule runs to the end; the corpus is near misses, so it is the hard case). The
document is benign lines the screen passes, up to 100,000 characters, screened line by line.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import memory_plugin.safety as safety  # noqa: E402
from memory_plugin.safety import screen, violation  # noqa: E402
from memory_plugin.safety.credentials import credential_kind  # noqa: E402
from memory_plugin.safety.normalise import variants  # noqa: E402
from memory_plugin.safety.rules import ALL, Rule, first_broken  # noqa: E402

DATA = ROOT / "tests" / "data"
NOTE_CHARS = 2_000
DOC_CHARS = 100_000
NOTES = 200


def plain_loop(forms: Sequence[str]) -> Rule | None:
    """The baseline: every pattern of every rule on every form, in ALL order."""
    for rule in ALL:
        if any(rule.matches(form) for form in forms):
            return rule
    return None


@contextmanager
def baseline() -> Iterator[None]:
    """The screen with the plain loop in place of the prefilter."""
    namespace = vars(safety)
    namespace["first_broken"] = plain_loop
    try:
        yield
    finally:
        namespace["first_broken"] = first_broken


def lines(name: str) -> list[str]:
    out = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if "\t" in line:
            out.extend(line.split("\t", 1)[1].replace("\\n", "\n").split("\n"))
    return [line for line in out if line.strip()]


def notes(pool: list[str], seed: int) -> list[str]:
    rng = random.Random(seed)
    out = []
    for _ in range(NOTES):
        note = ""
        while len(note) < NOTE_CHARS:
            note += rng.choice(pool) + " "
        out.append(note[:NOTE_CHARS])
    return out


def document(pool: list[str]) -> str:
    rng = random.Random(22)
    text = ""
    while len(text) < DOC_CHARS:
        text += rng.choice(pool) + "\n"
    return text[:DOC_CHARS]


T = TypeVar("T")


def timings(call: Callable[[T], object], texts: Sequence[T]) -> list[float]:
    out = []
    for text in texts:
        start = time.perf_counter()
        call(text)
        out.append(time.perf_counter() - start)
    return out


def p(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.2f}"


def main() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    benign, attacks = lines("screen_benign.txt"), lines("screen_attacks.txt")
    sets = {"mixed": notes(benign + attacks, 1), "benign": notes(benign, 2)}

    def check(note: str) -> object:
        return violation(note, visibility="shared")

    for texts in sets.values():  # warm up: compile, build the prefilter, load detectors
        timings(check, texts[:5])
    print(f"2,000-character notes ({NOTES} each), violation(note, visibility='shared'), ms")
    print(
        "| notes | refused | baseline p50 | baseline p95 | prefilter p50 | prefilter p95 | ratio |"
    )
    print("|---|---|---|---|---|---|---|")
    for name, texts in sets.items():
        with baseline():
            before = timings(check, texts)
        after = timings(check, texts)
        refused = sum(check(t) is not None for t in texts)
        print(
            f"| {name} | {refused}/{len(texts)} | {ms(p(before, 0.5))} | {ms(p(before, 0.95))} "
            f"| {ms(p(after, 0.5))} | {ms(p(after, 0.95))} "
            f"| {p(before, 0.5) / p(after, 0.5):.1f}x |"
        )

    print("\nWhere a benign note's time goes (p50, ms)")
    texts = sets["benign"]
    forms = [variants(t) for t in texts]
    parts = {
        "variants (normalised and decoded forms)": statistics.median(timings(variants, texts)),
        "rules, plain loop (baseline)": statistics.median(timings(plain_loop, forms)),
        "rules, first_broken (prefilter)": statistics.median(timings(first_broken, forms)),
        "credential_kind (shared memory)": statistics.median(timings(credential_kind, texts)),
    }
    print("| part | p50 ms |\n|---|---|")
    for part, seconds in parts.items():
        print(f"| {part} | {ms(seconds)} |")

    doc = document([line for line in benign if check(line) is None])  # lines the screen passes

    def screen_doc(text: str) -> None:
        screen(text, "the memory document", visibility="shared", lines=True)

    print(f"\n{DOC_CHARS:,}-character document of benign lines ({doc.count(chr(10)) + 1} lines)")
    print("screen(doc, 'the memory document', visibility='shared', lines=True), best of 3")
    with baseline():
        before_doc = min(timings(screen_doc, [doc] * 3))
    after_doc = min(timings(screen_doc, [doc] * 3))
    doc_lines = doc.split("\n")
    doc_forms = [variants(line) for line in doc_lines]
    print("| | seconds |\n|---|---|")
    print(f"| baseline (plain loop) | {before_doc:.3f} |")
    print(f"| prefilter | {after_doc:.3f} |")
    print(f"| ratio | {before_doc / after_doc:.1f}x |")
    print(f"| of which variants | {sum(timings(variants, doc_lines)):.3f} |")
    rules_doc = sum(timings(first_broken, doc_forms))
    print(f"| of which rules (first_broken) | {rules_doc:.3f} |")
    print(f"| of which credential_kind | {sum(timings(credential_kind, doc_lines)):.3f} |")


if __name__ == "__main__":
    main()
