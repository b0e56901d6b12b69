"""The screen's learned stage: a linear model over hashed character and word n-grams and the
concepts its words name in any language (concepts.py).

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
from functools import cache, lru_cache
from pathlib import Path
from typing import TypeVar

import numpy as np
import numpy.typing as npt
from numpy.lib.npyio import NpzFile

from memory_plugin.errors import ModelFileError
from memory_plugin.safety.concepts import lexicon, occurrences

MODEL_PATH = Path(__file__).with_name("screen_model.npz")
PASSAGE = 240
CHAR_SIZES = (3, 4, 5)
MIN_WORDS = 4
DIMENSIONS = 2**20
"""How many hash buckets the n-grams fall in: the number of weights a model file holds."""
BATCH_FROM = 1_000
"""Characters of judged text from which `Model.refusals` scores its texts as one batch."""

_P = np.uint64(0x100000001B3)
_P_INVERSE = np.uint64(pow(0x100000001B3, -1, 2**64))
_SALT_WORD = np.uint64(0x9E3779B97F4A7C15)
_SALT_PAIR = np.uint64(0xC2B2AE3D27D4EB4F)
_SALT_CONCEPT = np.uint64(0x165667B19E3779F9)
_WORD = re.compile(r"\w+")
_URL = re.compile(r"\b(?:[a-z][a-z0-9+.\-]{1,15}://|www\.)[^\s<>\"'`]{1,2000}", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+\-]{1,64}@[\w\-]{1,63}(?:\.[\w\-]{1,63}){1,8}")
_DIGITS = re.compile(r"\d+")
# A sentence's or a line's end; the lookahead (any branch's first character) lets `re` skip
# the other characters without trying each branch at each of them.
_BREAK = re.compile(
    r"(?=[.!?;:\u3002\uff01\uff1f\uff1b\n])(?:[.!?;:]+(?=\s)|[\u3002\uff01\uff1f\uff1b]+|\n)"
)
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f]")

T = TypeVar("T", bound=np.generic)
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


_ASCII_WORD = np.array([chr(code).isalnum() or code == 0x5F for code in range(128)])


def _words(codes: U64) -> I64:
    """Where the runs of word characters of a text (its code points) start and end: what
    `_WORD.finditer` finds (`\\w` is a letter, digit or number character, or `_`), found with
    numpy rather than one match object per word."""
    word = np.zeros(len(codes), dtype=bool)
    small = codes < 128
    word[small] = _ASCII_WORD[codes[small].astype(np.int64)]
    if not small.all():
        large = codes[~small]
        distinct = _distinct_sorted(large)
        wordlike = np.array([chr(int(c)).isalnum() or c == 0x5F for c in distinct], dtype=bool)
        word[~small] = wordlike[np.searchsorted(distinct, large)]
    edges = np.flatnonzero(np.diff(np.concatenate(([False], word, [False])).astype(np.int8)))
    return edges.reshape(-1, 2).astype(np.int64)


def _distinct_sorted(values: npt.NDArray[T]) -> npt.NDArray[T]:
    """np.unique's answer (the distinct values, ascending), by a sort, much faster than
    np.unique's hashing on these arrays."""
    ordered = np.sort(values)
    if len(ordered) < 2:
        return ordered
    keep = np.empty(len(ordered), dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


def _divmod(values: I64, divisor: int) -> tuple[I64, I64]:
    """`values // divisor` and `values % divisor` of non-negative values, by a shift and a mask
    where the divisor is a power of two."""
    if divisor & (divisor - 1) == 0:
        return values >> (divisor.bit_length() - 1), values & (divisor - 1)
    return values // divisor, values % divisor


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


@lru_cache(maxsize=32)
def masked(text: str) -> str:
    """The text without its URLs and e-mail addresses and with every number written 0, so the
    model judges what is said around them, not which host, address or number it is (the last
    few are kept: both models judge a note's first forms)."""
    if "://" in text or "www." in text.lower():  # what a URL match holds: a quick skip
        text = _URL.sub(" ", text)
    if "@" in text:
        text = _EMAIL.sub(" ", text)
    return _DIGITS.sub("0", text)


@dataclass(frozen=True)
class Grams:
    """A text's n-gram features: each one's bucket and the character where it starts."""

    buckets: I64
    starts: I64


@cache
def _concept_hashes() -> U64:
    """Each concept's feature hash, from its name (so the lexicon may grow)."""
    hashes = []
    for name in lexicon().concepts:
        value = 0xCBF29CE484222325
        for byte in name.encode("utf-8"):
            value = ((value ^ byte) * 0x100000001B3) % 2**64
        hashes.append(value)
    return _mix(np.array(hashes, dtype=np.uint64), _SALT_CONCEPT)


def concept_buckets(dimensions: int) -> I64:
    """The buckets the concepts fall in (training scales their features)."""
    return (_concept_hashes() % np.uint64(dimensions)).astype(np.int64)


def grams(text: str, dimensions: int) -> Grams:
    """The hashed character 3-5-grams, word uni- and bigrams and concepts of a normalised
    text."""
    buckets, starts, _ = _hashed(text, dimensions)
    return Grams(buckets, starts)


def _hashed(text: str, dimensions: int) -> tuple[I64, I64, I64]:
    """`grams`, with where each n-gram ends (in the padded text)."""
    padded = f" {text} "
    codes = np.frombuffer(padded.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64) + 1
    n = len(codes)
    powers, inverse = _powers(n + 1)
    with np.errstate(over="ignore"):
        prefix = np.zeros(n + 1, dtype=np.uint64)
        prefix[1:] = np.cumsum(codes * inverse[:n]) * powers[:n]

        def spans(starts: I64, ends: I64) -> U64:
            hashed: U64 = prefix[ends] - prefix[starts] * powers[ends - starts]
            return hashed

        buckets: list[U64] = []
        starts_all: list[I64] = []
        ends_all: list[I64] = []
        for size in CHAR_SIZES:
            if n < size:
                continue
            starts = np.arange(n - size + 1, dtype=np.int64)
            buckets.append(_mix(spans(starts, starts + size), np.uint64(size)))
            starts_all.append(starts)
            ends_all.append(starts + size)
        bounds = _words(codes[1:-1] - np.uint64(1)) + 1
        words = len(bounds)
        if words:
            buckets.append(_mix(spans(bounds[:, 0], bounds[:, 1]), _SALT_WORD))
            starts_all.append(bounds[:, 0])
            ends_all.append(bounds[:, 1])
            if words > 1:
                pairs = spans(bounds[:-1, 0], bounds[1:, 1])
                buckets.append(_mix(pairs, _SALT_PAIR))
                starts_all.append(bounds[:-1, 0])
                ends_all.append(bounds[1:, 1])
            found = occurrences(text)
            if found:
                named = np.array(found, dtype=np.int64)
                buckets.append(_concept_hashes()[named[:, 2]])
                starts_all.append(named[:, 0] + 1)
                ends_all.append(named[:, 1] + 1)
    if not buckets:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty, empty
    hashed = np.concatenate(buckets)
    if dimensions & (dimensions - 1) == 0:  # a power of two: a mask, several times faster
        hashed &= np.uint64(dimensions - 1)
    else:
        hashed %= np.uint64(dimensions)
    return hashed.astype(np.int64), np.concatenate(starts_all), np.concatenate(ends_all)


_ONE = np.ones(1, dtype=np.uint64)
_POWERS: list[tuple[U64, U64]] = [(_ONE, _ONE)]


def _powers(count: int) -> tuple[U64, U64]:
    """The first `count` (at least) powers of the hash's prime and of its inverse mod 2**64,
    computed once for the longest text so far (each caller keeps the arrays it read or made,
    whatever another thread stores meanwhile)."""
    found = _POWERS[0]
    if len(found[0]) < count:
        size = max(count, 4096, 2 * len(found[0]))
        with np.errstate(over="ignore"):
            powers = np.cumprod(np.full(size, _P, dtype=np.uint64))
            inverse = np.cumprod(np.full(size, _P_INVERSE, dtype=np.uint64))
        found = (np.concatenate((_ONE, powers[:-1])), np.concatenate((_ONE, inverse[:-1])))
        _POWERS[0] = found
    return found


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
        unique = _distinct_sorted(buckets)
        if not len(unique):
            return self.bias
        return float(self.weights[unique].sum() / np.sqrt(len(unique)) + self.bias)

    def refuses(self, text: str) -> bool:
        """Whether the text scores above the model's threshold; a text of fewer than
        MIN_WORDS words (URLs and e-mail addresses left out) is not judged."""
        plain = masked(text)
        if not judged(plain):
            return False
        return self._over(grams(plain, self.dimensions), passages(plain))

    def _over(self, found: Grams, spans: Sequence[tuple[int, int]]) -> bool:
        return self.score_grams(found, spans) > self.threshold

    def refusals(self, texts: Sequence[str]) -> list[bool]:
        """`refuses` of each text, the same verdicts, with the texts' n-grams hashed and their
        passages scored together in a few numpy calls rather than a dozen per text. Scores are
        summed in float64 here; a passage whose score lies within a bound of the float32
        summation error of the threshold is judged by `refuses` itself, so no verdict moves."""
        masks = [masked(text) for text in texts]
        distinct = list(dict.fromkeys(masks))
        verdict = dict(zip(distinct, self._masked_refusals(distinct), strict=True))
        return [verdict[text] for text in masks]

    def _masked_refusals(self, plain: list[str]) -> list[bool]:
        """`refusals` of distinct masked texts (masking a masked text changes nothing)."""
        chosen = [i for i, text in enumerate(plain) if judged(text)]
        verdicts = [False] * len(plain)
        if not chosen or sum(len(plain[i]) for i in chosen) < BATCH_FROM:
            for i in chosen:  # a few short texts: a batch's fixed cost is more than it saves
                verdicts[i] = self._over(grams(plain[i], self.dimensions), passages(plain[i]))
            return verdicts
        scores, slack, owners = self._scores([plain[i] for i in chosen])
        above = scores - slack > self.threshold
        unsure = np.abs(scores - self.threshold) <= slack
        refused = np.bincount(owners[above], minlength=len(chosen)) > 0
        doubtful = np.bincount(owners[unsure], minlength=len(chosen)) > 0
        for number, i in enumerate(chosen):
            if refused[number]:
                verdicts[i] = True
            elif doubtful[number]:
                verdicts[i] = self.refuses(plain[i])
        return verdicts

    def _scores(self, texts: Sequence[str]) -> tuple[F64, F64, I64]:
        """The score of every passage of the masked texts (float64 sums), a bound on its
        float32 summation error, and the number of the text it is a passage of; a passage
        several texts share is hashed and scored once (see `_distinct_passages`)."""
        chunks, found, owner, shared = _distinct_passages(texts)
        joined = "".join(f" {chunk} " for chunk in chunks)
        all_buckets, all_starts, all_ends = _hashed(joined[1:-1], self.dimensions)  # re-padded
        offsets = np.zeros(len(chunks) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(chunk) + 2 for chunk in chunks])
        # An n-gram belongs to a chunk when it ends inside the padded chunk it starts in (words
        # cannot cross the padding; character grams and word pairs can, and are dropped).
        region = np.searchsorted(offsets, all_starts, side="right") - 1
        keep = all_ends <= offsets[region + 1]
        starts, buckets = all_starts[keep], all_buckets[keep]
        order = np.argsort(starts, kind="stable")
        starts, buckets = starts[order], buckets[order]
        spans = np.array(found, dtype=np.int64).reshape(-1, 3)
        spans = spans[:, 1:] + offsets[spans[:, :1]]  # (start, end) in the joined chunks
        low = np.searchsorted(starts, spans[:, 0])
        high = np.searchsorted(starts, spans[:, 1])
        lengths = high - low
        segment = np.repeat(np.arange(len(spans), dtype=np.int64), lengths)
        first = np.cumsum(lengths) - lengths
        index = np.arange(int(lengths.sum()), dtype=np.int64) - np.repeat(first - low, lengths)
        keys = _distinct_sorted(segment * self.dimensions + buckets[index])
        which, bucket = _divmod(keys, self.dimensions)
        weights = self.weights[bucket].astype(np.float64)
        counts = np.bincount(which, minlength=len(spans)).astype(np.float64)
        sums = np.bincount(which, weights=weights, minlength=len(spans))
        sizes_abs = np.bincount(which, weights=np.abs(weights), minlength=len(spans))
        root = np.sqrt(np.maximum(counts, 1.0))
        scores = sums / root + self.bias
        slack = (1e-5 * sizes_abs + 1e-6) / root + 1e-9 * (abs(self.bias) + 1.0)
        passage = np.array(shared, dtype=np.int64)
        return scores[passage], slack[passage], np.array(owner, dtype=np.int64)


