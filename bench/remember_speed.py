"""How long `ScopedMemory.remember` of a 2,000-character note takes on SQLite, screen included,
on one core, against an earlier commit's package measured in the same run.

Run: python bench/remember_speed.py [--notes 200] [--baseline DIR]
     (DIR holds an earlier commit's files, e.g. `git worktree add /tmp/base HEAD~1`; its
     package is measured by this script in a subprocess with --root DIR, right after this one,
     on the same notes)

The script pins itself to one core. Notes are 2,000-character pieces of the repository's own
README.md and docs/*.md from random offsets that the screen passes ("docs": prose, code
blocks, lists, tables), and
lines of tests/data/screen_benign.txt joined up to 2,000 characters ("near misses": benign text
full of the screen's words, the hard case). Each note is remembered once by the public path
(`ScopedMemory(backend.store).remember(ctx, note)` on `connect("sqlite:///...")`); a refused
note's time counts too. The screen alone (`violation(note)`, the verdict remember asks for) is
timed on as many other notes of each kind for its share of remember's median. Beside the wall
time, the CPU time of remember's thread (`time.thread_time`), which a loaded host inflates
less. Then `recall(ctx, query)` of 50 queries (three words of one of the notes) in the scope
just written: what a search pays for the notes whose postings still wait in their rows
(memory_plugin.backends.keywords). The notes are made in a process of their own (making docs
notes screens them), so the measured process screens each note for the first time, as a
user's process does: nothing learned from a text (RE2's automaton states, cached word
verdicts) is there before. The host's load is printed beside.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

from host import HostLoad  # noqa: E402

NOTE_CHARS = 2_000
QUERIES = 50


def docs_notes(count: int, seed: int) -> list[str]:
    """`count` 2,000-character pieces of README.md and docs/*.md, each from a random offset,
    that the screen passes (the docs quote attacks the screen refuses)."""
    from memory_plugin.safety import violation

    texts = [(ROOT / "README.md").read_text(encoding="utf-8")]
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))]
    texts = [t for t in texts if len(t) > NOTE_CHARS]
    rng = random.Random(seed)
    out: list[str] = []
    while len(out) < count:
        text = rng.choice(texts)
        start = rng.randrange(len(text) - NOTE_CHARS)
        piece = text[start : start + NOTE_CHARS]
        if violation(piece) is None:
            out.append(piece)
    return out


def near_misses(count: int, seed: int) -> list[str]:
    """`count` notes of screen_benign.txt's lines joined up to 2,000 characters."""
    pool = []
    path = ROOT / "tests" / "data" / "screen_benign.txt"
    for line in path.read_text(encoding="utf-8").splitlines():
        if "\t" in line:
            pool += [s for s in line.split("\t", 1)[1].replace("\\n", "\n").split("\n") if s]
    rng = random.Random(seed)
    out = []
    for _ in range(count):
        note = ""
        while len(note) < NOTE_CHARS:
            note += rng.choice(pool) + " "
        out.append(note[:NOTE_CHARS])
    return out


def quantile(values: list[float], q: float) -> float:
    """The q-quantile of the values (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


Notes = dict[str, list[str]]


def make_notes(count: int) -> Notes:
    """Each kind of note remembered, as many others screened alone, a few to warm up, and
    QUERIES recall queries of each kind (three words of one of its notes)."""
    notes = {
        "docs": docs_notes(count, 1),
        "near misses": near_misses(count, 2),
        "screen docs": docs_notes(count, 5),
        "screen near misses": near_misses(count, 6),
        "warm": docs_notes(5, 3) + near_misses(5, 4),
    }
    rng = random.Random(7)
    for name in ("docs", "near misses"):
        picks = [rng.choice(notes[name]).split() for _ in range(QUERIES)]
        notes[f"queries {name}"] = [" ".join(rng.sample(words, 3)) for words in picks]
    return notes


def measure(notes: Notes) -> dict[str, Any]:
    """remember's and the screen's times (ms) on each set of notes, in this process."""
    from memory_plugin import MemoryContext, ScopedMemory, connect
    from memory_plugin.errors import MemoryWriteError
    from memory_plugin.safety import violation

    out: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as folder, connect(f"sqlite:///{folder}/b.db") as backend:
        memory = ScopedMemory(backend.store)
        for note in notes["warm"]:  # load the classifier, build the rules' index, open the database
            violation(note)
        for number, name in enumerate(("docs", "near misses")):
            ctx = MemoryContext(user_id=f"bench{number}", workspace_id="bench")
            remember, cpu, refused = [], [], 0
            for note in notes[name]:
                start, start_cpu = time.perf_counter(), time.thread_time()
                try:
                    memory.remember(ctx, note)
                except MemoryWriteError:
                    refused += 1
                remember.append((time.perf_counter() - start) * 1000)
                cpu.append((time.thread_time() - start_cpu) * 1000)
            screen = []
            for note in notes[f"screen {name}"]:
                start = time.perf_counter()
                violation(note)
                screen.append((time.perf_counter() - start) * 1000)
            recall = []
            for query in notes.get(f"queries {name}", []):
                start = time.perf_counter()
                memory.recall(ctx, query)
                recall.append((time.perf_counter() - start) * 1000)
            out[name] = {
                "remember": remember,
                "cpu": cpu,
                "screen": screen,
                "recall": recall,
                "refused": refused,
            }
    return out


def notes_from_another_process(count: int, folder: Path) -> Path:
    """A file of `make_notes(count)`, made by this script in a subprocess."""
    path = folder / "notes.json"
    command = [sys.executable, __file__, "--notes", str(count), "--make", str(path)]
    done = subprocess.run(command, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"making the notes failed:\n{done.stderr[-3000:]}")
    return path


def pin() -> None:
    """Run on one core."""
    if hasattr(os, "sched_setaffinity"):
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})


def row(label: str, name: str, result: dict[str, Any]) -> str:
    """A table row: p50/p90 of remember, the screen's p50 and share, and the p50 of the CPU
    time remember's thread took (what other work on a loaded host does not add to)."""
    remember, screen = result["remember"], result["screen"]
    p50, share = quantile(remember, 0.5), quantile(screen, 0.5) / quantile(remember, 0.5)
    cells = [label, name, f"{result['refused']}/{len(remember)}", f"{p50:.2f}"]
    cells += [f"{quantile(remember, 0.9):.2f}", f"{quantile(screen, 0.5):.2f}", f"{share:.0%}"]
    cells.append(f"{quantile(result['cpu'], 0.5):.2f}" if "cpu" in result else "-")
    cells.append(f"{quantile(result['recall'], 0.5):.2f}" if result.get("recall") else "-")
    return "| " + " | ".join(cells) + " |"


def main() -> None:
    """Measure this package (and the baseline's, in a subprocess) and print a Markdown table."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notes", type=int, default=200)
    parser.add_argument("--baseline", type=Path, help="an earlier commit's files to compare")
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)  # the baseline's subprocess
    parser.add_argument("--make", type=Path, help=argparse.SUPPRESS)  # the notes' subprocess
    parser.add_argument("--from-file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    pin()
    if args.root is not None:
        sys.path.insert(0, str(args.root))
        print(json.dumps(measure(json.loads(args.from_file.read_text(encoding="utf-8")))))
        return
    sys.path.insert(0, str(ROOT))
    if args.make is not None:
        args.make.write_text(json.dumps(make_notes(args.notes)), encoding="utf-8")
        return
    with tempfile.TemporaryDirectory() as folder:
        path = notes_from_another_process(args.notes, Path(folder))
        load = HostLoad.start()
        results = {"this tree": measure(json.loads(path.read_text(encoding="utf-8")))}
        if args.baseline is not None:
            command = [sys.executable, __file__, "--from-file", str(path), "--root"]
            done = subprocess.run([*command, str(args.baseline)], capture_output=True, text=True)
            if done.returncode != 0:
                raise SystemExit(f"the baseline run failed:\n{done.stderr[-3000:]}")
            results[f"baseline {args.baseline}"] = json.loads(done.stdout.splitlines()[-1])
        load.finish()
    print(f"remember() of {NOTE_CHARS:,}-character notes on SQLite, one core, ms")
    print(
        "| package | notes | refused | remember p50 | remember p90 | screen p50 | screen share "
        "| remember CPU p50 | recall p50 |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    for label, result in results.items():
        for name, measured in result.items():
            print(row(label, name, measured))
    if args.baseline is not None:
        now, before = results["this tree"], results[f"baseline {args.baseline}"]
        for name in now:
            ratio = quantile(before[name]["remember"], 0.5) / quantile(now[name]["remember"], 0.5)
            screen = quantile(before[name]["screen"], 0.5) / quantile(now[name]["screen"], 0.5)
            print(f"{name}: remember p50 {ratio:.2f}x faster, screen p50 {screen:.2f}x faster")
    print(load.line())


if __name__ == "__main__":
    main()
