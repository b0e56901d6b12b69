"""A model's reply is untrusted input: checked before it may replace stored memory.

Every path that stores a model's rewrite (nightly consolidation, compression past the hard
limit, profile consolidation, compaction and rolling summaries) goes through
`checked_rewrite`. A reply is refused when it is empty or whitespace, a bare code fence, a
refusal, when it loses the previous text's facts, or when the safety screen refuses it.

Facts are judged by words, not lines, so a rewrite may merge, move and reword lines freely:
the previous text's content words (headings aside, English stopwords out, each reduced to its
stem) are looked up anywhere in the reply, each word counted once per line it is on, so filler
repeated within a line weighs no more than a fact. A rewrite of a text of any size must keep
at least one of its facts (a word or a name), so a two-line document rewritten as "OK" is
refused; from MIN_WORDS content words up, where one superseded fact can no longer explain the
loss, at least `min_kept` (default half) of the words and half of the names (capitalised
words and identifiers with digits, such as Rex, Oslo or INC-42) must still be there.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from memory_plugin.errors import MemoryWriteError
from memory_plugin.safety import screen, strip_control
from memory_plugin.text import STOPWORDS, search_terms

MIN_KEPT = 0.5
MIN_WORDS = 10
_FENCE = re.compile(r"^```[\w+-]*\s*\n?(.*?)\n?```$", re.DOTALL)
_HEADING = re.compile(r"^\s*#{1,6}\s")
_WORD = re.compile(r"\w+", re.UNICODE)
_REFUSAL = re.compile(
    r"^\W*(i'?m sorry|i am sorry|sorry\b|i apologi[sz]e|unfortunately\b|as an ai\b)"
    r"|\bi (can'?t|cannot|can not|won'?t|am unable to|'m unable to|am not able to)"
    r" (help|assist|comply|do that|provide|complete|fulfil)",
    re.IGNORECASE,
)


class RejectedReply(MemoryWriteError):
    """A model's reply was refused as a rewrite of stored memory; nothing was replaced."""

    def __init__(self, what: str, reason: str) -> None:
        super().__init__(f"{what} from the model was refused: {reason}")
        self.what = what
        self.reason = reason


def reply_text(reply: object) -> str:
    """The text of a model reply, stripped, without a wrapping code fence."""
    content = getattr(reply, "text", None)
    text = content if isinstance(content, str) else str(getattr(reply, "content", reply))
    text = text.strip()
    fenced = _FENCE.match(text)
    return fenced.group(1).strip() if fenced else text


def is_refusal(text: str) -> bool:
    """Whether the reply opens like a refusal or an apology instead of the asked-for text."""
    first = next((line for line in text.splitlines() if line.strip()), "")
    return bool(_REFUSAL.search(first[:300]))


def _content(text: str) -> str:
    return "\n".join(line for line in text.splitlines() if not _HEADING.match(line))


def _is_name(word: str) -> bool:
    has_digit = any(c.isdigit() for c in word)
    return (word[0].isupper() and word.lower() not in STOPWORDS) or (
        has_digit and not word.isdigit()
    )


@dataclass(frozen=True)
class Coverage:
    """How much of a previous text's facts a rewrite keeps."""

    kept: int
    """The previous text's content words (once per line) found in the rewrite."""
    total: int
    names_kept: tuple[str, ...]
    names_missing: tuple[str, ...]

    @property
    def share(self) -> float:
        """The share of the previous text's content words kept (1.0 for a text with none)."""
        return self.kept / self.total if self.total else 1.0

    @property
    def names_share(self) -> float:
        """The share of the previous text's names kept (1.0 for a text with none)."""
        names = len(self.names_kept) + len(self.names_missing)
        return len(self.names_kept) / names if names else 1.0

    def holds(self, min_kept: float = MIN_KEPT) -> bool:
        """Whether the rewrite keeps at least `min_kept` of the words and of the names."""
        return self.share >= min_kept and self.names_share >= min_kept


def coverage(previous: str, new: str) -> Coverage:
    """How much of `previous`'s content words and names (headings aside) `new` keeps."""
    content = _content(previous)
    words = Counter(term for line in content.splitlines() for term in set(search_terms(line)))
    present = set(search_terms(new))
    names: dict[str, str] = {}
    for word in _WORD.findall(content):
        if _is_name(word):
            for term in search_terms(word):
                names.setdefault(term, word)
    kept = tuple(word for term, word in names.items() if term in present)
    missing = tuple(word for term, word in names.items() if term not in present)
    found = sum(count for term, count in words.items() if term in present)
    return Coverage(found, sum(words.values()), kept, missing)


def lost_facts(previous: str, new: str, min_kept: float = MIN_KEPT) -> str | None:
    """Why `new` does not keep `previous`'s facts, None when it does."""
    found = coverage(previous, new)
    if not found.total and not found.names_missing:
        return None
    if not found.kept and not found.names_kept:
        return "it keeps none of the previous text's facts"
    if found.total < MIN_WORDS or found.holds(min_kept):
        return None
    reason = f"it keeps {found.share:.0%} of the previous text's words"
    if found.names_missing:
        shown = ", ".join(found.names_missing[:5])
        more = len(found.names_missing) - 5
        reason += f" and loses {shown}" + (f" and {more} more names" if more > 0 else "")
    return reason


def checked_rewrite(
    reply: object,
    *,
    previous: str,
    what: str,
    min_kept: float = MIN_KEPT,
) -> str:
    """The reply's text, cleaned, if it may replace `previous`; else RejectedReply."""
    raw = reply_text(reply)
    text = strip_control(raw, keep_newlines=True).strip()
    if not text:
        fence = str(getattr(reply, "text", "") or "").strip().startswith("```")
        raise RejectedReply(what, "the reply is an empty code fence" if fence else "it is empty")
    if is_refusal(text):
        raise RejectedReply(what, f"it is a refusal ({text.splitlines()[0][:80]!r})")
    if (reason := lost_facts(previous, text, min_kept)) is not None:
        raise RejectedReply(what, reason)
    try:
        screen(raw, what, lines=True)
    except MemoryWriteError as exc:
        raise RejectedReply(what, f"the safety screen refused it ({exc})") from None
    return text
