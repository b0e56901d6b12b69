"""A linear pre-check of a rule pattern with RE2, before Python's `re` runs it.

Each pattern of the rules is rewritten for RE2 (google-re2, an automaton: one linear scan) so
that it matches wherever the Python pattern matches, and perhaps more: `\\w`, `\\d`, `\\s` and
their negations match what Python's do in ASCII and every character past it (in a negated
class, the ASCII ones alone), word boundaries and lookarounds, which RE2 lacks, are dropped, and
`^`, `$`, `\\A`, `\\Z` match at any line's ends. The forms are scanned joined by line feeds,
so a match in one form is a match in the joined text. A pattern whose rewrite finds nothing
there cannot match, and is not run; one whose rewrite matches is then run by Python's `re`,
which alone decides. Where google-re2 is not installed, `sieve` is None and every pattern the
rules' prefilter lets through runs. `Literals` finds which of the prefilter's strings occur in
the forms, all in one RE2 scan, instead of a Python `in` for each.
"""

from __future__ import annotations

import re
import sys
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from functools import cache
from itertools import accumulate
from re import _constants as _sre  # type: ignore[attr-defined]
from re import _parser  # type: ignore[attr-defined]
from typing import Any

try:
    import re2
except ImportError:  # an optional accelerator: the rules' own prefilter stands in
    re2 = None

Node = tuple[Any, Any]
_SURROGATES = (0xD800, 0xDFFF)
_REPEATS = frozenset({_sre.MAX_REPEAT, _sre.MIN_REPEAT, _sre.POSSESSIVE_REPEAT})
_LOOSE = frozenset({_sre.ASSERT, _sre.ASSERT_NOT})
_LINE_START = frozenset({_sre.AT_BEGINNING, _sre.AT_BEGINNING_LINE, _sre.AT_BEGINNING_STRING})
_LINE_END = frozenset({_sre.AT_END, _sre.AT_END_LINE, _sre.AT_END_STRING})
_MAX_COUNT = 1000  # RE2's largest repetition count
_LOOSE_ABOVE = 8
"""The largest count of a repeat a loose rewrite keeps."""


class _Unsupported(Exception):
    """A construct with no RE2 rewrite that keeps every match: the pattern always runs."""


@cache
def _category(category: Any, *, widest: bool) -> tuple[tuple[int, int], ...]:
    """The ASCII code points Python's `re` matches with a class category such as `\\w`, and
    with `widest` every code point past ASCII too: a superset of the category, and without
    it a subset (for a negated class, whose complement is then a superset)."""
    probe = re.compile(f"[{_CATEGORY_ESCAPES[category]}]")
    found = tuple((code, code) for code in range(128) if probe.match(chr(code)))
    return (*found, (128, sys.maxunicode)) if widest else found


_CATEGORY_ESCAPES = {
    _sre.CATEGORY_DIGIT: r"\d",
    _sre.CATEGORY_NOT_DIGIT: r"\D",
    _sre.CATEGORY_SPACE: r"\s",
    _sre.CATEGORY_NOT_SPACE: r"\S",
    _sre.CATEGORY_WORD: r"\w",
    _sre.CATEGORY_NOT_WORD: r"\W",
}


def _char(code: int) -> str:
    return f"\\x{{{code:x}}}"


_TURKISH_I = (0x49, 0x69, 0x130, 0x131)
"""Python's `re` folds these four into one case; RE2's (?i) keeps I, i apart from U+0130, U+0131."""


def _folded(code: int) -> str:
    """A literal under IGNORECASE: RE2's (?i) folds it, the Turkish i's spelt out."""
    if code in _TURKISH_I:
        return "[" + "".join(_char(c) for c in _TURKISH_I) + "]"
    return _char(code)


def _ranges(items: Sequence[Node], fold: bool) -> tuple[bool, list[tuple[int, int]]]:
    """Whether a class is negated, and the ranges of code points it lists (for a category,
    more than it holds in a plain class, less in a negated one; under `fold`, a range holding
    a Turkish i holds all four)."""
    negated = any(op is _sre.NEGATE for op, _ in items)
    ranges = []
    for op, av in items:
        if op is _sre.NEGATE:
            continue
        if op is _sre.LITERAL:
            ranges.append((av, av))
        elif op is _sre.RANGE:
            ranges.append(av)
        elif op is _sre.CATEGORY:
            ranges.extend(_category(av, widest=not negated))
        else:
            raise _Unsupported(op)
    if fold and any(low <= c <= high for c in _TURKISH_I for low, high in ranges):
        ranges.extend((c, c) for c in _TURKISH_I)
    return negated, ranges


