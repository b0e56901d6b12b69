"""How long the memory write screen takes: 2,000-character notes and a 100,000-character
document, the whole built-in screen (rules, credentials for shared memory, the classifier) and
each stage of it.

Run: taskset -c 0 python bench/screen_speed.py [--root DIR]   (one core; the script pins
itself too). With --root, memory_plugin is imported from DIR, e.g. an earlier commit's files
(`git archive HEAD~1 | tar -x -C /tmp/before`), to compare before and after on one machine.

Notes are lines of tests/data/screen_benign.txt and screen_attacks.txt joined up to 2,000
characters ("mixed": most hold an attack line and are refused), and of screen_benign.txt alone
("benign": every stage runs to the end; the corpus is near misses, so it is the hard case). The
document is benign lines the screen passes, up to 100,000 characters, screened line by line;
"line by line" is `builtin_violation` on every line in turn, the straightforward path.
"""

from __future__ import annotations

import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

ROOT = Path(__file__).resolve().parent.parent
PACKAGE_ROOT = Path(sys.argv[sys.argv.index("--root") + 1]) if "--root" in sys.argv else ROOT
sys.path.insert(0, str(PACKAGE_ROOT))

from memory_plugin.safety import builtin_violation, screen, violation  # noqa: E402
from memory_plugin.safety.classifier import shipped  # noqa: E402

try:
    from memory_plugin.safety.concept_model import shipped_concepts
except ImportError:  # an earlier commit's package (--root) has no concept model
    shipped_concepts = None
from memory_plugin.safety.credentials import credential_kind  # noqa: E402
from memory_plugin.safety.normalise import variants  # noqa: E402
from memory_plugin.safety.rules import first_broken  # noqa: E402

DATA = ROOT / "tests" / "data"
NOTE_CHARS = 2_000
DOC_CHARS = 100_000
NOTES = 200


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


def classify(forms: list[str]) -> bool:
    """The classifier stage on a text's forms, as the screen runs it (batched where the
    imported package has `Model.refusals`)."""
    model = shipped()
    if hasattr(model, "refusals"):
        return any(model.refusals(forms)) or concepts([forms])
    return any(model.refuses(form) for form in forms)


def concepts(texts_forms: list[list[str]]) -> bool:
    """The concept model's stage on texts' forms, where the imported package has it."""
    return shipped_concepts is not None and any(shipped_concepts().refusals(texts_forms))


def classify_all(texts_forms: list[list[str]]) -> bool:
    """The classifier stage on many texts at once: one n-gram batch, the concept model."""
    model = shipped()
    if hasattr(model, "refusals"):
        found = model.refusals([f for forms in texts_forms for f in forms])
        return any(found) or concepts(texts_forms)
    return any(classify(forms) for forms in texts_forms)


def main() -> None:
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
    print(f"memory_plugin from {PACKAGE_ROOT}")
    benign, attacks = lines("screen_benign.txt"), lines("screen_attacks.txt")
    sets = {"mixed": notes(benign + attacks, 1), "benign": notes(benign, 2)}

    def check(note: str) -> object:
        return violation(note, visibility="shared")

    for texts in sets.values():  # warm up: compile, build the prefilter, load the model
        timings(check, texts[:5])
    print(f"2,000-character notes ({NOTES} each), violation(note, visibility='shared'), ms")
    print("| notes | refused | p50 | p95 |")
    print("|---|---|---|---|")
    for name, texts in sets.items():
        took = timings(check, texts)
        refused = sum(check(t) is not None for t in texts)
        print(f"| {name} | {refused}/{len(texts)} | {ms(p(took, 0.5))} | {ms(p(took, 0.95))} |")

    print("\nWhere a benign note's time goes (p50, ms)")
    texts = sets["benign"]
    forms = [variants(t) for t in texts]
    parts = {
        "variants (normalised and decoded forms)": statistics.median(timings(variants, texts)),
        "rules, first_broken (prefilter)": statistics.median(timings(first_broken, forms)),
        "credential_kind (shared memory)": statistics.median(timings(credential_kind, texts)),
        "classifier, every form": statistics.median(timings(classify, forms)),
    }
    print("| part | p50 ms |\n|---|---|")
    for part, seconds in parts.items():
        print(f"| {part} | {ms(seconds)} |")

    doc = document([line for line in benign if check(line) is None])  # lines the screen passes

    def screen_doc(text: str) -> None:
        screen(text, "the memory document", visibility="shared", lines=True)

    def line_by_line(text: str) -> None:
        for line in text.split("\n"):
            builtin_violation(line, visibility="shared")

    doc_lines = doc.split("\n")
    print(
        f"\n{DOC_CHARS:,}-character document of benign lines ({len(doc_lines)} lines, "
        f"{len(set(doc_lines))} distinct)"
    )
    print("screen(doc, 'the memory document', visibility='shared', lines=True), best of 3")
    whole = min(timings(screen_doc, [doc] * 3))
    plain = min(timings(line_by_line, [doc] * 3))
    distinct = list(dict.fromkeys(doc_lines))
    doc_forms = [variants(line) for line in distinct]
    print("| | seconds |\n|---|---|")
    print(f"| screen(..., lines=True) | {whole:.3f} |")
    print(f"| line by line (builtin_violation on every line) | {plain:.3f} |")
    print(f"| distinct lines: variants | {sum(timings(variants, distinct)):.3f} |")
    print(f"| distinct lines: rules (first_broken) | {sum(timings(first_broken, doc_forms)):.3f} |")
    print(f"| distinct lines: credential_kind | {sum(timings(credential_kind, distinct)):.3f} |")
    per_line = sum(timings(classify, doc_forms))
    print(f"| distinct lines: classifier, a call per line | {per_line:.3f} |")
    batched = min(timings(classify_all, [doc_forms] * 3))
    print(f"| distinct lines: classifier, one call for all | {batched:.3f} |")


if __name__ == "__main__":
    main()
