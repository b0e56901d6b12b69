"""Train the screen's classifier (memory_plugin/safety/screen_model.npz), seeded and reproducible.

Run: python training/screen/train.py [--seed 0] [--sample N] [--out PATH]

Every example's source is written to --provenance (training/screen/provenance.tsv.gz; see
corpus.py for the sources). The model is a logistic regression over the hashed n-grams of
memory_plugin.safety.classifier; its threshold is set from out-of-fold scores so that at most
`--benign-rate` of the benign examples score above it.
"""

from __future__ import annotations

import argparse
import gzip
import random
import sys
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy import sparse
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedGroupKFold

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

from corpus import ATTACK, Example, everything  # noqa: E402

from memory_plugin.safety.classifier import (  # noqa: E402
    DIMENSIONS,
    MODEL_PATH,
    PASSAGE,
    concept_buckets,
    grams,
    masked,
    passages,
)
from memory_plugin.safety.concept_model import MODEL_PATH as CONCEPTS_PATH  # noqa: E402
from memory_plugin.safety.concept_model import ConceptModel, feature_names  # noqa: E402
from memory_plugin.safety.concept_model import features as concept_features  # noqa: E402
from memory_plugin.safety.normalise import variants  # noqa: E402

C = 16.0
WRITTEN_WEIGHT = 4.0
"""The team's written examples (realistic notes, chat turns and attacks, a tenth of the corpus)
weigh this much against one of the generator's templated ones."""
CONCEPT_C = 0.1
"""The concept model's regularisation: strong, so that its weight rests on the concepts and pairs
seen in many languages (held out by language, 0.1 refused more than 1.0 in every fold)."""
BENIGN_RATE = 0.003
CONCEPT_BENIGN_RATE = 0.001
"""The concept model's share of benign examples above its threshold: its few features tell a
quoted prompt template from an attack less well than the n-grams, so it refuses less."""
CONCEPT_BOOST = 4.0
"""A concept feature's value against an n-gram's: the regression then prefers weight on the
concepts, which every language shares, over the n-grams of the languages it was trained on.
The saved weights hold the boost (a concept's weight is multiplied by it)."""


def fold(text: str) -> str:
    """The form the classifier is trained on: NFKC, case-folded, whitespace collapsed."""
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def features(texts: Sequence[str], dimensions: int = DIMENSIONS) -> sparse.csr_matrix:
    """Each text's distinct n-grams, each valued one over the square root of their number (so
    a row's dot product with the weights is the classifier's score less its bias)."""
    rows, cols, values = [], [], []
    for row, text in enumerate(texts):
        buckets = grams(masked(fold(text)), dimensions).buckets
        if not len(buckets):
            continue
        unique = np.unique(buckets)
        rows.append(np.full(len(unique), row))
        cols.append(unique)
        values.append(np.full(len(unique), 1 / np.sqrt(len(unique))))
    if not rows:
        return sparse.csr_matrix((len(texts), dimensions))
    found = sparse.csr_matrix(
        (np.concatenate(values), (np.concatenate(rows), np.concatenate(cols))),
        shape=(len(texts), dimensions),
    )
    return found @ sparse.diags(_boost(dimensions)).tocsr()


def _boost(dimensions: int) -> np.ndarray:
    """Each bucket's feature scale: CONCEPT_BOOST for the concepts' buckets, else 1."""
    scale = np.ones(dimensions)
    scale[concept_buckets(dimensions)] = CONCEPT_BOOST
    return scale


def shipped_weights(coef: np.ndarray) -> np.ndarray:
    """The weights a model file holds for a regression's coefficients (the boost folded in)."""
    return coef * _boost(len(coef))


@dataclass(frozen=True)
class Rows:
    """The training matrix: one row per form of an example, its label and its example."""

    x: sparse.csr_matrix
    y: np.ndarray
    owner: np.ndarray
    weight: np.ndarray

    def of(self, chosen: np.ndarray) -> Rows:
        """The rows of the chosen examples (a boolean per example)."""
        return self.rows(chosen[self.owner])

    def rows(self, keep: np.ndarray) -> Rows:
        """The rows `keep` selects (a boolean or an index per row)."""
        return Rows(self.x[keep], self.y[keep], self.owner[keep], self.weight[keep])


