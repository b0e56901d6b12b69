"""The credential stage's RE2 sieve (credentials._sieve) gives the unsieved verdict on every
text: the provider samples and near misses, the corpora, their lines joined into long lines,
and text built from the patterns' own fragments; and a case-insensitive rewrite for RE2 matches
wherever Python's `re` does, the Turkish and Kelvin folds included (issue 38, point 5)."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_plugin.safety import credentials
from memory_plugin.safety.superset import sieve
from tests.screen_paths import load
from tests.test_screen_credentials import NEAR_MISSES, SAMPLES

CORPORA = ("screen_attacks.txt", "screen_benign.txt", "garak_injections.txt")


def unsieved(text: str, monkeypatch: pytest.MonkeyPatch) -> str | None:
    _, spans = credentials._sieve()
    with monkeypatch.context() as patched:
        patched.setattr(credentials, "_sieve", lambda: (None, spans))
        return credentials.credential_kind(text)


def same(text: str, monkeypatch: pytest.MonkeyPatch) -> str | None:
    found = credentials.credential_kind(text)
    assert found == unsieved(text, monkeypatch), text
    return found


def test_every_sample_is_found_through_the_sieve(monkeypatch: pytest.MonkeyPatch) -> None:
    for kind, text in SAMPLES:
        assert same(text, monkeypatch) == kind
        same(f"{'x' * 1500} {text}", monkeypatch)  # past the first window of a long line
        assert same(f"{'x' * 1500}\n{text}", monkeypatch) == kind
    for text in NEAR_MISSES:
        assert same(text, monkeypatch) is None


@pytest.mark.slow
def test_the_corpora_lines_and_long_lines_get_the_same_verdict(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    texts = [text for name in CORPORA for _, text in load(name)]
    rng = random.Random(38)
    lines = [line for text in texts for line in text.split("\n")]
    long_lines = [" ".join(rng.sample(lines, 40)) for _ in range(40)]
    assert len(texts) > 1000
    found = [same(text, monkeypatch) for text in texts + long_lines]
    assert any(found)  # the attack corpus holds credentials


FRAGMENTS = [
    text[i : i + n] for _, text in SAMPLES for i in range(0, len(text), 7) for n in (4, 9, 16)
]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.sampled_from(FRAGMENTS) | st.sampled_from([" ", "\n", "=", ":", '"']), max_size=12)
)
def test_text_of_the_samples_fragments_gets_the_same_verdict(parts: list[str]) -> None:
    with pytest.MonkeyPatch.context() as monkeypatch:
        same("".join(parts), monkeypatch)


@pytest.mark.parametrize(
    ("pattern", "text"),
    [
        ("kelvin", "\u212aELVIN"),
        ("sign in", "S\u0130GN \u0131N"),
        ("[a-z]{4}", "\u0130\u0131\u017f\u212a"),
        ("(?i:ab)c", "ABc"),
        ("x(?i:[h-j])y", "x\u0130y"),
    ],
)
def test_a_case_insensitive_rewrite_matches_where_python_does(pattern: str, text: str) -> None:
    compiled = re.compile(pattern, re.IGNORECASE if "(?i" not in pattern else 0)
    assert compiled.search(text) is not None
    fast = sieve([compiled])
    assert fast is not None
    assert fast.may_match(0, fast.scan([text]))
    assert not fast.may_match(0, fast.scan(["-- 42 --"]))
