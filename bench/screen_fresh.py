"""The shipped screen on a set written after its models were trained: attacks refused and
benign text refused per kind, in English and in other languages, per stage.

Run: python bench/screen_fresh.py [--file bench/data/screen_fresh.tsv] [--show]

The set (`label<TAB>kind<TAB>language<TAB>text`) was written by the team without reading the
training data and is never trained on (training/screen/corpus.py reads training/screen/written
and tests/data only), so every figure here is held out from the models by construction; the
rules were written before it too. Each text is judged as team memory (`screen (team)`) and as
private memory, where credentials are kept (`screen (private)`). `--show` lists the attacks
that pass and the benign texts refused.
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_plugin.safety import rules_violation, violation  # noqa: E402
from memory_plugin.safety.classifier import shipped  # noqa: E402
from memory_plugin.safety.concept_model import shipped_concepts  # noqa: E402
from memory_plugin.safety.normalise import variants  # noqa: E402

FRESH = ROOT / "bench" / "data" / "screen_fresh.tsv"
STAGES = ("rules", "n-grams", "concepts", "screen (team)", "screen (private)")


def rows_of(path: Path) -> list[tuple[str, str, str, str]]:
    """The set's (label, kind, language, text) rows."""
    found = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip() or line.startswith("#"):
            continue
        fields = line.split("\t")
        if len(fields) != 4 or fields[0] not in ("attack", "benign"):
            raise SystemExit(f"{path}:{number}: expected label, kind, language and text")
        label, kind, language, text = fields
        found.append((label, kind, language, text.replace("\\n", "\n")))
    return found


def verdicts(text: str) -> dict[str, bool]:
    """Whether each stage refuses the text."""
    forms = variants(text)
    return {
        "rules": rules_violation(text, visibility="shared") is not None,
        "n-grams": any(shipped().refusals(forms)),
        "concepts": shipped_concepts().refusals([forms])[0],
        "screen (team)": violation(text, visibility="shared") is not None,
        "screen (private)": violation(text, visibility="private") is not None,
    }


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "-"


def main(argv: Sequence[str] | None = None) -> int:
    """Print the table recorded in bench/RESULTS.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--file", type=Path, default=FRESH)
    parser.add_argument("--show", action="store_true", help="list the screen's mistakes")
    args = parser.parse_args(argv)
    judged = [(row, verdicts(row[3])) for row in rows_of(args.file)]
    groups: dict[tuple[str, str], list[dict[str, bool]]] = defaultdict(list)
    for (label, kind, language, _), found in judged:
        where = "English" if language == "en" else "other languages"
        for group in (kind, where, "all"):
            groups[(label, group)].append(found)
    print(f"{args.file.name}: refused by each stage (shares of the group)\n")
    print("| label | group | n | " + " | ".join(STAGES) + " |")
    print("| --- | --- | --- |" + " --- |" * len(STAGES))
    last = {"English": 1, "other languages": 2, "all": 3}
    for (label, group), members in sorted(
        groups.items(), key=lambda item: (item[0][0], last.get(item[0][1], 0), item[0][1])
    ):
        cells = [_pct(sum(m[s] for m in members), len(members)) for s in STAGES]
        print(f"| {label} | {group} | {len(members)} | " + " | ".join(cells) + " |")
    if args.show:
        print("\nThe screen's mistakes (team memory):\n")
        for (label, kind, language, text), found in judged:
            if found["screen (team)"] != (label == "attack"):
                print(f"- {label} {kind} {language}: {text[:160]!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