def _distinct_passages(
    texts: Sequence[str],
) -> tuple[list[str], list[tuple[int, int, int]], list[int], list[int]]:
    """The texts' passages, each distinct one once: chunks of the texts to hash, each distinct
    passage as (chunk, start, end) in its padded chunk, and each text's passage as its text's
    number (owner) and its distinct passage's (shared). Passages of the forms of one note are
    often the same words; a passage's n-grams are those of its characters, the one before it
    (where a word starts) and the next three and up to the end of the next word (where its
    last character grams and word pair end), so passages alike in those are scored once."""
    chunks: list[str] = []
    bounds: list[tuple[int, int, int]] = []
    owner: list[int] = []
    shared: list[int] = []
    known: dict[tuple[str, int, int], int] = {}
    for number, text in enumerate(texts):
        size = len(text)
        run: tuple[int, int] | None = None  # the chunk being built: its start and end in text
        pending: list[tuple[int, int]] = []  # its passages, padded offsets in the text
        for a, b in passages(text):
            word = _WORD_START.search(text, b - 1)  # the first word starting at or after b
            first, last = max(a - 2, 0), min(max(b + 3, word.end() if word else size), size)
            key = (text[first:last], a - first, b - first)
            seen = known.get(key)
            owner.append(number)
            if seen is not None:
                shared.append(seen)
                if run is not None:
                    _close(text, run, pending, chunks, bounds)
                    run, pending = None, []
                continue
            known[key] = len(bounds) + len(pending)
            shared.append(known[key])
            run = (first, last) if run is None else (run[0], last)
            pending.append((a, b))
        if run is not None:
            _close(text, run, pending, chunks, bounds)
    return chunks, bounds, owner, shared


