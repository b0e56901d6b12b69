"""The one safety screen for every memory write: memory is re-injected into every prompt.

`screen(text, what)` raises a MemoryWriteError naming the rule the text breaks: NUL and lone
surrogates (no store keeps them, see `refuse_unstorable`), hidden characters (checked on the
raw text), instructions to the model, role or tag markers, secret exfiltration, persistence
or backdoors (matched on normalised forms of the text, see `normalise.variants`), and
credentials, which only private memory may hold. Text these built-in stages pass then goes
to the active screen's operator check and judge, when it has them (see `staged`).
"""

from __future__ import annotations

import unicodedata

from memory_plugin.errors import MemoryWriteError
from memory_plugin.safety.classifier import shipped
from memory_plugin.safety.credentials import credential_kind
from memory_plugin.safety.normalise import hidden_character, variants
from memory_plugin.safety.rules import first_broken
from memory_plugin.safety.staged import (
    Check,
    Screen,
    Visibility,
    active_screen,
    screen_from,
    screening,
)
from memory_plugin.storable import unstorable_character

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


def strip_control(text: str, *, keep_newlines: bool) -> str:
    """Remove control characters (keeping line breaks and tabs in multi-line text); NUL is
    kept, for the screen to refuse it by name rather than drop it unseen."""
    allowed = "\n\t\x00" if keep_newlines else "\x00"
    return "".join(ch for ch in text if ch in allowed or unicodedata.category(ch) != "Cc")


def _unstorable(text: str) -> str | None:
    found = unstorable_character(text)
    if found is None:
        return None
    return f"contains {found}, which is not text (safety screen rule: NUL and lone surrogates)"


def refuse_unstorable(text: str, what: str) -> None:
    """Refuse text holding NUL or a lone surrogate (no store keeps them), naming the character."""
    reason = _unstorable(text)
    if reason is not None:
        raise MemoryWriteError(f"{what} {reason}")


def violation(text: str, *, visibility: Visibility = "private") -> str | None:
    """Why the text may not be stored (what is wrong, then the rule's or stage's name), else
    None: the active screen's verdict (memory_plugin.safety.staged; by default the built-in
    stages alone)."""
    return active_screen().violation(text, visibility)


def builtin_violation(text: str, *, visibility: Visibility = "private") -> str | None:
    """The built-in stages' verdict: why the text may not be stored (what is wrong, then the
    rule's name), else None. The rules run first; text they pass goes to the classifier."""
    return _builtin(text, visibility, learned=True)


def rules_violation(text: str, *, visibility: Visibility = "private") -> str | None:
    """The first stage's verdict: storable text, no hidden characters, no rule pattern on any
    normalised form, no credential in shared memory; what is wrong and the rule, else None."""
    return _builtin(text, visibility, learned=False)


_CLASSIFIER = (
    "reads as an instruction to a model rather than a memory; write what is true, not "
    "what the assistant should do (safety screen rule: classifier)"
)
_BATCH_CHARS = 200_000
"""Characters of normalised forms the classifier scores in one batch when screening a
document line by line."""


def _builtin(text: str, visibility: Visibility, *, learned: bool) -> str | None:
    reason, forms = _ruled(text, visibility)
    if reason is not None:
        return reason
    if learned and any(shipped().refusals(forms)):
        return _CLASSIFIER
    return None


def _ruled(text: str, visibility: Visibility) -> tuple[str | None, list[str]]:
    """The stages before the classifier: why the text is refused, else None with the
    normalised forms the classifier judges."""
    unstorable = _unstorable(text)
    if unstorable is not None:
        return unstorable, []
    hidden = hidden_character(text)
    if hidden is not None:
        return (
            f"contains the invisible or bidirectional character {hidden} "
            "(safety screen rule: hidden characters)"
        ), []
    forms = variants(text)
    rule = first_broken(forms)
    if rule is not None:
        return f"{rule.refusal} (safety screen rule: {rule.name})", forms
    if visibility == "shared":
        kind = credential_kind(text)
        if kind is not None:
            return (
                f"holds a secret ({kind}), and shared memory is seen by the whole workspace; "
                "keep secrets in a secret manager (safety screen rule: credential)"
            ), forms
    return None, forms


def _first_refused_line(lines: list[str], visibility: Visibility) -> tuple[int, str] | None:
    """The first line the built-in stages refuse (its index) and why, else None: the verdict
    of `builtin_violation` on each line in turn, with each distinct line judged once and the
    classifier scoring the forms of the lines the earlier stages pass in batches."""
    seen: set[str] = set()
    pending: list[tuple[int, list[str]]] = []  # lines the earlier stages pass, with forms
    chars = 0
    for index, line in enumerate(lines):
        if line in seen:
            continue  # refused or not as where it first appeared
        seen.add(line)
        reason, forms = _ruled(line, visibility)
        if reason is not None:
            return _first_learned(pending) or (index, reason)
        pending.append((index, forms))
        chars += sum(map(len, forms))
        if chars >= _BATCH_CHARS:
            found = _first_learned(pending)
            if found is not None:
                return found
            pending, chars = [], 0
    return _first_learned(pending)


def _first_learned(pending: list[tuple[int, list[str]]]) -> tuple[int, str] | None:
    """The first of the lines whose forms the classifier refuses, and why, else None."""
    verdicts = iter(shipped().refusals([form for _, forms in pending for form in forms]))
    for index, forms in pending:
        if any([next(verdicts) for _ in forms]):
            return index, _CLASSIFIER
    return None


def screen(
    text: str, what: str, *, visibility: Visibility = "private", lines: bool = False
) -> None:
    """Refuse text that hides characters, steers the model, leaks or plants secrets. With
    `lines`, each line is judged alone; only a line feed ends a line, as in what is stored
    (other breaks, such as a vertical tab, are control characters dropped from it) by the
    built-in stages, and the active screen's operator check and judge see the whole text once."""
    if lines:
        split = text.split("\n")
        found = _first_refused_line(split, visibility)
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
