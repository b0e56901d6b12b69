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
from itertools import chain
from pathlib import Path
from typing import TypeVar, cast

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
_ENOUGH_WORDS = re.compile(r"\w+\W+" * (MIN_WORDS - 1) + r"\w")
_URL = re.compile(r"\b(?:[a-z][a-z0-9+.\-]{1,15}://|www\.)[^\s<>\"'`]{1,2000}", re.IGNORECASE)
_EMAIL = re.compile(r"[\w.+\-]{1,64}@[\w\-]{1,63}(?:\.[\w\-]{1,63}){1,8}")
_WWW = re.compile(r"www\.", re.IGNORECASE)
_AT_DOMAIN = re.compile(r"@[\w\-]{1,63}\.[\w\-]")
_DIGITS = re.compile(r"\d+")
_ZERO = bytes.maketrans(b"123456789", b"000000000")
_ZEROS = re.compile(rb"00+")
_FULL_STOPS = "\u3002\uff01\uff1f\uff1b"
_UNSPACED = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\u0e00-\u0e7f]")

T = TypeVar("T", bound=np.generic)
U64 = npt.NDArray[np.uint64]
I64 = npt.NDArray[np.int64]
F64 = npt.NDArray[np.float64]


_ASCII_WORD = np.array([chr(code).isalnum() or code == 0x5F for code in range(128)])


def _words(codes: npt.NDArray[np.uint32]) -> I64:
    """Where the runs of word characters of a text (its code points) start and end: what
    `_WORD.finditer` finds (`\\w` is a letter, digit or number character, or `_`), found with
    numpy rather than one match object per word."""
    word = np.zeros(len(codes) + 2, dtype=bool)  # padded with a non-word character each side
    inner = word[1:-1]
    np.take(_ASCII_WORD, np.minimum(codes, 127), out=inner)  # 127 (DEL) is no word character
    large = np.flatnonzero(codes >= 128)
    if len(large):
        found = codes[large]
        distinct = _distinct_sorted(found)
        wordlike = np.array([chr(code).isalnum() for code in distinct.tolist()], dtype=bool)
        inner[large] = wordlike[np.searchsorted(distinct, found)]
    return np.flatnonzero(word[1:] != word[:-1]).reshape(-1, 2)


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
    mixed = values ^ salt
    _mix_salted(mixed)
    return mixed


def _mix_salted(hashed: U64) -> None:
    """`_mix` in place, of values already XORed with their salts."""
    shifted = np.empty_like(hashed)
    for shift, factor in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        np.right_shift(hashed, np.uint64(shift), out=shifted)
        hashed ^= shifted
        hashed *= np.uint64(factor)
    np.right_shift(hashed, np.uint64(31), out=shifted)
    hashed ^= shifted


def judged(text: str) -> bool:
    """Whether the text says enough to judge: MIN_WORDS words, a word being a run of letters
    or digits, or two characters of a script written without spaces (Chinese, Japanese)."""
    head = text[:400]
    if _ENOUGH_WORDS.search(head):  # MIN_WORDS words, whatever else the head holds
        return True
    return len(_WORD.findall(head)) + len(_UNSPACED.findall(head)) // 2 >= MIN_WORDS


def passages(text: str) -> list[tuple[int, int]]:
    """Where the passages the model judges start and end: the whole text when it is at most
    PASSAGE characters, else its sentences and lines, very short ones joined with the next and long
    ones cut, each about PASSAGE characters or less (offsets count the text's padding)."""
    if len(text) <= PASSAGE:
        return [(0, len(text) + 2)]
    found: list[tuple[int, int]] = []
    start = 0
    for end in [*_break_ends(text), len(text)]:
        while end - start > PASSAGE:
            found.append((start, start + PASSAGE))
            start += PASSAGE // 2
        if end - start >= PASSAGE // 8 or end == len(text):
            found.append((start, end + 2))
            start = end
    return found or [(0, len(text) + 2)]


def _break_ends(text: str) -> list[int]:
    """Where the text's sentences and lines end, ascending: after a run of `.!?;:` that
    whitespace follows, a run of full-width stops, or a newline (the ends of the matches of
    `[.!?;:]+(?=\\s)|[\\u3002\\uff01\\uff1f\\uff1b]+|\\n`), found with `str.find`, several
    times faster than one match object per break."""
    found: list[int] = []
    add = found.append
    find = text.find
    for mark in ".!?;:":
        at = find(mark)
        while at != -1:
            if text[at + 1 : at + 2].isspace():
                add(at + 1)
            at = find(mark, at + 1)
    at = find("\n")
    while at != -1:
        add(at + 1)
        at = find("\n", at + 1)
    if not text.isascii():
        for mark in _FULL_STOPS:
            at = find(mark)
            while at != -1:
                if at + 1 == len(text) or text[at + 1] not in _FULL_STOPS:
                    add(at + 1)
                at = find(mark, at + 1)
    found.sort()
    return found