_WORD_START = re.compile(r"(?<!\w)\w+")


def _close(
    text: str,
    run: tuple[int, int],
    pending: list[tuple[int, int]],
    chunks: list[str],
    bounds: list[tuple[int, int, int]],
) -> None:
    """Add the chunk text[run] and its passages (padded offsets in the text, made offsets in
    the padded chunk)."""
    first, last = run
    chunks.append(text[first:last])
    bounds.extend((len(chunks) - 1, a - first, b - first) for a, b in pending)


def load(path: Path) -> Model:
    """The model stored at path, or ModelFileError naming the file and what is wrong with it."""
    weights, bias, threshold = stored_arrays(path)
    defect = _defect(weights, bias, threshold)
    if defect is not None:
        raise ModelFileError(defect_message(path, defect))
    return Model(weights.astype(np.float32), float(bias), float(threshold))


def _defect(weights: npt.NDArray[np.generic], *scalars: npt.NDArray[np.generic]) -> str | None:
    """Why the stored weights, bias and threshold are no working model, else None."""
    if weights.ndim != 1 or weights.dtype.kind != "f":
        return f"holds {weights.dtype} weights of shape {weights.shape}, not a list of floats"
    if len(weights) != DIMENSIONS:
        return f"has {len(weights)} weights, not {DIMENSIONS} (one per hash bucket)"
    with np.errstate(over="ignore"):  # a weight beyond float32 becomes inf, refused next
        used = weights.astype(np.float32)
    if not np.isfinite(used).all():
        return "holds weights that are not finite 32-bit floats"
    for name, value in zip(("bias", "threshold"), scalars, strict=True):
        if value.ndim != 0 or value.dtype.kind not in "fiu":
            return f"has {value.dtype} of shape {value.shape} as its {name}, not a number"
        if not np.isfinite(value):
            return f"has {value} as its {name}, not a finite number"
    low, high = _score_range(used, float(scalars[0]))
    threshold = float(scalars[1])
    if threshold >= high:
        return f"has threshold {threshold:.4g}, which no text scores above (at most {high:.4g})"
    if threshold < low:
        return f"has threshold {threshold:.4g}, which every text scores above (at least {low:.4g})"
    return None


