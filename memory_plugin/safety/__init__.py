"""The one safety screen for every memory write: memory is re-injected into every prompt.

`screen(text, what)` raises a MemoryWriteError naming the rule the text breaks: NUL and lone
surrogates (no store keeps them, see `refuse_unstorable`), hidden characters (checked on the
raw text), instructions to the model, role or tag markers, secret exfiltration, persistence
or backdoors (matched on normalised forms of the text, see `normalise.variants`), and
credentials, which only private memory may hold. Text these built-in stages pass then goes
to the active screen's operator check and judge, when it has them (see `staged`).
"""

from __future__ import annotations

import re

from memory_plugin.errors import MemoryWriteError
from memory_plugin.safety.builtin import (
    builtin_violation,
    first_refused_line,
    rules_violation,
    unstorable,
)
from memory_plugin.safety.check import Check, Visibility
from memory_plugin.safety.credentials import credential_kind
from memory_plugin.safety.staged import Screen, active_screen, screen_from, screening

__all__ = [
    "Check",
    "Screen",
    "Visibility",
    "active_screen",
    "builtin_violation",
    "credential_kind",
    "refuse_unstorable",
    "rules_violation",
    "screen",
    "screen_from",
    "screening",
    "strip_control",
    "violation",
    "visibility_of",
]
_SHARED_KINDS = frozenset({"team", "agent"})


def visibility_of(scope_kind: str) -> Visibility:
    """Whom a scope's memory reaches: team and agent-wide memory are shared."""
    return "shared" if scope_kind in _SHARED_KINDS else "private"


# The control characters (Unicode category Cc, U+0000-U+001F and U+007F-U+009F) but NUL, and
# also but line feed and tab.
_CONTROL = re.compile("[\x01-\x1f\x7f-\x9f]")
_CONTROL_BUT_LINES = re.compile("[\x01-\x08\x0b-\x1f\x7f-\x9f]")


def strip_control(text: str, *, keep_newlines: bool) -> str:
    """Remove control characters (keeping line breaks and tabs in multi-line text); NUL is
    kept, for the screen to refuse it by name rather than drop it unseen."""
    return (_CONTROL_BUT_LINES if keep_newlines else _CONTROL).sub("", text)


def refuse_unstorable(text: str, what: str) -> None:
    """Refuse text holding NUL or a lone surrogate (no store keeps them), naming the character."""
    reason = unstorable(text)
    if reason is not None:
        raise MemoryWriteError(f"{what} {reason}")


def violation(text: str, *, visibility: Visibility = "private") -> str | None:
    """Why the text may not be stored (what is wrong, then the rule's or stage's name), else
    None: the active screen's verdict (memory_plugin.safety.staged; by default the built-in
    stages alone)."""
    return active_screen().violation(text, visibility)


def screen(
    text: str, what: str, *, visibility: Visibility = "private", lines: bool = False
) -> None:
    """Refuse text that hides characters, steers the model, leaks or plants secrets. With
    `lines`, each line is judged alone; only a line feed ends a line, as in what is stored
    (other breaks, such as a vertical tab, are control characters dropped from it) by the
    built-in stages, and the active screen's operator check and judge see the whole text once."""
    if lines:
        split = text.split("\n")
        found = first_refused_line(split, visibility)
        if found is not None:
            index, why = found
            preview = split[index].strip()
            preview = preview if len(preview) <= 60 else preview[:57] + "..."
            raise MemoryWriteError(f"{what} at line {index + 1} ({preview!r}) {why}")
        later = active_screen().later(text, visibility)
        if later is not None:
            raise MemoryWriteError(f"{what} {later}")
        return
    reason = violation(text, visibility=visibility)
    if reason is not None:
        raise MemoryWriteError(f"{what} {reason}")