@lru_cache(maxsize=32)
def masked(text: str) -> str:
    """The text without its URLs and e-mail addresses and with every number written 0, so the
    model judges what is said around them, not which host, address or number it is (the last
    few are kept: both models judge a note's first forms)."""
    if "://" in text or "www." in text.lower():  # what a URL match holds: a quick skip
        text = _without_urls(text)
    if "@" in text:
        text = _without_emails(text)
    if text.isascii():  # `\d` is 0-9: every digit made 0, then each run of 0s one 0
        return _ZEROS.sub(b"0", text.encode("ascii").translate(_ZERO)).decode("ascii")
    return _DIGITS.sub("0", text)


def _without_urls(text: str) -> str:
    """`_URL.sub(" ", text)`, with the pattern tried only where a URL can start: up to 16
    characters before a `://` or at a `www.`."""
    found: set[int] = set()
    at = text.find("://")
    while at != -1:
        found.update(range(max(at - 16, 0), at - 1))
        at = text.find("://", at + 1)
    found.update(hit.start() for hit in _WWW.finditer(text))
    pieces: list[str] = []
    end = 0
    for start in sorted(found):
        if start >= end:
            hit = _URL.match(text, start)
            if hit is not None:
                pieces += (text[end:start], " ")
                end = hit.end()
    return "".join(pieces) + text[end:] if pieces else text


def _without_emails(text: str) -> str:
    """`_EMAIL.sub(" ", text)`, the pattern tried from 64 characters before the first `@` that
    a domain's first dot follows (where the first address can start)."""
    hit = _AT_DOMAIN.search(text)
    if hit is None:
        return text
    start = max(hit.start() - 64, 0)
    return text[:start] + _EMAIL.sub(" ", text[start:])


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
    buckets, bounds, named = _features(text, dimensions)
    n = len(text) + 2
    sizes = [size for size in CHAR_SIZES if n >= size]
    starts = [np.arange(n - size + 1, dtype=np.int64) for size in sizes]
    ends = [start + size for start, size in zip(starts, sizes, strict=True)]
    starts += [bounds[:, 0], bounds[:-1, 0], named[:, 0]]
    ends += [bounds[:, 1], bounds[1:, 1], named[:, 1]]
    return np.concatenate((buckets, named[:, 2])), np.concatenate(starts), np.concatenate(ends)


