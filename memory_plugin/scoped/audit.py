"""Recall audit: recall@k of the production recall order against an exact search.

For each query, the exact search scores every live note of the scope: BM25 over all notes,
cosine similarity over every vector of the scope's index, ranked by the same `ranking.rank`
recall uses, with every note in the pool. The fused order is what `recall` returns (before
any rerank), at the scope's `recall_candidates` breadth unless one is given. recall@k is the
share of the exact top k that the fused top k holds; a query the exact search finds nothing
for is left out. Without a query list, queries are sampled from the scope's own notes: up to
`per_scope` notes picked at random (seeded), each giving a window of up to six consecutive
words of its text.
"""

from __future__ import annotations

import json
import logging
import random
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TypedDict, Unpack

from langgraph.store.base import BaseStore

from memory_plugin.backends.search import KeywordSearch, VectorSearch
from memory_plugin.errors import MemoryWriteError
from memory_plugin.plans import Plan, arun, run
from memory_plugin.scope import Scope, readable_thread_scope
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scoped.consolidation import note_scopes_plan
from memory_plugin.scoped.notes import NOTE_INDEX, NOTES, Note, all_notes_plan
from memory_plugin.scoped.ranking import rank
from memory_plugin.scoped.recall import recall_plan
from memory_plugin.settings import LayeredSettings

logger = logging.getLogger(__name__)

KS = (5, 10, 20)
WINDOW = 6


@dataclass(frozen=True)
class QueryAudit:
    """One query's recall@k (k -> share of the exact top k found by recall)."""

    query: str
    recall: dict[int, float]


@dataclass(frozen=True)
class ScopeAudit:
    """One scope's audit: its label, note count and each query's recall@k."""

    scope: str
    notes: int
    queries: list[QueryAudit] = field(default_factory=list)

    def recall(self, k: int) -> float | None:
        """Mean recall@k over the scope's queries, None without any."""
        values = [q.recall[k] for q in self.queries]
        return sum(values) / len(values) if values else None


@dataclass(frozen=True)
class AuditReport:
    """Recall@k of the fused order against exact search, per scope and overall."""

    ks: tuple[int, ...]
    scopes: list[ScopeAudit]

    def recall(self, k: int) -> float | None:
        """Mean recall@k over every query of every scope, None without any."""
        values = [q.recall[k] for s in self.scopes for q in s.queries]
        return sum(values) / len(values) if values else None

    def to_json(self) -> str:
        """The report as JSON: per scope (with each query) and overall."""
        overall = {str(k): self.recall(k) for k in self.ks}
        scopes = [
            {**asdict(s), "recall": {str(k): s.recall(k) for k in self.ks}} for s in self.scopes
        ]
        return json.dumps({"ks": list(self.ks), "overall": overall, "scopes": scopes}, indent=2)

    def table(self) -> str:
        """A plain-text table: one row per scope and an overall row."""
        head = ["scope", "notes", "queries", *(f"recall@{k}" for k in self.ks)]
        rows = [
            [s.scope, str(s.notes), str(len(s.queries)), *(_share(s.recall(k)) for k in self.ks)]
            for s in self.scopes
        ]
        total = sum(len(s.queries) for s in self.scopes)
        notes = sum(s.notes for s in self.scopes)
        rows.append(["overall", str(notes), str(total), *(_share(self.recall(k)) for k in self.ks)])
        widths = [max(len(row[i]) for row in [head, *rows]) for i in range(len(head))]
        lines = [
            "  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True))
            for row in [head, *rows]
        ]
        return "\n".join(line.rstrip() for line in lines)


def _share(value: float | None) -> str:
    return "-" if value is None else f"{value:.3f}"


def sample_queries(notes: Sequence[Note], count: int, seed: int) -> list[str]:
    """Up to `count` queries from random notes: a window of up to six consecutive words each."""
    rng = random.Random(seed)
    queries = []
    for note in rng.sample(list(notes), min(count, len(notes))):
        words = note.body.split()
        start = rng.randrange(max(1, len(words) - WINDOW + 1))
        queries.append(" ".join(words[start : start + WINDOW]))
    return queries