def _class(items: Sequence[Node], fold: bool) -> str:
    negated, ranges = _ranges(items, fold)
    parts = []
    for low, high in ranges:
        for a, b in ((low, min(high, _SURROGATES[0] - 1)), (max(low, _SURROGATES[1] + 1), high)):
            if a <= b:
                parts.append(_char(a) if a == b else f"{_char(a)}-{_char(b)}")
    if not parts:
        return "[^\\x{0}-\\x{10ffff}]" if not negated else "(?s:.)"
    return f"[{'^' if negated else ''}{''.join(parts)}]"


def _sequence(items: Iterable[Node], loose: bool, fold: bool = False) -> str:
    return "".join(_node(op, av, loose, fold) for op, av in items)


def _node(op: Any, av: Any, loose: bool, fold: bool) -> str:
    if op is _sre.LITERAL:
        return _folded(av) if fold else _char(av)
    if op is _sre.NOT_LITERAL:
        if fold and av in _TURKISH_I:
            return "[^" + "".join(_char(c) for c in _TURKISH_I) + "]"
        return f"[^{_char(av)}]"
    if op is _sre.ANY:
        return "(?s:.)"
    if op is _sre.IN:
        return _class(av, fold)
    if op is _sre.AT:
        if av in _LINE_START:
            return "(?m:^)"
        if av in _LINE_END:
            return "(?m:$)"
        return ""  # \b and \B: dropped, so every match is kept
    if op in _LOOSE:
        return ""
    if op is _sre.BRANCH:
        return "(?:" + "|".join(_sequence(branch, loose, fold) for branch in av[1]) + ")"
    if op is _sre.SUBPATTERN:
        if (av[1] | av[2]) & _sre.SRE_FLAG_VERBOSE or av[2] & _sre.SRE_FLAG_IGNORECASE:
            raise _Unsupported(op)
        inner = fold or bool(av[1] & _sre.SRE_FLAG_IGNORECASE)
        return f"(?{'i' if inner else ''}:{_sequence(av[3], loose, inner)})"
    if op is _sre.ATOMIC_GROUP:
        return f"(?:{_sequence(av, loose, fold)})"
    if op in _REPEATS:
        low, high, item = av
        if low > _MAX_COUNT:
            raise _Unsupported(op)
        if loose and low > _LOOSE_ABOVE:
            low = 1
        unbounded = high is _sre.MAXREPEAT or high > (_LOOSE_ABOVE if loose else _MAX_COUNT)
        top = "" if unbounded else str(high)
        return f"(?:{_sequence(item, loose, fold)}){{{low},{top}}}"
    raise _Unsupported(op)


def rewrite(pattern: re.Pattern[str], *, loose: bool = False) -> str | None:
    """The pattern for RE2, matching wherever the Python pattern matches; None where it has a
    construct with no such rewrite (the pattern then always runs). With `loose`, a count of a
    repeat above _LOOSE_ABOVE is dropped (at most: no most; at least: at least once): the
    rewrite matches wherever the exact one does, with an automaton of a few states instead of
    one per count."""
    if pattern.flags & re.VERBOSE:
        return None
    fold = bool(pattern.flags & re.IGNORECASE)
    try:
        found = _sequence(_parser.parse(pattern.pattern, pattern.flags), loose, fold)
    except _Unsupported:
        return None
    return f"(?i:{found})" if fold else found