def _features(text: str, dimensions: int) -> tuple[I64, I64, I64]:
    """The buckets of a text's character 3-5-grams (of each size in turn, from every start in
    the padded text), words and word pairs; its words' (start, end) and its concepts' (start,
    end, bucket), in the padded text."""
    padded = f" {text} "
    points = np.frombuffer(padded.encode("utf-32-le"), dtype=np.uint32)
    codes = points.astype(np.uint64) + 1
    n = len(codes)
    powers, inverse = _powers(n + 1)
    bounds = _words(points[1:-1]) + 1
    words = len(bounds)
    sizes = [size for size in CHAR_SIZES if n >= size]
    hashed = np.empty(sum(n - size + 1 for size in sizes) + max(2 * words - 1, 0), np.uint64)
    with np.errstate(over="ignore"):
        prefix = np.zeros(n + 1, dtype=np.uint64)
        prefix[1:] = np.cumsum(codes * inverse[:n]) * powers[:n]
        at = 0
        for size in sizes:
            part = hashed[at : at + n - size + 1]
            np.multiply(prefix[: n - size + 1], powers[size], out=part)
            np.subtract(prefix[size:], part, out=part)
            part ^= np.uint64(size)
            at += len(part)
        if words:
            starts, ends = bounds[:, 0], bounds[:, 1]
            hashed[at : at + words] = prefix[ends] - prefix[starts] * powers[ends - starts]
            hashed[at : at + words] ^= _SALT_WORD
            pairs = hashed[at + words :]
            pairs[:] = prefix[ends[1:]] - prefix[starts[:-1]] * powers[ends[1:] - starts[:-1]]
            pairs ^= _SALT_PAIR
        _mix_salted(hashed)
    found = occurrences(text) if words else []
    named = np.fromiter(chain.from_iterable(found), np.int64, 3 * len(found)).reshape(-1, 3)
    named[:, :2] += 1
    concepts = _concept_hashes()[named[:, 2]]
    if dimensions & (dimensions - 1) == 0:  # a power of two: a mask, several times faster
        hashed &= np.uint64(dimensions - 1)
        concepts &= np.uint64(dimensions - 1)
    else:
        hashed %= np.uint64(dimensions)
        concepts %= np.uint64(dimensions)
    named[:, 2] = concepts
    return hashed.view(np.int64), bounds, named


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
        buckets, bounds, named = _features(joined[1:-1], self.dimensions)  # re-padded
        offsets = np.zeros(len(chunks) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(chunk) + 2 for chunk in chunks])
        spans = np.fromiter(chain.from_iterable(found), np.int64, 3 * len(found)).reshape(-1, 3)
        ranges = np.column_stack((spans[:, 1:] + offsets[spans[:, :1]], offsets[spans[:, 0] + 1]))
        source, firsts, lengths = _runs(buckets, bounds, named, offsets, ranges)
        segment = np.tile(np.arange(len(spans), dtype=np.int64), len(firsts) // len(spans))
        first = np.cumsum(lengths) - lengths
        index = np.arange(int(lengths.sum()), dtype=np.int64) + np.repeat(firsts - first, lengths)
        keyed = np.repeat(segment * self.dimensions, lengths) + source[index]
        if len(spans) * self.dimensions <= np.iinfo(np.int32).max:  # sorts twice as fast
            keys = _distinct_sorted(keyed.astype(np.int32))
        else:
            keys = _distinct_sorted(keyed)
        which, bucket = _divmod(keys, self.dimensions)
        counts, sums, sizes_abs = _sums(which, self.weights[bucket], len(spans))
        root = np.sqrt(np.maximum(counts, 1.0))
        scores = sums / root + self.bias
        slack = (1e-5 * sizes_abs + 1e-6) / root + 1e-9 * (abs(self.bias) + 1.0)
        passage = np.array(shared, dtype=np.int64)
        return scores[passage], slack[passage], np.array(owner, dtype=np.int64)


def _sums(
    which: npt.NDArray[np.signedinteger], weights: npt.NDArray[np.float32], bins: int
) -> tuple[F64, F64, F64]:
    """How many weights each bin holds (`which`: their bins, ascending), their sum and the sum of
    their absolute values, added in float64 in order, as bincount adds: one bincount of the
    weights interleaved with their absolute values, so the two sums of a bin, each a chain of
    dependent additions, run side by side."""
    index = np.empty(2 * len(which), dtype=np.intp)
    index[0::2] = which
    np.add(which, bins, out=index[1::2])
    values = np.empty(2 * len(weights), dtype=np.float64)
    values[0::2] = weights
    np.abs(weights, out=values[1::2])
    both = cast(F64, np.bincount(index, weights=values, minlength=2 * bins))
    counts = np.diff(np.searchsorted(which, np.arange(bins + 1))).astype(np.float64)
    return counts, both[:bins], both[bins:]


def _runs(buckets: I64, bounds: I64, named: I64, offsets: I64, ranges: I64) -> tuple[I64, I64, I64]:
    """Where the n-grams of each passage (start, end, where its padded chunk ends) of joined
    chunks lie in their buckets: the buckets (`_features`, with those of the concepts kept
    appended), and for each kind of n-gram and each passage, the first one's index and how many.
    A passage's n-grams are those that start in it and end inside its padded chunk (words cannot
    cross the padding; character grams, word pairs and concepts can, and are dropped); those of
    one kind are ordered by start."""
    n = int(offsets[-1])
    low, high, limit = ranges.T
    firsts: list[I64] = []
    counts: list[I64] = []
    at = 0
    for size in CHAR_SIZES:
        if n >= size:
            firsts.append(at + low)
            counts.append(np.minimum(high, limit - size + 1) - low)
            at += n - size + 1
    starts, ends = bounds[:, 0], bounds[:, 1]
    words = np.searchsorted(starts, ranges[:, :2])
    pairs = np.searchsorted(starts[:-1], ranges[:, :2])
    pairs[:, 1] = np.minimum(pairs[:, 1], np.searchsorted(ends[1:], limit, side="right"))
    region = np.searchsorted(offsets, named[:, 0], side="right") - 1
    kept = named[named[:, 1] <= offsets[region + 1]]
    concepts = np.searchsorted(kept[:, 0], ranges[:, :2])
    for found, size in ((words, len(bounds)), (pairs, max(len(bounds) - 1, 0)), (concepts, 0)):
        firsts.append(at + found[:, 0])
        counts.append(found[:, 1] - found[:, 0])
        at += size
    source = np.concatenate((buckets, kept[:, 2]))
    return source, np.concatenate(firsts), np.maximum(np.concatenate(counts), 0)


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
    search = _WORD_START.search
    for number, text in enumerate(texts):
        size = len(text)
        run: tuple[int, int] | None = None  # the chunk being built: its start and end in text
        pending: list[tuple[int, int]] = []  # its passages, padded offsets in the text
        spans = passages(text)
        owner += [number] * len(spans)
        for a, b in spans:
            word = search(text, b - 1)  # the first word starting at or after b
            first = a - 2 if a > 2 else 0
            last = size if word is None else max(b + 3, word.end())
            if last > size:
                last = size
            key = (text[first:last], a - first, b - first)
            seen = known.get(key)
            if seen is not None:
                shared.append(seen)
                if run is not None:
                    _close(text, run, pending, chunks, bounds)
                    run, pending = None, []
                continue
            seen = known[key] = len(bounds) + len(pending)
            shared.append(seen)
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
