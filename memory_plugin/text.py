"""Text helpers shared by every memory kind: word tokens and one BM25 ranking."""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Hashable, Sequence
from typing import TypeVar

K = TypeVar("K", bound=Hashable)
_WORD = re.compile(r"\w+", re.UNICODE)
BM25_K1 = 1.2
BM25_B = 0.75


def tokens(text: str) -> list[str]:
    """Lower-cased word tokens."""
    return [t.lower() for t in _WORD.findall(text)]


def bm25_scores(query: str, docs: Sequence[tuple[K, str]]) -> dict[K, float]:
    """BM25 score of each (key, text) against the query; keys sharing no word are left out."""
    terms = set(tokens(query))
    if not terms or not docs:
        return {}
    counted = [(key, Counter(tokens(text))) for key, text in docs]
    avg_len = sum(sum(c.values()) for _, c in counted) / len(counted) or 1.0
    df = Counter(term for _, counts in counted for term in terms if term in counts)
    scores: dict[K, float] = {}
    for key, counts in counted:
        norm = BM25_K1 * (1 - BM25_B + BM25_B * sum(counts.values()) / avg_len)
        score = 0.0
        for term in terms:
            tf = counts.get(term, 0)
            if tf:
                idf = math.log(1 + (len(counted) - df[term] + 0.5) / (df[term] + 0.5))
                score += idf * tf * (BM25_K1 + 1) / (tf + norm)
        if score > 0:
            scores[key] = score
    return scores