def forms_of(example: Example) -> list[str]:
    """What the classifier is trained on for an example. The screen scores every normalised
        form of a text (memory_plugin.safety.normalise.variants, rot13 and reversed ones included)
        and refuses when any form scores high, and a long text when any passage does, so every form
    and passage of a benign text is a benign row. An
        attack is one row, its plain form; encoded attacks are left to the decoder, which hands
        the classifier their plain form."""
    if example.label != ATTACK:
        forms = list(dict.fromkeys([fold(example.text), *variants(example.text)]))
        plain = masked(forms[0])
        parts = (
            [plain[a : max(a, b - 2)] for a, b in passages(plain)] if len(plain) > PASSAGE else []
        )
        return forms + parts
    return [] if example.family == "obfuscation" else [fold(example.text)]


def weight_of(example: Example) -> float:
    """An example's weight in training: WRITTEN_WEIGHT for the team's written examples,
    else 1."""
    return WRITTEN_WEIGHT if example.origin == "written" else 1.0


def matrix(examples: Sequence[Example]) -> Rows:
    """The training rows of the examples."""
    texts, labels, owners = [], [], []
    for index, example in enumerate(examples):
        for form in forms_of(example):
            texts.append(form)
            labels.append(example.label == ATTACK)
            owners.append(index)
    owner = np.array(owners, dtype=int)
    weights = np.array([weight_of(e) for e in examples] or [1.0])[owner]
    return Rows(features(texts), np.array(labels, dtype=int), owner, weights)


def concept_matrix(examples: Sequence[Example]) -> Rows:
    """The concept model's rows: the same forms as `matrix`, each a passage's concepts,
    marks and their pairs (memory_plugin.safety.concept_model.features)."""
    rows, cols, labels, owners = [], [], [], []
    for index, example in enumerate(examples):
        for form in forms_of(example):
            found = concept_features(form)
            rows.extend([len(labels)] * len(found))
            cols.extend(found)
            labels.append(example.label == ATTACK)
            owners.append(index)
    x = sparse.csr_matrix(
        (np.ones(len(rows)), (rows, cols)), shape=(len(labels), len(feature_names()))
    )
    owner = np.array(owners, dtype=int)
    weights = np.array([weight_of(e) for e in examples] or [1.0])[owner]
    return Rows(x, np.array(labels, dtype=int), owner, weights)


def train_concepts(examples: list[Example], seed: int, benign_rate: float) -> ConceptModel:
    """The concept model trained on every example, its threshold set out of fold."""
    rows = concept_matrix(examples)
    model = fit(rows, seed, CONCEPT_C)
    cut = threshold(rows, seed, benign_rate, c=CONCEPT_C)
    weights = tuple(float(w) for w in model.coef_[0])
    return ConceptModel(weights, float(model.intercept_[0]), cut)


def save_concepts(path: Path, model: ConceptModel, seed: int) -> None:
    """Write the concept model with its feature names (checked when it is loaded)."""
    np.savez_compressed(
        path,
        weights=np.array(model.weights, dtype=np.float32),
        bias=np.float64(model.bias),
        threshold=np.float64(model.threshold),
        names=np.array(feature_names()),
        seed=np.int64(seed),
    )


def fit(rows: Rows, seed: int, c: float = C) -> LogisticRegression:
    """A class-balanced logistic regression."""
    model = LogisticRegression(C=c, class_weight="balanced", solver="liblinear", random_state=seed)
    return model.fit(rows.x, rows.y, sample_weight=rows.weight)