class Sieve:
    """Each pattern rewritten for RE2 (None where it has no rewrite), to rule out in one
    linear scan of a text's forms a pattern that cannot match any of them. Where the loose
    rewrite differs, it scans first and the exact one only where it matches: a long counted
    repeat (`[^\\n]{0,80}`) makes an automaton of many states, slow to build for each new text."""

    def __init__(self, patterns: Sequence[re.Pattern[str]]) -> None:
        options = re2.Options()
        options.max_mem = 64 << 20

        def compiled(text: str) -> Any:
            return re2.compile(text.encode("utf-8"), options)

        stages: list[tuple[Any, Any] | None] = []
        self._options = options
        self._always: tuple[int, ...] = ()
        self._exact: list[tuple[int, str]] = []
        for number, pattern in enumerate(patterns):
            exact, loose = rewrite(pattern), rewrite(pattern, loose=True)
            if exact is None or loose is None:
                stages.append(None)
                self._always += (number,)
            else:
                stages.append((None if loose == exact else compiled(loose), compiled(exact)))
                self._exact.append((number, exact))
        self._patterns = tuple(stages)
        self._together: Any = None

    def scan(self, forms: Sequence[str]) -> bytes | None:
        """The forms as one text for `may_match`, or None where RE2 cannot read them (a lone
        surrogate: RE2 reads UTF-8 only)."""
        try:
            return "\n".join(forms).encode("utf-8")
        except UnicodeEncodeError:
            return None

    def candidates(self, scanned: bytes | None) -> frozenset[int] | None:
        """The patterns that may match one of the forms `scanned` holds (`may_match` of each,
        found in one scan for all of them: their rewrites as one RE2 set), with those that
        have no rewrite; None where the forms could not be scanned (every pattern may match)."""
        if scanned is None:
            return None
        if self._together is None:  # built at the first call: the rules never ask
            together = re2.Set.SearchSet(self._options)
            for _, exact in self._exact:
                together.Add(exact.encode("utf-8"))
            together.Compile()
            self._together = together
        found = self._together.Match(scanned) or ()
        return frozenset(self._always) | {self._exact[n][0] for n in found}

    def spans(self, number: int, scanned: bytes | None) -> list[tuple[int, int]] | None:
        """Where pattern `number`'s loose rewrite matches in the forms `scanned` holds (byte
        offsets, non-overlapping): wherever the pattern matches a form, one of these overlaps
        it; None where it has no rewrite or the forms could not be scanned."""
        fast = self._patterns[number]
        if fast is None or scanned is None:
            return None
        loose, exact = fast
        return [match.span() for match in (loose or exact).finditer(scanned)]

    def near(
        self, number: int, scanned: bytes | None, forms: Sequence[str], ends: Sequence[int]
    ) -> Sequence[str]:
        """The forms (those `scanned` joins, ending at `ends`: `form_ends`) that pattern
        `number` may match: the ones a match of its RE2 rewrite in the joined forms overlaps or
        touches; all of them where it has no rewrite or they could not be scanned."""
        spans = self.spans(number, scanned)
        if spans is None:
            return forms
        picked: set[int] = set()
        for start, end in spans:
            last = min(bisect_left(ends, end), len(forms) - 1)
            picked.update(range(bisect_left(ends, start), last + 1))
        return [forms[n] for n in sorted(picked)]

    def may_match(self, number: int, scanned: bytes | None) -> bool:
        """Whether pattern `number` may match one of the forms `scanned` holds (True where
        it has no rewrite or the forms could not be scanned)."""
        fast = self._patterns[number]
        if fast is None or scanned is None:
            return True
        loose, exact = fast
        if loose is not None and loose.search(scanned) is None:
            return False
        return exact.search(scanned) is not None


class Literals:
    """Which of a fixed list of strings occur in a text, found in one RE2 scan of the text for
    all of them at once (an automaton over the strings, whose states a few texts build)."""

    def __init__(self, strings: Iterable[str]) -> None:
        options = re2.Options()
        options.literal = True
        options.max_mem = 64 << 20
        self._strings = tuple(strings)
        self._set = re2.Set.SearchSet(options)
        for string in self._strings:
            self._set.Add(string.encode("utf-8"))
        self._set.Compile()

    def found(self, scanned: bytes) -> set[str]:
        """The strings that occur in the scanned text (`Sieve.scan`'s bytes)."""
        return {self._strings[number] for number in self._set.Match(scanned) or ()}


def form_ends(forms: Sequence[str]) -> list[int]:
    """Where each form ends (its byte offset) in the forms joined as `Sieve.scan` joins them."""
    sizes = (len(f) if f.isascii() else len(f.encode("utf-8")) for f in forms)
    return [end - 1 for end in accumulate(size + 1 for size in sizes)]


def literals(strings: Iterable[str]) -> Literals | None:
    """The RE2 scan for the strings, or None where google-re2 is not installed."""
    return None if re2 is None else Literals(strings)


def sieve(patterns: Sequence[re.Pattern[str]]) -> Sieve | None:
    """The RE2 sieve for the patterns, or None where google-re2 is not installed."""
    return None if re2 is None else Sieve(patterns)
