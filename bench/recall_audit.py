"""Recall audit on LoCoMo: recall@k of the fused recall order against exact search.

Run: python bench/recall_audit.py [--conversations N] [--turns N] [--questions N]
         [--embeddings local|hashed] [--candidates 100,50,24,10] [--per-scope 20]

Each LoCoMo development conversation becomes one scope's notes (as in bench/locomo.py,
imported with their session's date into an in-memory store), then `recall_audit` compares
the production recall order with an exhaustive search for two query sets: the benchmark's own
questions, and queries sampled from the notes. Each candidate breadth is recall's number of
keyword and of semantic candidates (the shipped default first): the table shows what a
narrower candidate search loses, the measurement to read before enabling rerank, which can
only reorder what the candidate search found. Audit time per query is reported too.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from langgraph.store.base import BaseStore
from locomo import DATA, embedding, evidence_ids, recall_at, turns

from memory_plugin import MemoryContext, connect
from memory_plugin.errors import MemoryWriteError
from memory_plugin.offline.local_embeddings import LOCAL_DIMS
from memory_plugin.plans import run
from memory_plugin.scope import thread_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.audit import KS, AuditReport, exact_plan, recall_audit
from memory_plugin.scoped.notes import all_notes_plan, validate_note
from memory_plugin.scoped.recall import CANDIDATES, recall_plan


@dataclass(frozen=True)
class Conversation:
    """One imported conversation: its context, questions, their evidence, each note's turn."""

    ctx: MemoryContext
    questions: list[str]
    evidence: list[list[str]]
    turn_of: dict[str, str]


def conversations(
    memory: ScopedMemory, data: list[dict[str, Any]], limit: int | None
) -> list[Conversation]:
    """Import each conversation into its own scope (turns the safety screen refuses as notes
    are left out, as in bench/locomo.py)."""
    out = []
    for conversation in data:
        ctx = MemoryContext(user_id=conversation["sample_id"])
        rows = []
        for row in turns(conversation["conversation"])[:limit]:
            try:
                validate_note(row[2], 2_000)
            except MemoryWriteError:
                continue
            rows.append(row)
        notes = memory.import_notes(ctx, [(day, text) for _, day, text in rows])
        turn_of = {note.key: dia for note, (dia, _, _) in zip(notes, rows, strict=True)}
        qa = conversation["qa"]
        evidence = [evidence_ids(item.get("evidence", [])) for item in qa]
        out.append(Conversation(ctx, [item["question"] for item in qa], evidence, turn_of))
    return out


def evidence_rows(store: BaseStore, convs: list[Conversation], questions: int | None) -> list[str]:
    """LoCoMo evidence recall@k (%) of recall's order and of the exact order, same questions."""
    found: dict[str, list[list[float]]] = {"recall (fused)": [], "exact search": []}
    for conv in convs:
        scope = thread_scope(conv.ctx)
        notes = run(store, all_notes_plan(scope))
        for question, evidence in list(zip(conv.questions, conv.evidence, strict=True))[:questions]:
            hits = run(store, recall_plan(scope, question, max(KS)))
            exact = run(store, exact_plan(scope, question, notes))
            for name, keys in (
                ("recall (fused)", [hit.note.key for hit in hits]),
                ("exact search", exact),
            ):
                ranked = [conv.turn_of[key] for key in keys]
                found[name].append([recall_at(ranked, evidence, k) for k in KS])
    rows = []
    for name, values in found.items():
        means = [100 * sum(v[i] for v in values) / max(1, len(values)) for i in range(len(KS))]
        rows.append(f"| {name} | {len(values)} | " + " | ".join(f"{m:.1f}" for m in means) + " |")
    return rows


def row(label: str, candidates: int, reports: list[AuditReport], seconds: float) -> str:
    """One table row: mean recall@k over every audited query of every scope."""
    asked = [q for report in reports for scope in report.scopes for q in scope.queries]
    means = [sum(q.recall[k] for q in asked) / max(1, len(asked)) for k in KS]
    cells = " | ".join(f"{m:.3f}" for m in means)
    per_query = 1000 * seconds / max(1, len(asked))
    return f"| {label} | {candidates} | {len(asked)} | {cells} | {per_query:.1f} |"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument("--conversations", type=int, default=5)
    parser.add_argument("--turns", type=int, help="first N turns of each conversation")
    parser.add_argument("--questions", type=int, help="first N questions of each conversation")
    parser.add_argument("--embeddings", choices=["local", "hashed"], default="local")
    parser.add_argument("--candidates", default=f"{CANDIDATES},50,24,10")
    parser.add_argument("--per-scope", type=int, default=20)
    parser.add_argument(
        "--evidence",
        action="store_true",
        help="also LoCoMo evidence recall@k of recall's order against the exact order",
    )
    args = parser.parse_args(argv)
    data = json.loads(args.data.read_text())[: args.conversations]
    embed = embedding(args.embeddings)
    index = {"dims": LOCAL_DIMS, "embed": embed, "fields": ["text"]}
    print(
        "| queries | candidates | audited | "
        + " | ".join(f"recall@{k}" for k in KS)
        + " | ms per query |"
    )
    print("| --- | --- | --- | " + " | ".join("---" for _ in KS) + " | --- |")
    with connect("memory://", index=index) as backend:
        convs = conversations(ScopedMemory(backend.store), data, args.turns)
        for candidates in [int(c) for c in args.candidates.split(",")]:
            for label in ("questions", "sampled"):
                started, reports = time.perf_counter(), []
                for conv in convs:
                    asked = conv.questions[: args.questions] if label == "questions" else None
                    reports.append(
                        recall_audit(
                            backend.store,
                            conv.ctx,
                            queries=asked,
                            per_scope=args.per_scope,
                            candidates=candidates,
                        )
                    )
                print(row(label, candidates, reports, time.perf_counter() - started), flush=True)
        if args.evidence:
            print()
            print("| order | questions | " + " | ".join(f"recall@{k}" for k in KS) + " |")
            print("| --- | --- | " + " | ".join("---" for _ in KS) + " |")
            for line in evidence_rows(backend.store, convs, args.questions):
                print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
