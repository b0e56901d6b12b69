"""Score a chat model on post-turn profile consolidation with the labelled exchanges.

Run: MEMORY_MODEL=openai:gpt-4o-mini python bench/profile_consolidation.py
     python bench/profile_consolidation.py --scripted   (the harness itself, no model needed)

For each exchange of tests/data/profile_updates.jsonl the model sees the profile (the base
profile or none) and the exchange through the real consolidation step; the change it made is
classified (ADD/UPDATE/DELETE per section, or NOOP) and compared with the label.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.store.memory import InMemoryStore

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_plugin import MemoryContext  # noqa: E402
from memory_plugin.backends.conditional import put_if_version  # noqa: E402
from memory_plugin.profile.changes import changes  # noqa: E402
from memory_plugin.profile.document import parse, render  # noqa: E402
from memory_plugin.profile.memory import KEY, ProfileMemory  # noqa: E402
from memory_plugin.scope import profile_scope  # noqa: E402

DATA = ROOT / "tests" / "data"
USER = MemoryContext(user_id="bench-user")


def score(model: BaseChatModel, cases: list[dict[str, Any]]) -> dict[str, Any]:
    """Run every case; count exact matches of operation and section."""
    base = replace(parse((DATA / "profile_base.md").read_text()), user_id="bench-user")
    tally: Counter[str] = Counter()
    misses = []
    for case in cases:
        store = InMemoryStore()
        if case["before"] == "base":
            put_if_version(store, profile_scope(USER).namespace, KEY, {"text": render(base)}, None)
        memory = ProfileMemory(store, model=model)
        before = memory.read(USER)
        memory.consolidate(USER, case["user"], case["assistant"])
        got = changes(before, memory.read(USER))
        expected = (case["op"], case["section"])
        tally["cases"] += 1
        tally["op"] += any(op == case["op"] for op, _ in got)
        tally["exact"] += got == [expected]
        tally[f"{case['op']} total"] += 1
        tally[f"{case['op']} exact"] += got == [expected]
        if got != [expected]:
            misses.append((case["id"], expected, got))
    return {"tally": tally, "misses": misses}


def main() -> None:
    """Print a Markdown summary of the score."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--model", help="chat model (default: $MEMORY_MODEL)")
    parser.add_argument("--scripted", action="store_true", help="score the scripted test model")
    args = parser.parse_args()
    cases = [json.loads(line) for line in (DATA / "profile_updates.jsonl").read_text().splitlines()]
    if args.scripted:
        from tests.fakes import ProfileModel

        model: BaseChatModel = ProfileModel(plan={c["user"]: c for c in cases})
        name = "scripted test model"
    elif args.model or os.environ.get("MEMORY_MODEL"):
        from memory_plugin.models import resolve_model

        model = resolve_model(args.model)
        name = args.model or os.environ["MEMORY_MODEL"]
    else:
        print("No model configured: set MEMORY_MODEL (or pass --model), or use --scripted.")
        return
    result = score(model, cases)
    tally = result["tally"]
    print(f"Model: {name}; {tally['cases']} labelled exchanges\n")
    print("| op | cases | exact (op and section) |")
    print("| --- | --- | --- |")
    for op in ("ADD", "UPDATE", "DELETE", "NOOP"):
        print(f"| {op} | {tally[f'{op} total']} | {tally[f'{op} exact']} |")
    print(
        f"\nExact: {tally['exact']}/{tally['cases']}; "
        f"right operation: {tally['op']}/{tally['cases']}"
    )
    for case_id, expected, got in result["misses"]:
        print(f"- {case_id}: expected {expected}, got {got}")


if __name__ == "__main__":
    main()
