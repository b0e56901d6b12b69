"""LoCoMo retrieval: recall@k of the real recall path on the benchmark's conversations.

Run: python bench/locomo.py [--data ../shared/data/locomo/locomo-dev.json]
         [--backend memory sqlite postgres] [--url URL] [--embeddings local|hashed]
         [--modes keyword semantic hybrid] [--conversations N] [--questions N] [--json OUT]
     (PostgreSQL from --url or $MEMORY_TEST_POSTGRES_URL)

Each conversation becomes one scope's notes, one note per turn (`<speaker> said, "<text>"`,
plus ` and shared <caption>` for image turns), imported through `ScopedMemory.import_notes`
with its session's date. Every question is asked through the recall path: hybrid through
`ScopedMemory.recall`, keyword-only and semantic-only through `recall_plan` with one signal.
Turns the safety screen refuses as notes cannot be imported: they are left out and counted
(`refused_notes`). Recall@k is the benchmark's: the fraction of a question's evidence turns
among the top k (a question without evidence counts as 1), averaged per category and
overall. Embeddings are cached under /tmp/memory-plugin-locomo so repeated runs embed each
text once.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import sys
import tempfile
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable
from datetime import date, datetime
from pathlib import Path
from typing import Any

from langchain_core.embeddings import Embeddings

from memory_plugin import MemoryContext, connect
from memory_plugin.errors import MemoryWriteError
from memory_plugin.local_embeddings import LOCAL_DIMS, LocalEmbeddings, placeholder
from memory_plugin.plans import run
from memory_plugin.scope import thread_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.notes import validate_note
from memory_plugin.scoped.recall import recall_plan
from memory_plugin.settings import MemorySettings

DATA = Path(__file__).resolve().parents[2] / "shared" / "data" / "locomo" / "locomo-dev.json"
CACHE = Path(tempfile.gettempdir()) / "memory-plugin-locomo"
KS = (5, 10, 20, 25, 50)
NOTE_MAX_CHARS = 2_000
CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop", 5: "adversarial"}
MODES = {"keyword": {"keyword"}, "semantic": {"semantic"}, "hybrid": {"keyword", "semantic"}}
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


def evaluate(
    url: str, data: list[dict[str, Any]], embed: CachedEmbeddings, modes: list[str], questions: int
) -> dict[str, dict[str, Any]]:
    """Import each conversation into its own scope and score every question in every mode."""
    scores: dict[str, dict[str, list[float]]] = {m: defaultdict(list) for m in modes}
    timing: dict[str, float] = defaultdict(float)
    index = {"dims": LOCAL_DIMS, "embed": embed, "fields": ["text"]}
    with connect(url, index=index) as backend:
        memory = ScopedMemory(
            backend.store,
            defaults=MemorySettings(recall_max_k=max(KS), note_max_chars=NOTE_MAX_CHARS),
        )
        for conv in data:
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
            dia = {note.key: dia_id for note, (dia_id, _, _) in zip(notes, rows, strict=True)}
            scope = thread_scope(ctx)
            for qa in conv["qa"][:questions]:
                evidence = evidence_ids(qa.get("evidence", []))
                for mode in modes:
                    started = time.perf_counter()
                    if mode == "hybrid":
                        hits = memory.recall(ctx, qa["question"], k=max(KS))
                    else:
                        plan = recall_plan(scope, qa["question"], max(KS), signals=MODES[mode])
                        hits = run(backend.store, plan)
                    timing[f"{mode}_s"] += time.perf_counter() - started
                    ranked = [dia[hit.note.key] for hit in hits]
                    for k in KS:
                        value = recall_at(ranked, evidence, k)
                        scores[mode][f"{k}/all"].append(value)
                        scores[mode][f"{k}/{CATEGORIES[qa['category']]}"].append(value)
    embed.save()
    result: dict[str, dict[str, Any]] = {
        mode: {key: round(100 * sum(v) / len(v), 1) for key, v in by.items()}
        for mode, by in scores.items()
    }
    result["timing"] = {key: round(value, 2) for key, value in timing.items()}
    return result


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


def backend_url(backend: str, url: str | None, workdir: Path) -> str | None:
    """The store URL of a backend name: memory://, a fresh SQLite file, or PostgreSQL."""
    if backend == "memory":
        return "memory://"
    if backend == "sqlite":
        return f"sqlite:///{workdir / 'locomo.db'}"
    return url or os.environ.get("MEMORY_TEST_POSTGRES_URL")


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print one table per backend."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", type=Path, default=DATA)
    parser.add_argument(
        "--backend", nargs="+", default=["memory"], choices=["memory", "sqlite", "postgres"]
    )
    parser.add_argument("--url", help="PostgreSQL URL (default $MEMORY_TEST_POSTGRES_URL)")
    parser.add_argument("--embeddings", choices=["local", "hashed"], default="local")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--conversations", type=int, default=None)
    parser.add_argument("--questions", type=int, default=None, help="per conversation")
    parser.add_argument("--json", type=Path, help="also write the figures as JSON")
    args = parser.parse_args(argv)
    data = json.loads(args.data.read_text())[: args.conversations]
    embed = embedding(args.embeddings)
    figures = {}
    for backend in args.backend:
        with tempfile.TemporaryDirectory() as workdir:
            url = backend_url(backend, args.url, Path(workdir))
            if url is None:
                print(f"{backend}: skipped (no --url and no $MEMORY_TEST_POSTGRES_URL)")
                continue
            result = evaluate(url, data, embed, args.modes, args.questions or 10**9)
        figures[backend] = result
        title = f"{backend}, {args.embeddings} embeddings, {len(data)} conversations"
        print(table(title, result, args.modes), "\n", f"seconds: {result['timing']}\n", sep="")
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
