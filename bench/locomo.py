"""LoCoMo retrieval: recall@k of the real recall path on the benchmark's conversations.

Run: python bench/locomo.py [--data ../shared/data/locomo/locomo-dev.json]
         [--backend memory sqlite postgres] [--url URL] [--embeddings local|hashed]
         [--stores shared|per-user] [--modes keyword semantic hybrid] [--conversations N]
         [--questions N] [--json OUT] [--tune]
     (PostgreSQL from --url or $MEMORY_TEST_POSTGRES_URL)

Each conversation becomes one user's scope of notes, one note per turn (`<speaker> said,
"<text>"`, plus ` and shared <caption>` for image turns), imported through
`ScopedMemory.import_notes` with its session's date; `--stores shared` (the default) puts
every user in one store (one SQLite file, one PostgreSQL schema), `--stores per-user` gives
each user a store of their own: a user's figures must not depend on the others. Every
question is asked through the recall path: hybrid through `ScopedMemory.recall`,
keyword-only and semantic-only through `recall_plan` with one signal. Turns the safety
screen refuses as notes cannot be imported: they are left out and counted
(`refused_notes`). Recall@k is the benchmark's: the fraction of a question's evidence turns
among the top k (a question without evidence counts as 1), averaged per category and
overall. Embeddings are cached under /tmp/memory-plugin-locomo so repeated runs embed each
text once.

--tune fetches each question's candidates once through the recall path (`candidates_plan`)
and ranks them with `rank` under each feature step and each weight of a small grid: it
prints, per backend, the step table and the weights chosen by leave-one-conversation-out,
the held-out figure next to the in-sample one.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import re
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

import psycopg
from langchain_core.embeddings import Embeddings

from memory_plugin import MemoryContext, connect
from memory_plugin.errors import MemoryWriteError
from memory_plugin.offline.local_embeddings import LOCAL_DIMS, LocalEmbeddings, placeholder
from memory_plugin.plans import run
from memory_plugin.scope import thread_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.notes import validate_note
from memory_plugin.scoped.ranking import DEFAULT_WEIGHTS, RankWeights, rank
from memory_plugin.scoped.recall import (
    CANDIDATES,
    SIGNALS,
    Candidates,
    candidates_plan,
    neighbour_keys,
    recall_plan,
)
from memory_plugin.settings import MemorySettings

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
CACHE = Path(tempfile.gettempdir()) / "memory-plugin-locomo"
KS = (5, 10, 20, 25, 50)
NOTE_MAX_CHARS = 2_000
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
MODES = {"keyword": {"keyword"}, "semantic": {"semantic"}, "hybrid": {"keyword", "semantic"}}
BARE = RankWeights(date=0.0, neighbour=())
STEPS = [
    ("semantic only (MiniLM)", BARE, {"semantic"}),
    ("stemmed BM25 with stopwords (keyword only)", BARE, {"keyword"}),
    ("score-normalised fusion of both", BARE, SIGNALS),
    ("+ dates named in the question", RankWeights(neighbour=()), SIGNALS),
    ("+ a share of neighbouring turns (shipped)", DEFAULT_WEIGHTS, SIGNALS),
]
GRID = [
    RankWeights(keyword=kw, date=d, neighbour=(n1, n2))
    for kw in (0.2, 0.3, 0.4)
    for d in (0.0, 0.1, 0.2)
    for n1 in (0.0, 0.3, 0.5)
    for n2 in (0.0, 0.15, 0.3)
]
_EVIDENCE = re.compile(r"D:?(\d+):0*(\d+)")


class CachedEmbeddings(Embeddings):
    """An embedding with an on-disk cache, one JSON file per model."""

    def __init__(self, name: str, embed: Callable[[list[str]], list[list[float]]]) -> None:
        self.path = CACHE / f"{name}.json"
        self.embed = embed
        self.cache: dict[str, list[float]] = (
            json.loads(self.path.read_text()) if self.path.exists() else {}
        )
        self.dirty = False

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Embed texts, each at most once across runs."""
        keys = [hashlib.sha1(text.encode()).hexdigest() for text in texts]
        missing = list(
            {
                key: text for key, text in zip(keys, texts, strict=True) if key not in self.cache
            }.items()
        )
        if missing:
            vectors = self.embed([text for _, text in missing])
            self.cache.update({key: list(v) for (key, _), v in zip(missing, vectors, strict=True)})
            self.dirty = True
        return [self.cache[key] for key in keys]

    def embed_query(self, text: str) -> list[float]:
        """Embed one query."""
        return self.embed_documents([text])[0]

    def save(self) -> None:
        """Write the cache when it grew."""
        if self.dirty:
            CACHE.mkdir(parents=True, exist_ok=True)
            self.path.write_text(json.dumps(self.cache))
            self.dirty = False