def exact_plan(scope: Scope, query: str, notes: list[Note]) -> Plan[list[str]]:
    """Every note's key ranked by exhaustive keyword and vector scores, best first; without
    vector scores, only the notes with some keyword evidence (their own or a neighbour's)."""
    by_key = {note.key: note for note in notes}
    found = yield KeywordSearch(scope.child(NOTES), query, len(notes))
    keyword = {hit.key: hit.score for hit in found}
    semantic: dict[str, float] = {}
    try:
        found = yield VectorSearch(scope.child(NOTE_INDEX), query, len(notes))
        semantic = {hit.key: hit.score for hit in found if hit.key in by_key}
    except ValueError:
        logger.debug("exact search: no vector index; keyword scores only", exc_info=True)
    except Exception:
        logger.warning("exact search: the vector index failed; keyword scores only", exc_info=True)
    ranked = rank(query, keyword, semantic, by_key)
    return [key for key, score in ranked if semantic or score > 0]


def recall_at(fused: list[str], exact: list[str], k: int) -> float:
    """The share of the exact top k that the fused top k holds."""
    wanted = exact[:k]
    return len(set(fused[:k]) & set(wanted)) / len(wanted)


def scope_audit_plan(
    scope: Scope,
    queries: Sequence[str] | None,
    *,
    per_scope: int,
    seed: int,
    candidates: int,
    ks: tuple[int, ...] = KS,
) -> Plan[ScopeAudit]:
    """Audit one scope with the given queries, or queries sampled from its notes."""
    notes = yield from all_notes_plan(scope)
    asked = list(queries) if queries is not None else sample_queries(notes, per_scope, seed)
    if not notes:
        asked = []
    audit = ScopeAudit("/".join(scope.namespace[1:]), len(notes))
    for query in asked:
        exact = yield from exact_plan(scope, query, notes)
        if not exact:
            continue
        hits = yield from recall_plan(scope, query, max(ks), candidates=candidates)
        fused = [hit.note.key for hit in hits]
        audit.queries.append(QueryAudit(query, {k: recall_at(fused, exact, k) for k in ks}))
    return audit


def audit_plan(
    settings: LayeredSettings,
    ctx: MemoryContext | None,
    *,
    queries: Sequence[str] | None = None,
    sample: int | None = None,
    per_scope: int = 20,
    seed: int = 0,
    candidates: int | None = None,
) -> Plan[AuditReport]:
    """The plan behind recall_audit."""
    if queries is not None:
        queries = [q.strip() for q in queries if q.strip()]
        if not queries:
            raise MemoryWriteError("the recall audit needs at least one non-empty query")
    if per_scope < 1:
        raise MemoryWriteError(f"the queries per scope must be at least 1, got {per_scope}")
    if (ctx is None) == (sample is None):
        raise MemoryWriteError("audit one scope (a context) or a sample of scopes, not both")
    if ctx is not None:
        scope = readable_thread_scope(ctx)
        chosen = [(scope, ctx)] if scope is not None else []
    else:
        assert sample is not None
        if sample < 1:
            raise MemoryWriteError(f"the scope sample must be at least 1, got {sample}")
        found = yield from note_scopes_plan()
        chosen = sorted(random.Random(seed).sample(found, min(sample, len(found))), key=str)
    report = AuditReport(KS, [])
    for scope, owner in chosen:
        if candidates is None:
            effective = yield from settings.effective_plan(owner)
            breadth = effective.values.recall_candidates
        else:
            breadth = candidates
        plan = scope_audit_plan(scope, queries, per_scope=per_scope, seed=seed, candidates=breadth)
        report.scopes.append((yield from plan))
    return report


class AuditOptions(TypedDict, total=False):
    """What to audit: `queries` (else each scope's own notes give them), a `sample` of scopes
    instead of one context's, `per_scope` queries, the sampling `seed`, and `candidates`
    overriding recall's candidate breadth (default: each scope's recall_candidates)."""

    queries: Sequence[str] | None
    sample: int | None
    per_scope: int
    seed: int
    candidates: int | None


def recall_audit(
    store: BaseStore, ctx: MemoryContext | None = None, **options: Unpack[AuditOptions]
) -> AuditReport:
    """recall@k (5, 10, 20) of the fused recall order against exact search, for the scope of
    `ctx` or a random sample of scopes (see AuditOptions)."""
    return run(store, audit_plan(LayeredSettings(store), ctx, **options))


async def arecall_audit(
    store: BaseStore, ctx: MemoryContext | None = None, **options: Unpack[AuditOptions]
) -> AuditReport:
    """Async twin of recall_audit."""
    return await arun(store, audit_plan(LayeredSettings(store), ctx, **options))
