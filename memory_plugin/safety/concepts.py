"""Words of many languages mapped to shared concepts, so the classifier judges an instruction
to a model in a language it was never trained on.

The lexicon (lexicon/*.tsv, written by the team from its knowledge of each language) maps the
words of about eighty languages to thirty concepts that say what a text asks of a model: whom
it addresses (an AI, "you"), what authority it claims (the system, the user, an important new
instruction) and what change of task it asks for (ignore the previous instructions, send,
reveal, repeat, pretend, conceal). The names of models (ChatGPT, Claude, Gemini ...) are the
concept AI in every language. The classifier (classifier.py) adds each concept found in a word,
or in a word and the next one, as one more feature; trained mostly on English, it weighs the
concepts, not the words, so an attack in another language reads as its English form does.

A form ending in `*` matches a word starting with it, any other form the whole word, a form of
two words two words in a row; in scripts written without spaces a form matches anywhere in a
run of letters.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import accumulate, compress
from pathlib import Path

LEXICON = Path(__file__).with_name("lexicon")
UNSPACED = frozenset({"zh", "ja", "th", "lo", "km", "my"})
MODEL_NAMES = (
    "chatgpt",
    "gpt",
    "openai",
    "claude",
    "gemini",
    "bard",
    "llama",
    "mistral",
    "mixtral",
    "copilot",
    "grok",
    "deepseek",
    "qwen",
    "llm",
    "llms",
)
"""Names of models and of the kind: the concept AI in any language."""
MAX_SUBSTRING = 6
"""The longest form matched inside a run of an unspaced script (longer forms are cut)."""


@cache
def _word() -> re.Pattern[str]:
    """A word: letters, digits and the combining marks of the Basic Multilingual Plane (the
    vowel signs of Indic scripts, Arabic shadda: `\\w` alone cuts such words apart)."""
    marks = [c for c in range(0x300, 0x10000) if unicodedata.category(chr(c)) in ("Mn", "Mc")]
    ranges: list[tuple[int, int]] = []
    for code in marks:
        if ranges and ranges[-1][1] == code - 1:
            ranges[-1] = (ranges[-1][0], code)
        else:
            ranges.append((code, code))
    spans = "".join(f"\\u{a:04x}-\\u{b:04x}" for a, b in ranges)
    return re.compile(f"[\\w{spans}]+")


@cache
def _split() -> re.Pattern[str]:
    """`_word`, captured: splitting a text by it gives the text between words and the words."""
    return re.compile(f"({_word().pattern})")


_UNSPACED_RUN = re.compile(
    r"[\u0e00-\u0eff\u1000-\u109f\u1780-\u17ff\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af]"
)


@dataclass(frozen=True)
class Lexicon:
    """The forms of every concept: whole words, stems, two-word phrases and substrings."""

    concepts: tuple[str, ...]
    words: dict[str, frozenset[int]]
    stems: dict[str, frozenset[int]]
    stem_lengths: tuple[int, ...]
    pairs: dict[tuple[str, str], frozenset[int]]
    substrings: dict[str, frozenset[int]]
    substring_lengths: tuple[int, ...]


def _add(table: dict[str, set[int]], form: str, concept: int) -> None:
    table.setdefault(form, set()).add(concept)


def _frozen(table: dict[str, set[int]]) -> dict[str, frozenset[int]]:
    return {form: frozenset(found) for form, found in table.items()}


@cache
def lexicon() -> Lexicon:
    """The shipped lexicon, read once; concepts are numbered in the order of their names."""
    rows = [
        line.split("\t")
        for path in sorted(LEXICON.glob("*.tsv"))
        for line in path.read_text(encoding="utf-8").splitlines()
        if line.strip() and not line.startswith("#")
    ]
    names = {name: n for n, name in enumerate(sorted({row[0].strip() for row in rows} | {"AI"}))}
    words: dict[str, set[int]] = {}
    stems: dict[str, set[int]] = {}
    pairs: dict[tuple[str, str], set[int]] = {}
    substrings: dict[str, set[int]] = {}
    for concept, language, forms in rows:
        number = names[concept.strip()]
        for form in unicodedata.normalize("NFKC", forms).casefold().split("|"):
            form = " ".join(form.split())
            if not form:
                continue
            if language.strip() in UNSPACED and _UNSPACED_RUN.search(form):
                _add(substrings, form.replace(" ", "").rstrip("*")[:MAX_SUBSTRING], number)
                continue
            parts = form.split(" ")
            if len(parts) == 1:
                _add(stems if form.endswith("*") else words, form.rstrip("*"), number)
            elif len(parts) == 2:
                pairs.setdefault((parts[0], parts[1]), set()).add(number)
    ai = names["AI"]
    for name in MODEL_NAMES:
        _add(words, name, ai)
    return Lexicon(
        concepts=tuple(names),
        words=_frozen(words),
        stems=_frozen({s: c for s, c in stems.items() if len(s) >= 3}),
        stem_lengths=tuple(sorted({len(s) for s in stems if len(s) >= 3})),
        pairs={p: frozenset(c) for p, c in pairs.items()},
        substrings=_frozen(substrings),
        substring_lengths=tuple(sorted({len(s) for s in substrings})),
    )


@lru_cache(maxsize=1 << 16)
def of_word(word: str) -> frozenset[int]:
    """The concepts of one case-folded word: its whole form, its stems and, in an unspaced
    script, the forms found inside it."""
    table = lexicon()
    found = set(table.words.get(word, ()))
    for size in table.stem_lengths:
        if size > len(word):
            break
        found.update(table.stems.get(word[:size], ()))
    if _UNSPACED_RUN.search(word):
        for start in range(len(word)):
            for size in table.substring_lengths:
                found.update(table.substrings.get(word[start : start + size], ()))
    return frozenset(found)


def _matches(form: str, word: str) -> bool:
    return word.startswith(form[:-1]) if form.endswith("*") else word == form


@cache
def _pair_index() -> dict[str, tuple[tuple[str, str, frozenset[int]], ...]]:
    """The two-word phrases by their first word's form (a stem without its `*`), so a word
    looks up the phrases it may begin."""
    found: dict[str, list[tuple[str, str, frozenset[int]]]] = {}
    for (first, second), concepts in lexicon().pairs.items():
        found.setdefault(first.rstrip("*"), []).append((first, second, concepts))
    return {key: tuple(value) for key, value in found.items()}


@dataclass(frozen=True)
class _Follows:
    """The phrases a word may begin, by their second word: a whole word's concepts, and
    each stem's."""

    words: dict[str, frozenset[int]]
    stems: tuple[tuple[str, frozenset[int]], ...]

    def after(self, word: str) -> frozenset[int]:
        """The concepts of the phrases that `word` completes."""
        found = self.words.get(word, frozenset())
        for stem, concepts in self.stems:
            if word.startswith(stem):
                found = found | concepts
        return found