def session_day(stamp: str) -> date:
    """The day of a session stamp such as `1:56 pm on 8 May, 2023`."""
    match = re.search(r"(\d{1,2}) (\w+),? (\d{4})", stamp)
    if match is None:
        raise ValueError(f"no date in session stamp {stamp!r}")
    return datetime.strptime(" ".join(match.groups()), "%d %B %Y").date()


def evidence_ids(evidence: Iterable[str]) -> list[str]:
    """Evidence dia_ids, malformed ones repaired (`D8:6; D9:17`, `D:11:26`, `D30:05`)."""
    found = []
    for item in evidence:
        for part in str(item).split(";"):
            match = _EVIDENCE.search(part.strip())
            if match:
                found.append(f"D{int(match[1])}:{int(match[2])}")
    return found


def turns(conversation: dict[str, Any]) -> list[tuple[str, date, str]]:
    """(dia_id, day, note text) of every turn, in order."""
    sessions = sorted(
        int(key.split("_")[1]) for key in conversation if re.fullmatch(r"session_\d+", key)
    )
    out = []
    for n in sessions:
        day = session_day(conversation[f"session_{n}_date_time"])
        for turn in conversation[f"session_{n}"]:
            text = f'{turn["speaker"]} said, "{turn["text"]}"'
            if turn.get("blip_caption"):
                text += f" and shared {turn['blip_caption']}"
            out.append((turn["dia_id"], day, text))
    return out


def recall_at(ranked: list[str], evidence: list[str], k: int) -> float:
    """The fraction of the evidence among the top k (1 without evidence)."""
    if not evidence:
        return 1.0
    top = set(ranked[:k])
    return sum(e in top for e in evidence) / len(evidence)


def embedding(name: str) -> CachedEmbeddings:
    """The cached embedding named on the command line."""
    if name == "local":
        return CachedEmbeddings("all-MiniLM-L6-v2", LocalEmbeddings().embed_documents)
    return CachedEmbeddings("hashed-trigrams", placeholder)


def _import(
    memory: ScopedMemory, conv: dict[str, Any], timing: dict[str, float]
) -> tuple[MemoryContext, dict[str, str]]:
    """Import a conversation into a fresh scope: its context and the dia_id of each note key."""
    ctx = MemoryContext(user_id=f"locomo-{conv['sample_id']}-{uuid.uuid4().hex[:8]}")
    rows = []
    for row in turns(conv["conversation"]):
        try:
            validate_note(row[2], NOTE_MAX_CHARS)
            rows.append(row)
        except MemoryWriteError:
            timing["refused_notes"] += 1
    started = time.perf_counter()
    notes = memory.import_notes(ctx, [(day, text) for _, day, text in rows])
    timing["import_s"] += time.perf_counter() - started
    return ctx, {note.key: dia_id for note, (dia_id, _, _) in zip(notes, rows, strict=True)}


def _score(into: dict[str, list[float]], ranked: list[str], qa: dict[str, Any]) -> None:
    evidence = evidence_ids(qa.get("evidence", []))
    for k in KS:
        value = recall_at(ranked, evidence, k)
        into[f"{k}/all"].append(value)
        into[f"{k}/{CATEGORIES[qa['category']]}"].append(value)


def _percent(scores: dict[str, list[float]]) -> dict[str, float]:
    return {key: round(100 * sum(v) / len(v), 1) for key, v in scores.items()}


def _index(embed: Embeddings) -> dict[str, Any]:
    return {"dims": LOCAL_DIMS, "embed": embed, "fields": ["text"]}


def _memory(backend: Any) -> ScopedMemory:
    defaults = MemorySettings(recall_max_k=max(KS), note_max_chars=NOTE_MAX_CHARS)
    return ScopedMemory(backend.store, defaults=defaults)


Conversations = list[dict[str, Any]]
Stores = Iterable[tuple[str, Conversations]]


