"""When a model's profile rewrite may replace the stored profile.

A consolidation or condensation reply is refused (RejectedReply, nothing is replaced) when it
is empty or a bare code fence, a refusal, not a profile or a section written as prose (see
`document.repair`), or when a bullet it adds or rewrites fails the safety screen or could
close one of the tags the profile is shown in. A consolidation may also not drop what the user
did not take back: more than MAX_DROPPED bullets, or more than MAX_DROPPED_SHARE of them, gone
from the durable sections (every section but Recent Topics, which the model is asked to trim)
is refused unless the user's message asks to forget or correct something. A bullet is gone
when fewer than half of its words or names are left anywhere in the rewrite
(`replies.coverage`), so a bullet moved to another section, merged or reworded is not, and one
overwritten with an unrelated fact is. A condensation, whose job is to merge and shorten, must
keep the profile's facts as every rewrite must (`replies.lost_facts`).
"""

from __future__ import annotations

import re
from datetime import datetime

from memory_plugin.errors import MemoryWriteError
from memory_plugin.models.replies import (
    RejectedReply,
    coverage,
    is_refusal,
    lost_facts,
    reply_text,
)
from memory_plugin.profile.changes import diff
from memory_plugin.profile.document import RECENT, SECTIONS, Profile, repair
from memory_plugin.safety import screen

WHAT = "the profile rewrite"
MAX_DROPPED = 2
MAX_DROPPED_SHARE = 0.25
_DURABLE = tuple(s for s in SECTIONS if s != RECENT)
_PROMPT_TAG = re.compile(r"</?\s*(profile|exchange|user|assistant)\s*>", re.I)
_OBJECT = (
    r"(?=(?:\W+\w+){0,3}?\W+(?:that|this|it|those|these|my|me|mine|everything|all|what|"
    r"about|from\s+(?:your|the)\s+(?:memory|notes|profile)))"
)
_TAKE_BACK = re.compile(
    "|".join(
        (
            r"(?<!don't )(?<!do not )(?<!never )\bforget\b",
            r"\b(?:remove|delete|erase|wipe|clear|drop|scrap|scratch|discard|disregard|ignore|"
            r"strike|unlearn|undo)\b" + _OBJECT,
            r"\bno\s+longer\b|\bnot\s+any\s+longer\b|\bany\s?more\b(?!\s+\w)",
            r"\b(?:wrong|incorrect|inaccurate|untrue|mistaken|outdated|out\s+of\s+date|obsolete)"
            r"\b(?!\s+with\b)",
            r"\b(?:not|isn't|wasn't)\s+(?:true|right|correct|accurate)\b",
            r"\bcorrect\s+(?:that|this|it|me|you|the|my)\b|\bcorrection\b|\bi\s+misspoke\b",
            r"\bi\s+meant\b|\bactually\b|\bused\s+to\b|\bnever\s?mind\b|\bchanged\s+my\s+mind\b",
            r"\b(?:quit|resigned|retired|dropped\s+out|gave\s+up|stopped)\b",
            r"\bi(?:'m|\s+am)\s+not\s+(?:a|an|the|in|at|from|with|working|living|studying)\b",
            r"\bi\s+(?:don't|do\s+not)\s+(?:work|live|use|do|study|speak|have|lead|own)\b",
        )
    ),
    re.IGNORECASE,
)


def takes_back(message: str) -> bool:
    """Whether the user's message asks to forget, remove or correct something remembered."""
    return bool(_TAKE_BACK.search(message.replace("\u2019", "'")))


def proposed(reply: object, base: Profile, now: datetime) -> Profile:
    """The profile a reply proposes on top of `base`; RejectedReply when it is empty, a bare
    code fence, a refusal, not a profile, or a section written as prose."""
    text = reply_text(reply)
    if not text:
        fenced = str(getattr(reply, "text", "") or "").strip().startswith("```")
        raise RejectedReply(WHAT, "the reply is an empty code fence" if fenced else "it is empty")
    if is_refusal(text):
        raise RejectedReply(WHAT, f"it is a refusal ({text.splitlines()[0][:80]!r})")
    try:
        return repair(text, base, now)
    except ValueError as exc:
        raise RejectedReply(WHAT, str(exc)) from None


def _screen_new_bullets(old: Profile, new: Profile) -> None:
    for change in diff(old, new):
        if change.after is None:
            continue
        try:
            for text in new.written.get(change.after) or (change.after,):
                screen(text, f"the {change.section} bullet")
            if _PROMPT_TAG.search(change.after):
                raise MemoryWriteError(f"the {change.section} bullet contains a prompt tag")
        except MemoryWriteError as exc:
            raise RejectedReply(WHAT, f"the safety screen refused it ({exc})") from None


def _lines(profile: Profile) -> str:
    return "\n".join(b for s in SECTIONS for b in profile.bullets(s))


def check_consolidation(old: Profile, new: Profile, user_message: str) -> None:
    """Refuse a consolidation that adds unsafe text or drops bullets the user did not take
    back."""
    _screen_new_bullets(old, new)
    text = _lines(new)
    kept = set(text.split("\n"))
    gone = [
        b
        for s in _DURABLE
        for b in old.bullets(s)
        if b not in kept and not coverage(b, text).holds()
    ]
    total = sum(len(old.bullets(s)) for s in _DURABLE)
    too_many = len(gone) > MAX_DROPPED or len(gone) > MAX_DROPPED_SHARE * total
    if too_many and not takes_back(user_message):
        raise RejectedReply(
            WHAT,
            f"it drops {len(gone)} of the {total} bullets (first: {gone[0]!r}) though the user "
            "asked to forget or correct nothing",
        )


def check_condensation(old: Profile, new: Profile) -> None:
    """Refuse a condensation that adds unsafe text or drops most of the profile."""
    _screen_new_bullets(old, new)
    if (reason := lost_facts(_lines(old), _lines(new))) is not None:
        raise RejectedReply(WHAT, reason)