@lru_cache(maxsize=1 << 16)
def _pair_starts(word: str) -> _Follows | None:
    """The phrases `word` may begin, None where it begins none."""
    index = _pair_index()
    words: dict[str, set[int]] = {}
    stems: dict[str, set[int]] = {}
    for size in range(1, len(word) + 1):
        for first, second, concepts in index.get(word[:size], ()):
            if _matches(first, word):
                table = stems if second.endswith("*") else words
                table.setdefault(second.rstrip("*"), set()).update(concepts)
    if not (words or stems):
        return None
    return _Follows(_frozen(words), tuple((s, frozenset(c)) for s, c in stems.items()))


def occurrences(text: str) -> list[tuple[int, int, int]]:
    """Every concept in the text: (start, end, concept number), a word's at the word, a
    phrase's from its first word's start to its second word's end."""
    parts = _split().split(text)  # the text between words, then a word, and so on
    words = parts[1::2]
    if text.casefold() != text:
        words = [word.casefold() for word in words]
    named = list(map(_of_word, words))
    ends = list(accumulate(map(len, parts)))
    last = len(words) - 1
    found: list[tuple[int, int, int]] = []
    add = found.append
    for n in compress(range(len(words)), named):
        concepts, starts = named[n]  # type: ignore[misc]
        start = ends[2 * n]
        for concept in concepts:
            add((start, ends[2 * n + 1], concept))
        if starts is not None and n < last:
            for concept in starts.after(words[n + 1]):
                add((start, ends[2 * n + 3], concept))
    return found


@lru_cache(maxsize=1 << 16)
def _of_word(word: str) -> tuple[frozenset[int], _Follows | None] | None:
    """A word's concepts and the phrases it may begin, in one lookup; None where it has
    neither."""
    concepts, starts = of_word(word), _pair_starts(word)
    return (concepts, starts) if concepts or starts is not None else None
