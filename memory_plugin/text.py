"""Text helpers shared by every memory kind: word tokens, search terms and one BM25 ranking."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import TypeVar

import Stemmer

K = TypeVar("K", bound=Hashable)
_WORD = re.compile(r"\w+", re.UNICODE)
BM25_K1 = 1.2
BM25_B = 0.75

_SNOWBALL_STOPWORDS = """
i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
she her hers herself it its itself they them their theirs themselves what which who whom
this that these those am is are was were be been being have has had having do does did doing
would should could ought cannot a an the and but if or because as until while of at by for
with about against between into through during before after above below to from up down in
out on off over under again further then once here there when where why how all any both
each few more most other some such no nor not only own same so than too very s t can will
just don should now
"""
STOPWORDS = frozenset(_SNOWBALL_STOPWORDS.split())
"""English stopwords (the Snowball list, as PostgreSQL's `english` configuration drops)."""

_stemmer = Stemmer.Stemmer("english")


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens."""
    return [t.lower() for t in _WORD.findall(text)]


@lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    return str(_stemmer.stemWord(word))


@lru_cache(maxsize=131_072)
def _terms(text: str) -> tuple[str, ...]:
    return tuple(_stem(t) for t in tokens(text) if t not in STOPWORDS)


def search_terms(text: str) -> list[str]:
    """The words a keyword search matches on: lower-cased, English stopwords dropped, each
    reduced to its Snowball English stem (remembered per text, as notes are searched again
    and again)."""
    return list(_terms(text))


def query_words(text: str) -> list[str]:
    """A query's distinct lower-cased words without stopwords, in order (the databases stem
    them with their own tokenizer)."""
    return list(dict.fromkeys(t for t in tokens(text) if t not in STOPWORDS))


@dataclass(frozen=True)
class Bm25Stats:
    """A collection's BM25 statistics: its documents, their average length in terms, and
    the number of documents holding each query term."""

    docs: int
    avg_len: float
    df: Mapping[str, int]


def bm25_idf(docs: int, df: int) -> float:
    """A term's BM25 inverse document frequency, held by `df` of `docs` documents. A term's
    share of a score is below idf * (k1 + 1) whatever its count and the document's length."""
    return math.log(1 + (docs - df + 0.5) / (df + 0.5))


def bm25_score(
    terms: Iterable[str], counts: Mapping[str, int], length: int, stats: Bm25Stats
) -> float:
    """One document's BM25 score, from its term counts and length, against the query terms."""
    norm = BM25_K1 * (1 - BM25_B + BM25_B * length / stats.avg_len)
    score = 0.0
    for term in terms:
        tf = counts.get(term, 0)
        if tf:
            idf = bm25_idf(stats.docs, stats.df[term])
            score += idf * tf * (BM25_K1 + 1) / (tf + norm)
    return score


def bm25_scores(
    query: str, docs: Sequence[tuple[K, str]], *, analyze: Callable[[str], list[str]] = tokens
) -> dict[K, float]:
    """BM25 score of each (key, text) against the query; keys sharing no term are left out.
    `analyze` turns a text into its terms (plain tokens by default; `search_terms` to stem
    and drop stopwords)."""
    terms = set(analyze(query))
    if not terms or not docs:
        return {}
    counted = [(key, Counter(analyze(text))) for key, text in docs]
    avg_len = sum(sum(c.values()) for _, c in counted) / len(counted) or 1.0
    df = Counter(term for _, counts in counted for term in terms if term in counts)
    stats = Bm25Stats(len(counted), avg_len, df)
    scores: dict[K, float] = {}
    for key, counts in counted:
        score = bm25_score(terms, counts, sum(counts.values()), stats)
        if score > 0:
            scores[key] = score
    return scores