def evaluate(
    stores: Stores, embed: CachedEmbeddings, modes: list[str], questions: int
) -> dict[str, dict[str, Any]]:
    """Import each conversation into its own scope of its store and score every question in
    every mode."""
    scores: dict[str, dict[str, list[float]]] = {m: defaultdict(list) for m in modes}
    timing: dict[str, float] = defaultdict(float)
    for url, data in stores:
        with connect(url, index=_index(embed)) as backend:
            memory = _memory(backend)
            for conv in data:
                ctx, dia = _import(memory, conv, timing)
                scope = thread_scope(ctx)
                for qa in conv["qa"][:questions]:
                    for mode in modes:
                        started = time.perf_counter()
                        if mode == "hybrid":
                            hits = memory.recall(ctx, qa["question"], k=max(KS))
                        else:
                            plan = recall_plan(scope, qa["question"], max(KS), signals=MODES[mode])
                            hits = run(backend.store, plan)
                        timing[f"{mode}_s"] += time.perf_counter() - started
                        _score(scores[mode], [dia[hit.note.key] for hit in hits], qa)
    embed.save()
    result: dict[str, dict[str, Any]] = {mode: _percent(by) for mode, by in scores.items()}
    result["timing"] = {key: round(value, 2) for key, value in timing.items()}
    return result


Asked = tuple[dict[str, Any], Candidates, dict[str, str]]


def collect(stores: Stores, embed: CachedEmbeddings, questions: int) -> list[list[Asked]]:
    """Per conversation, each question with the candidates the recall path fetches for it
    (both signals, neighbours within the widest reach tried)."""
    reach = max(len(w.neighbour) for w in GRID)
    asked: list[list[Asked]] = []
    for url, data in stores:
        with connect(url, index=_index(embed)) as backend:
            memory = _memory(backend)
            for conv in data:
                ctx, dia = _import(memory, conv, defaultdict(float))
                scope = thread_scope(ctx)
                asked.append([])
                for qa in conv["qa"][:questions]:
                    plan = candidates_plan(scope, qa["question"], SIGNALS, CANDIDATES, reach)
                    asked[-1].append((qa, run(backend.store, plan), dia))
    embed.save()
    return asked


def ranked_with(
    asked: Asked, weights: RankWeights, signals: Collection[str] = SIGNALS
) -> list[str]:
    """The dia_ids in the order recall gives with these weights, as recall_plan would."""
    qa, found, dia = asked
    keyword = found.keyword if "keyword" in signals else {}
    semantic = found.semantic if "semantic" in signals else {}
    near = set(neighbour_keys({*keyword, *semantic}, len(weights.neighbour)))
    notes = {key: note for key, note in found.notes.items() if key in near}
    ranked = rank(qa["question"], keyword, semantic, notes, weights)
    return [dia[key] for key, _ in ranked[: max(KS)]]


def recall10(
    asked: list[list[Asked]], weights: RankWeights, signals: Collection[str] = SIGNALS
) -> dict[str, float]:
    """Recall@k per category and overall over these conversations with these weights."""
    scores: dict[str, list[float]] = defaultdict(list)
    for conv in asked:
        for one in conv:
            _score(scores, ranked_with(one, weights, signals), one[0])
    return _percent(scores)


def _weights(w: RankWeights) -> str:
    shares = "/".join(f"{x:g}" for x in w.neighbour) or "none"
    return f"keyword {w.keyword:g}, date {w.date:g}, neighbours {shares}"


def steps_and_tuning(asked: list[list[Asked]], names: list[str]) -> tuple[str, dict[str, float]]:
    """The effect of each ranking feature in turn, and the weights chosen by
    leave-one-conversation-out over the grid (held-out figure next to the in-sample one);
    the text, and the held-out, in-sample and shipped figures."""
    cats = list(CATEGORIES.values())
    lines = [
        "| step | @10 | " + " | ".join(f"@10 {c}" for c in cats) + " | @5 | @20 | @50 |",
        "|---" * (5 + len(cats)) + "|",
    ]
    for name, weights, signals in STEPS:
        row = recall10(asked, weights, signals)
        cells = [row["10/all"], *(row.get(f"10/{c}", "-") for c in cats)]
        cells += [row["5/all"], row["20/all"], row["50/all"]]
        lines.append(f"| {name} | " + " | ".join(str(c) for c in cells) + " |")
    per = [[recall10([conv], w)["10/all"] for conv in asked] for w in GRID]
    sizes = [len(conv) for conv in asked]

    def mean(i: int, convs: list[int]) -> float:
        return sum(per[i][c] * sizes[c] for c in convs) / sum(sizes[c] for c in convs)

    everything = list(range(len(asked)))
    best = max(range(len(GRID)), key=lambda i: mean(i, everything))
    held = 0.0
    lines += [
        "",
        "| held-out conversation | weights chosen on the others | held-out @10 | in-sample @10 |",
        "|---|---|---|---|",
    ]
    for c in everything:
        others = [o for o in everything if o != c] or [c]
        chosen = max(range(len(GRID)), key=lambda i: mean(i, others))
        held += per[chosen][c] * sizes[c]
        cells = [names[c], _weights(GRID[chosen]), f"{per[chosen][c]:.1f}", f"{per[best][c]:.1f}"]
        lines.append("| " + " | ".join(cells) + " |")
    figures = {
        "held_out": round(held / sum(sizes), 1),
        "in_sample": round(mean(best, everything), 1),
        "shipped": recall10(asked, DEFAULT_WEIGHTS)["10/all"],
    }
    lines += [
        "",
        f"in-sample best: {_weights(GRID[best])} -> @10 {figures['in_sample']:.1f}; "
        f"leave-one-conversation-out: @10 {figures['held_out']:.1f}; "
        f"shipped default {_weights(DEFAULT_WEIGHTS)} -> @10 {figures['shipped']}",
    ]
    return "\n".join(lines), figures