def threshold(rows: Rows, seed: int, benign_rate: float, folds: int = 5, c: float = C) -> float:
    """The score that at most benign_rate of the benign examples exceed out of fold (an
    example's score is its highest-scoring form's)."""
    scores = np.zeros(len(rows.y))
    splitter = StratifiedGroupKFold(folds, shuffle=True, random_state=seed)
    for train, test in splitter.split(rows.x, rows.y, groups=rows.owner):
        part = rows.rows(train)
        scores[test] = fit(part, seed, c).decision_function(rows.x[test])
    best: dict[int, float] = {}
    for owner, label, score in zip(rows.owner, rows.y, scores, strict=True):
        if not label:
            best[owner] = max(best.get(owner, -np.inf), score)
    return float(np.quantile(list(best.values()), 1 - benign_rate))


def sample(examples: list[Example], size: int, seed: int) -> list[Example]:
    """A seeded sample of size examples holding both labels."""
    rng = random.Random(seed)
    attacks = [e for e in examples if e.label == ATTACK]
    benign = [e for e in examples if e.label != ATTACK]
    half = size // 2
    return rng.sample(attacks, min(half, len(attacks))) + rng.sample(
        benign, min(size - half, len(benign))
    )


def train(
    examples: list[Example], seed: int, benign_rate: float
) -> tuple[np.ndarray, float, float]:
    """The weights, bias and threshold of a model trained on every example."""
    rows = matrix(examples)
    model = fit(rows, seed)
    cut = threshold(rows, seed, benign_rate)
    return shipped_weights(model.coef_[0]), float(model.intercept_[0]), cut


def save(path: Path, weights: np.ndarray, bias: float, cut: float, seed: int) -> None:
    """Write the model as float16 weights, bias and threshold."""
    np.savez_compressed(
        path,
        weights=weights.astype(np.float16),
        bias=np.float64(bias),
        threshold=np.float64(cut),
        seed=np.int64(seed),
    )


def write_provenance(path: Path, examples: list[Example]) -> None:
    """One line per training example: label, family, category and source (gzipped when the
    name ends in .gz)."""
    lines = ["label\tfamily\tcategory\tsource"]
    lines += [f"{e.label}\t{e.family}\t{e.category}\t{e.source}" for e in examples]
    data = ("\n".join(lines) + "\n").encode("utf-8")
    path.write_bytes(gzip.compress(data, mtime=0) if path.suffix == ".gz" else data)


def main(argv: Sequence[str] | None = None) -> int:
    """Train, write the model and the provenance of every example."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--sample", type=int, default=0, help="train on this many examples")
    parser.add_argument("--out", type=Path, default=MODEL_PATH)
    parser.add_argument("--concepts-out", type=Path, default=CONCEPTS_PATH)
    parser.add_argument("--cache", type=Path, default=HERE / ".cache")
    parser.add_argument("--provenance", type=Path, default=HERE / "provenance.tsv.gz")
    parser.add_argument("--benign-rate", type=float, default=BENIGN_RATE)
    parser.add_argument("--no-locomo", action="store_true")
    args = parser.parse_args(argv)
    np.random.seed(args.seed)
    examples = everything(args.seed, args.cache, with_locomo=not args.no_locomo)
    if args.sample:
        examples = sample(examples, args.sample, args.seed)
    examples.sort(key=lambda e: e.source)
    weights, bias, cut = train(examples, args.seed, args.benign_rate)
    save(args.out, weights, bias, cut, args.seed)
    concepts = train_concepts(examples, args.seed, CONCEPT_BENIGN_RATE)
    save_concepts(args.concepts_out, concepts, args.seed)
    write_provenance(args.provenance, examples)
    origins = Counter((e.origin, e.label) for e in examples)
    print(f"wrote {args.out} ({args.out.stat().st_size:,} bytes) from {len(examples):,} examples")
    for (origin, label), count in sorted(origins.items()):
        print(f"  {origin:10} {label:7} {count:6,}")
    print(f"threshold {cut:.3f}, bias {bias:.3f}")
    print(f"concept model: threshold {concepts.threshold:.3f}, bias {concepts.bias:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
