"""How recall orders candidate notes: score-normalised fusion, the question's dates, and
neighbouring turns.

`rank` is a pure function of the query, the keyword (BM25) and semantic (cosine) scores of
the candidates, and the notes themselves (candidates plus the notes next to them on the same
day), so recall and the recall audit order the same inputs the same way whatever k is asked.

Each note's base score is `keyword_weight * bm25 / best bm25 + (1 - keyword_weight) * cosine`
plus `date_weight` when the note's day falls in a date the question names (half of it when
the day is within two weeks after that date, or when the date is a whole year). A note not
among the semantic candidates counts the weakest candidate's cosine, an upper bound of its
own. Then every note gains a share of its strongest neighbour's base score (same day, one or
two positions away): the answer to a question often sits in the turn after the one that
names the topic. The weights were chosen by leave-one-conversation-out on LoCoMo's
development conversations (bench/locomo.py, bench/RESULTS.md).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Protocol

_MONTHS = (
    *("january", "february", "march", "april", "may", "june"),
    *("july", "august", "september", "october", "november", "december"),
)
_MONTH = "|".join((*_MONTHS, "sept", *(m[:3] for m in _MONTHS if m != "may")))
_ORD = r"(?:st|nd|rd|th)?"
_DAY_MONTH_YEAR = re.compile(rf"\b(\d{{1,2}}){_ORD}\s+({_MONTH})\.?,?\s+(\d{{4}})\b")
_MONTH_DAY_YEAR = re.compile(rf"\b({_MONTH})\.?\s+(\d{{1,2}}){_ORD},?\s+(\d{{4}})\b")
_MONTH_YEAR = re.compile(rf"\b({_MONTH})\.?,?\s+(\d{{4}})\b")
_ISO = re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b")
_YEAR = re.compile(r"\b(19\d\d|20\d\d)\b")
AFTER_DAYS = 14


class Placed(Protocol):
    """Where a note sits: a note, or its day and position alone."""

    @property
    def day(self) -> str:
        """The note's ISO day."""

    @property
    def position(self) -> int:
        """The note's position on its day."""


@dataclass(frozen=True)
class RankWeights:
    """The weights of the ranking features."""

    keyword: float = 0.2
    date: float = 0.2
    neighbour: tuple[float, ...] = (0.5, 0.3)


DEFAULT_WEIGHTS = RankWeights()


def _month(name: str) -> int:
    return next(i for i, m in enumerate(_MONTHS, 1) if m.startswith(name[:3]))


def _month_span(year: int, month: int) -> tuple[date, date]:
    first = date(year, month, 1)
    following = date(year + month // 12, month % 12 + 1, 1)
    return first, following - timedelta(days=1)


def named_dates(query: str) -> list[tuple[date, date]]:
    """The periods (first day, last day) the query names: a day, a month or a year."""
    text = query.lower()
    found: list[tuple[date, date]] = []
    taken: list[tuple[int, int]] = []

    def add(span: tuple[int, int], period: tuple[date, date]) -> None:
        if not any(start < span[1] and span[0] < end for start, end in taken):
            taken.append(span)
            found.append(period)

    for m in _ISO.finditer(text):
        try:
            day = date(int(m[1]), int(m[2]), int(m[3]))
        except ValueError:
            continue
        add(m.span(), (day, day))
    for pattern, order in ((_DAY_MONTH_YEAR, (1, 2, 3)), (_MONTH_DAY_YEAR, (2, 1, 3))):
        for m in pattern.finditer(text):
            try:
                day = date(int(m[order[2]]), _month(m[order[1]]), int(m[order[0]]))
            except ValueError:
                continue
            add(m.span(), (day, day))
    for m in _MONTH_YEAR.finditer(text):
        add(m.span(), _month_span(int(m[2]), _month(m[1])))
    for m in _YEAR.finditer(text):
        year = int(m[1])
        add(m.span(), (date(year, 1, 1), date(year, 12, 31)))
    return found


def date_match(day: str, periods: list[tuple[date, date]]) -> float:
    """How well a note's ISO day matches the named periods: 1 inside a day or month, 0.5
    within two weeks after it or inside a named year, else 0."""
    try:
        when = date.fromisoformat(day[:10])
    except ValueError:
        return 0.0
    best = 0.0
    for start, end in periods:
        if start <= when <= end:
            value = 1.0
        elif end < when <= end + timedelta(days=AFTER_DAYS):
            value = 0.5
        else:
            continue
        best = max(best, value if (end - start).days <= 31 else value / 2)
    return best


def rank(
    query: str,
    keyword: Mapping[str, float],
    semantic: Mapping[str, float],
    notes: Mapping[str, Placed],
    weights: RankWeights = DEFAULT_WEIGHTS,
) -> list[tuple[str, float]]:
    """Every note of `notes` with its score, best first (ties by key).

    `keyword` and `semantic` hold the candidates' BM25 and cosine scores; `notes` holds the
    candidates and any neighbours fetched with them (a score for a key missing from `notes`
    is ignored). With one of the two signals empty, the other carries the whole weight.
    """
    best_keyword = max(keyword.values(), default=0.0)
    floor = min(semantic.values(), default=0.0)
    keyword_weight = weights.keyword if semantic else 1.0
    semantic_weight = 1.0 - weights.keyword if keyword else 1.0
    periods = named_dates(query) if weights.date else []
    by_day: dict[str, float] = {}
    base: dict[str, float] = {}
    for key, note in notes.items():
        score = semantic_weight * semantic.get(key, floor) if semantic else 0.0
        if best_keyword > 0:
            score += keyword_weight * keyword.get(key, 0.0) / best_keyword
        if periods:
            if (match := by_day.get(note.day)) is None:
                match = by_day[note.day] = date_match(note.day, periods)
            score += weights.date * match
        base[key] = score
    at = {(note.day, note.position): base[key] for key, note in notes.items()}
    scores: dict[str, float] = {}
    for key, note in notes.items():
        share = 0.0
        for distance, weight in enumerate(weights.neighbour, 1):
            before = at.get((note.day, note.position - distance))
            after = at.get((note.day, note.position + distance))
            if before is None or after is None:
                near = after if before is None else before
                share += weight * (0.0 if near is None else near)
            else:
                share += weight * max(before, after)
        scores[key] = base[key] + share
    return sorted(scores.items(), key=lambda item: (-item[1], item[0]))
