"""The screen's learned stage: a linear model over hashed character and word n-grams.

Whether a text reads as an instruction to a model (an override, a prompt extraction, a persona
jailbreak, a task for the model) rather than a memory. The model is a weight per hashed
n-gram, shipped in the package (`screen_model.npz`, trained by training/screen/train.py);
inference is numpy only. A text of fewer than MIN_WORDS words is not judged. A long text is
judged passage by passage (sentences and lines), so an instruction buried in a long note is
judged on its own words, not diluted by the rest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memory_plugin.errors import MemoryPluginError

MODEL_PATH = Path(__file__).with_name("screen_model.npz")
PASSAGE = 240
CHAR_SIZES = (3, 4, 5)
MIN_WORDS = 4

_P = np.uint64(0x100000001B3)
_P_INVERSE = np.uint64(pow(0x100000001B3, -1, 2**64))
_SALT_WORD = np.uint64(0x9E3779B97F4A7C15)
_SALT_PAIR = np.uint64(0xC2B2AE3D27D4EB4F)
_WORD = re.compile(r"\w+")
_URL = re.compile(r"\b(?:[a-z][a-z0-9+.\-]{1,15}://|www\.)[^\s<>\"'`]{1,2000}", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+\-]{1,64}@[\w\-]{1,63}(?:\.[\w\-]{1,63}){1,8}")
_DIGITS = re.compile(r"\d+")
_BREAK = re.compile(r"[.!?;:]+(?=\s)|[\u3002\uff01\uff1f\uff1b]+|\n")
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f]")

U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]


class ModelFileError(MemoryPluginError):
    """The classifier's model file is missing or unreadable."""


