"""The screen's language-independent stage: a linear model over the concepts a passage names
and a few marks of its form, judged the same in every language.

The n-gram classifier (classifier.py) reads the words of the languages it was trained on. This
model reads only what concepts.py finds in a passage (whom it addresses, what authority it
claims, what it asks a model to do: a concept, whether it opens the passage, and every pair of
them present) and marks that
need no language (a web or e-mail address, a tag, a line opened by a label, a quoted string, a
number), so a text in a language it never saw is judged as its English form is. It is shipped
beside the n-gram model (`screen_concepts.npz`, trained by training/screen/train.py); a text is
refused when either model refuses one of its passages.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import combinations
from pathlib import Path

import numpy as np

from memory_plugin.errors import ModelFileError
from memory_plugin.safety.classifier import defect_message, judged, masked, passages, stored_arrays
from memory_plugin.safety.concepts import lexicon, occurrences

MODEL_PATH = Path(__file__).with_name("screen_concepts.npz")
WHAT = "concept model"
MARKS: dict[str, re.Pattern[str]] = {
    "MARK_ADDRESS": re.compile(r"://|\bwww\.|[\w.+\-]@[\w\-]+\."),
    "MARK_TAG": re.compile(r"<\s*/?\s*[^\W\d][\w\-|]{0,30}\s*>|\[\s*/?[^\W\d][\w \-]{1,30}\]"),
    "MARK_LABEL": re.compile(r"(?m)^\W{0,6}[^\W\d][\w \-]{1,24}\s?[:\uff1a]"),
    "MARK_QUOTE": re.compile(
        "[\"'\u00ab\u201c\u201e\u300c\u300e\u2018][^\"'\u00bb\u201d\u201c\u300d\u300f\u2019\n]{1,80}"
        "[\"'\u00bb\u201d\u201c\u300d\u300f\u2019]"
    ),
    "MARK_NUMBER": re.compile(r"\d"),
}
"""Marks of a passage's form that read the same in every language."""
_NEEDS: dict[str, tuple[str, ...]] = {
    "MARK_ADDRESS": ("://", "www.", "@"),
    "MARK_TAG": ("<", "["),
    "MARK_LABEL": (":", "\uff1a"),
    "MARK_QUOTE": tuple("\"'\u00ab\u201c\u201e\u300c\u300e\u2018"),
}
"""What a passage holds wherever a mark's pattern matches it: one of these strings (a quick
test that spares the search in most passages)."""
OPENING = 40
"""How many characters from a passage's first word a concept counts as opening it (a model or a
sender named first, a header's claim): its `@OPENING` feature, besides the concept itself."""


@cache
def feature_names() -> tuple[str, ...]:
    """The model's features: each concept, mark and concept opening a passage, then each pair
    of them."""
    concepts = lexicon().concepts
    single = (*concepts, *MARKS, *(f"{c}@OPENING" for c in concepts))
    return single + tuple(f"{a}+{b}" for a, b in combinations(single, 2))


@cache
def _pair_index() -> dict[tuple[int, int], int]:
    single = 2 * len(lexicon().concepts) + len(MARKS)
    return {pair: single + n for n, pair in enumerate(combinations(range(single), 2))}


@lru_cache(maxsize=1 << 14)
def features(text: str) -> tuple[int, ...]:
    """The features of one passage: its concepts, marks and opening concepts, and every pair of
    them."""
    named = len(lexicon().concepts)
    found_at = occurrences(text)
    found = {concept for _, _, concept in found_at}
    found.update(
        named + n for n, (name, mark) in enumerate(MARKS.items()) if _marked(text, name, mark)
    )
    first = len(text) - len(text.lstrip())
    opening = named + len(MARKS)
    found.update(opening + c for start, _, c in found_at if start - first < OPENING)
    present = sorted(found)
    index = _pair_index()
    return (*present, *(index[pair] for pair in combinations(present, 2)))


def _marked(text: str, name: str, mark: re.Pattern[str]) -> bool:
    needs = _NEEDS.get(name)
    return (needs is None or any(need in text for need in needs)) and mark.search(text) is not None


@dataclass(frozen=True)
class ConceptModel:
    """A weight per feature (`feature_names`), a bias and the score above which a passage is
    refused."""

    weights: tuple[float, ...]
    bias: float
    threshold: float

    def score(self, text: str) -> float:
        """The highest score of the text's passages."""
        padded = f" {text} "
        return max(self._passage(padded[a:b]) for a, b in passages(text))

    def _passage(self, text: str) -> float:
        weights = self.weights
        return sum(weights[i] for i in features(text)) + self.bias

    def refuses(self, text: str) -> bool:
        """Whether a passage of the text scores above the threshold; a text of fewer than
        MIN_WORDS words (URLs and e-mail addresses left out) is not judged."""
        return judged(masked(text)) and self.score(text) > self.threshold

    def refusals(self, forms: Sequence[Sequence[str]]) -> list[bool]:
        """For each text's normalised forms (normalise.variants), whether the model refuses
        its first two (the folded text and its de-homoglyphed form: the forms an attack in any
        language is written in; the others undo encodings the n-gram model is trained on)."""
        return [any(self.refuses(form) for form in dict.fromkeys(found[:2])) for found in forms]


def load(path: Path) -> ConceptModel:
    """The model stored at path, or ModelFileError naming the file and what is wrong."""
    keys = ("weights", "bias", "threshold", "names")
    weights, bias, threshold, stored = stored_arrays(path, keys, WHAT)
    names = tuple(str(name) for name in stored)
    if names != feature_names():
        defect = "was trained on another lexicon (its feature names differ)"
        raise ModelFileError(defect_message(path, defect, WHAT))
    if weights.shape != (len(names),) or not np.isfinite(weights).all():
        raise ModelFileError(defect_message(path, f"holds weights of shape {weights.shape}", WHAT))
    if not (np.isfinite(bias) and np.isfinite(threshold)):
        defect = "has a bias or threshold that is not a number"
        raise ModelFileError(defect_message(path, defect, WHAT))
    return ConceptModel(tuple(map(float, weights)), float(bias), float(threshold))


@cache
def shipped_concepts() -> ConceptModel:
    """The concept model shipped with the package, loaded once."""
    return load(MODEL_PATH)
