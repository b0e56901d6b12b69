"""A model's reply is untrusted input: checked before it may replace stored memory.

Every path that stores a model's rewrite (nightly consolidation, compression past the hard
limit, profile consolidation, compaction and rolling summaries) goes through
`checked_rewrite`. A reply is refused when it is empty or whitespace, a bare code fence, a
refusal, when it keeps the shape of the previous text but drops most of its content, or when
the safety screen refuses it. Content drop rule: when the previous text has at least
`min_lines` content lines (non-blank, not headings), more than `max_drop` of them (default
half) may not be gone in one run; a line is gone when fewer than half of its words (three
letters or more, or numbers) appear anywhere in the reply, so merged and reworded lines count
as kept.
"""

from __future__ import annotations

import re

from memory_plugin.errors import MemoryWriteError
from memory_plugin.safety import screen, strip_control
from memory_plugin.text import tokens

MIN_LINES = 4
MAX_DROP = 0.5
_FENCE = re.compile(r"^```[\w+-]*\s*\n?(.*?)\n?```$", re.DOTALL)
_HEADING = re.compile(r"^\s*#{1,6}\s")
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


def _content_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.strip() and not _HEADING.match(line)]


def _words(line: str) -> set[str]:
    return {w for w in tokens(line) if len(w) >= 3 or w.isdigit()}


def dropped(previous: str, new: str) -> tuple[int, int]:
    """(content lines of `previous` gone from `new`, content lines of `previous`)."""
    lines = [words for line in _content_lines(previous) if (words := _words(line))]
    present = set(tokens(new))
    gone = sum(1 for words in lines if len(words & present) * 2 < len(words))
    return gone, len(lines)


def checked_rewrite(
    reply: object,
    *,
    previous: str,
    what: str,
    min_lines: int = MIN_LINES,
    max_drop: float = MAX_DROP,
) -> str:
    """The reply's text, cleaned, if it may replace `previous`; else RejectedReply."""
    raw = reply_text(reply)
    text = strip_control(raw, keep_newlines=True).strip()
    if not text:
        fence = str(getattr(reply, "text", "") or "").strip().startswith("```")
        raise RejectedReply(what, "the reply is an empty code fence" if fence else "it is empty")
    if is_refusal(text):
        raise RejectedReply(what, f"it is a refusal ({text.splitlines()[0][:80]!r})")
    gone, total = dropped(previous, text)
    if total >= min_lines and gone > max_drop * total:
        raise RejectedReply(what, f"it drops {gone} of the {total} lines of the previous text")
    try:
        screen(text, what, lines=True)
    except MemoryWriteError as exc:
        raise RejectedReply(what, f"the safety screen refused it ({exc})") from None
    return text