def _score_range(weights: npt.NDArray[np.float32], bias: float) -> tuple[float, float]:
    """The lowest and the highest score a passage with n-grams can get (`Model.score_grams`):
    the sum of its k lowest or highest weights over the square root of k, plus the bias."""
    ordered = np.sort(weights)
    root = np.sqrt(np.arange(1, len(ordered) + 1, dtype=np.float64))
    low = np.cumsum(ordered, dtype=np.float64) / root
    high = np.cumsum(ordered[::-1], dtype=np.float64) / root
    return float(low.min()) + bias, float(high.max()) + bias


_KEYS = ("weights", "bias", "threshold")
CLASSIFIER = "classifier model"


def stored_arrays(
    path: Path, keys: tuple[str, ...] = _KEYS, what: str = CLASSIFIER
) -> tuple[npt.NDArray[np.generic], ...]:
    """The arrays `keys` of the screen's model file at path (`what` it is, for the error), as
    they are in the file, or ModelFileError naming the file and what is wrong with it."""
    try:
        stored = np.load(path, allow_pickle=False)
    except FileNotFoundError as exc:
        raise ModelFileError(defect_message(path, "is missing", what)) from exc
    except Exception as exc:  # a damaged archive fails in zipfile, zlib, numpy's header parser
        raise ModelFileError(defect_message(path, f"is unreadable ({_named(exc)})", what)) from exc
    if not isinstance(stored, NpzFile):
        raise ModelFileError(defect_message(path, "is not an .npz archive", what))
    with stored:
        missing = [key for key in keys if key not in stored.files]
        if missing:
            raise ModelFileError(defect_message(path, f"has no {', '.join(missing)}", what))
        try:
            return tuple(stored[key] for key in keys)
        except Exception as exc:  # as above, for the damage found when an array is read
            raise ModelFileError(defect_message(path, f"is damaged ({_named(exc)})", what)) from exc


def _named(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__


def _check(path: Path, holds: bool, defect: str) -> None:
    if not holds:
        raise ModelFileError(defect_message(path, defect))


def defect_message(path: Path, defect: str, what: str = CLASSIFIER) -> str:
    """The error for a model file of the screen that cannot be used: which, and why."""
    return (
        f"the screen's {what} {path} {defect}; the screen cannot run without it: "
        "reinstall memory-plugin or rebuild it with python training/screen/train.py"
    )


@cache
def shipped() -> Model:
    """The model shipped with the package, loaded once."""
    return load(MODEL_PATH)