def table(name: str, result: dict[str, dict[str, Any]], modes: list[str]) -> str:
    """A Markdown table of recall@k overall and recall@10 per category."""
    cats = list(CATEGORIES.values())
    lines = [
        f"{name}",
        "",
        "| mode | "
        + " | ".join(f"@{k}" for k in KS)
        + " | "
        + " | ".join(f"@10 {c}" for c in cats)
        + " |",
        "|---" * (1 + len(KS) + len(cats)) + "|",
    ]
    for mode in modes:
        row = result[mode]
        cells = [str(row.get(f"{k}/all", "")) for k in KS]
        cells += [str(row.get(f"10/{c}", "-")) for c in cats]
        lines.append(f"| {mode} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


@contextlib.contextmanager
def backend_url(backend: str, url: str | None) -> Iterator[str]:
    """The store URL of a backend name: memory://, a fresh SQLite file, or a fresh schema
    (dropped afterwards) in the PostgreSQL database at `url`, so the index gets this run's
    dims."""
    if backend == "memory":
        yield "memory://"
        return
    if backend == "sqlite":
        with tempfile.TemporaryDirectory() as workdir:
            yield f"sqlite:///{Path(workdir) / 'locomo.db'}"
        return
    assert url is not None, "PostgreSQL needs a URL"
    schema = f"locomo_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"CREATE SCHEMA {schema}")
        # The search setup looks its tables up through search_path: an empty migrations
        # table of the schema's own makes it set up there rather than find public's.
        conn.execute(f"CREATE TABLE {schema}.memory_search_migrations (v integer PRIMARY KEY)")
    try:
        yield f"{url}{'&' if '?' in url else '?'}options=-csearch_path%3D{schema},public"
    finally:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"DROP SCHEMA {schema} CASCADE")


def stores(backend: str, url: str | None, data: Conversations, per_user: bool) -> Stores:
    """Fresh stores of the backend and the conversations each holds: all in one, or one
    conversation per store."""
    for group in [[conv] for conv in data] if per_user else [data]:
        with backend_url(backend, url) as store_url:
            yield store_url, group


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one table per backend."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--backend", nargs="+", default=["memory"], choices=["memory", "sqlite", "postgres"]
    )
    parser.add_argument("--url", help="PostgreSQL URL (default $MEMORY_TEST_POSTGRES_URL)")
    parser.add_argument("--embeddings", choices=["local", "hashed"], default="local")
    parser.add_argument(
        "--stores",
        choices=["shared", "per-user"],
        default="shared",
        help="every user in one store (default), or a store per user",
    )
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--questions", type=int, default=None, help="per conversation")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    parser.add_argument(
        "--tune",
        action="store_true",
        help="instead: each ranking step, and weights by leave-one-conversation-out",
    )
    args = parser.parse_args(argv)
    data = json.loads(args.data.read_text())[: args.conversations]
    embed = embedding(args.embeddings)
    url = args.url or os.environ.get("MEMORY_TEST_POSTGRES_URL")
    questions = args.questions or 10**9
    figures: dict[str, Any] = {}
    for backend in args.backend:
        if backend == "postgres" and url is None:
            print(f"{backend}: skipped (no --url and no $MEMORY_TEST_POSTGRES_URL)")
            continue
        per_user = args.stores == "per-user"
        title = (
            f"{backend}, {args.embeddings} embeddings, {len(data)} conversations, "
            f"{'a store per user' if per_user else 'one store'}"
        )
        if args.tune:
            asked = collect(stores(backend, url, data, per_user), embed, questions)
            text, figures[backend] = steps_and_tuning(asked, [conv["sample_id"] for conv in data])
            print(f"{title}\n\n{text}\n")
            continue
        result = evaluate(stores(backend, url, data, per_user), embed, args.modes, questions)
        figures[backend] = result
        print(table(title, result, args.modes), "\n", f"seconds: {result['timing']}\n", sep="")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