def _mix(values: U64, salt: np.uint64) -> U64:
    """splitmix64's finaliser: spread a polynomial hash over every bit."""
    with np.errstate(over="ignore"):
        h = values ^ salt
        h = (h ^ (h >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        h = (h ^ (h >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        return h ^ (h >> np.uint64(31))


def judged(text: str) -> bool:
    """Whether the text says enough to judge: MIN_WORDS words, a word being a run of letters
    or digits, or two characters of a script written without spaces (Chinese, Japanese)."""
    head = text[:400]
    return len(_WORD.findall(head)) + len(_UNSPACED.findall(head)) // 2 >= MIN_WORDS


def passages(text: str) -> list[tuple[int, int]]:
    """Where the passages the model judges start and end: the whole text when it is at most
    PASSAGE characters, else its sentences and lines, very short ones joined with the next and long
    ones cut, each about PASSAGE characters or less (offsets count the text's padding)."""
    if len(text) <= PASSAGE:
        return [(0, len(text) + 2)]
    found: list[tuple[int, int]] = []
    start = 0
    for end in [m.end() for m in _BREAK.finditer(text)] + [len(text)]:
        while end - start > PASSAGE:
            found.append((start, start + PASSAGE))
            start += PASSAGE // 2
        if end - start >= PASSAGE // 8 or end == len(text):
            found.append((start, end + 2))
            start = end
    return found or [(0, len(text) + 2)]


def masked(text: str) -> str:
    """The text without its URLs and e-mail addresses and with every number written 0, so the
    model judges what is said around them, not which host, address or number it is."""
    return _DIGITS.sub("0", _EMAIL.sub(" ", _URL.sub(" ", text)))


@dataclass(frozen=True)
class Grams:
    """A text's n-gram features: each one's bucket and the character where it starts."""

    buckets: I64
    starts: I64


def grams(text: str, dimensions: int) -> Grams:
    """The hashed character 3-5-grams and word uni- and bigrams of a normalised text."""
    padded = f" {text} "
    codes = np.frombuffer(padded.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64) + 1
    n = len(codes)
    with np.errstate(over="ignore"):
        powers = np.cumprod(np.full(n + 1, _P, dtype=np.uint64))
        powers = np.concatenate(([np.uint64(1)], powers[:-1]))
        inverse = np.cumprod(np.full(n, _P_INVERSE, dtype=np.uint64))
        inverse = np.concatenate(([np.uint64(1)], inverse[:-1]))
        prefix = np.zeros(n + 1, dtype=np.uint64)
        prefix[1:] = np.cumsum(codes * inverse) * powers[:n]

        def spans(starts: I64, ends: I64) -> U64:
            hashed: U64 = prefix[ends] - prefix[starts] * powers[ends - starts]
            return hashed

        buckets: list[U64] = []
        starts_all: list[I64] = []
        for size in CHAR_SIZES:
            if n < size:
                continue
            starts = np.arange(n - size + 1, dtype=np.int64)
            buckets.append(_mix(spans(starts, starts + size), np.uint64(size)))
            starts_all.append(starts)
        words = [(m.start() + 1, m.end() + 1) for m in _WORD.finditer(text)]
        if words:
            bounds = np.array(words, dtype=np.int64)
            buckets.append(_mix(spans(bounds[:, 0], bounds[:, 1]), _SALT_WORD))
            starts_all.append(bounds[:, 0])
            if len(words) > 1:
                pairs = spans(bounds[:-1, 0], bounds[1:, 1])
                buckets.append(_mix(pairs, _SALT_PAIR))
                starts_all.append(bounds[:-1, 0])
    if not buckets:
        empty = np.zeros(0, dtype=np.int64)
        return Grams(empty, empty)
    hashed = np.concatenate(buckets) % np.uint64(dimensions)
    return Grams(hashed.astype(np.int64), np.concatenate(starts_all))


@dataclass(frozen=True)
class Model:
    """A weight per bucket, a bias and the score above which a text is refused."""

    weights: npt.NDArray[np.float32]
    bias: float
    threshold: float

    @property
    def dimensions(self) -> int:
        """How many hash buckets the model has."""
        return len(self.weights)

    def score(self, text: str) -> float:
        """The model's logit that the text is an instruction to a model: its highest over the
        text's passages (see `passages`)."""
        plain = masked(text)
        return self.score_grams(grams(plain, self.dimensions), passages(plain))

    def score_grams(self, found: Grams, spans: Sequence[tuple[int, int]]) -> float:
        """The highest score of the passages (start, end) of a text from its n-grams: a
        passage's mean weight of its distinct n-grams times the square root of their number,
        plus the bias."""
        if len(spans) == 1:
            return self._distinct(found.buckets)
        order = np.argsort(found.starts, kind="stable")
        starts, buckets = found.starts[order], found.buckets[order]
        bounds = np.array(spans, dtype=np.int64)
        low = np.searchsorted(starts, bounds[:, 0])
        high = np.searchsorted(starts, bounds[:, 1])
        return max(self._distinct(buckets[a:b]) for a, b in zip(low, high, strict=True))

    def _distinct(self, buckets: I64) -> float:
        unique = np.unique(buckets)
        if not len(unique):
            return self.bias
        return float(self.weights[unique].sum() / np.sqrt(len(unique)) + self.bias)

    def refuses(self, text: str) -> bool:
        """Whether the text scores above the model's threshold; a text of fewer than
        MIN_WORDS words (URLs and e-mail addresses left out) is not judged."""
        plain = masked(text)
        if not judged(plain):
            return False
        return self.score_grams(grams(plain, self.dimensions), passages(plain)) > self.threshold


def load(path: Path) -> Model:
    """The model stored at path, or ModelFileError saying what is wrong with the file."""
    try:
        with np.load(path) as stored:
            weights = stored["weights"].astype(np.float32)
            bias = float(stored["bias"])
            threshold = float(stored["threshold"])
    except FileNotFoundError as exc:
        raise ModelFileError(
            f"the screen's classifier model {path} is missing; reinstall memory-plugin or "
            "rebuild it with python training/screen/train.py"
        ) from exc
    except (OSError, ValueError, KeyError, EOFError) as exc:
        raise ModelFileError(
            f"the screen's classifier model {path} is unreadable ({exc}); reinstall "
            "memory-plugin or rebuild it with python training/screen/train.py"
        ) from exc
    if weights.ndim != 1 or not len(weights) or not np.isfinite(weights).all():
        raise ModelFileError(f"the screen's classifier model {path} holds no usable weights")
    return Model(weights, bias, threshold)


@cache
def shipped() -> Model:
    """The model shipped with the package, loaded once."""
    return load(MODEL_PATH)
