"""The built-in stages of the safety screen, which always run first: NUL and lone surrogates,
hidden characters, the rules on normalised forms of the text, credentials in shared memory,
then the shipped classifier: its n-gram model and its concept model (either refuses)."""

from __future__ import annotations

from memory_plugin.safety.check import Visibility
from memory_plugin.safety.classifier import shipped
from memory_plugin.safety.concept_model import shipped_concepts
from memory_plugin.safety.credentials import Candidates, candidates, credential_kind
from memory_plugin.safety.normalise import encoded_runs, hidden_character, variants
from memory_plugin.safety.rules import first_broken
from memory_plugin.storable import unstorable_character


def unstorable(text: str) -> str | None:
    """Why the text cannot be stored (it holds NUL or a lone surrogate), else None."""
    found = unstorable_character(text)
    if found is None:
        return None
    return f"contains {found}, which is not text (safety screen rule: NUL and lone surrogates)"


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
    if learned and (any(shipped().refusals(forms)) or shipped_concepts().refusals([forms])[0]):
        return _CLASSIFIER
    return None


def _ruled(
    text: str,
    visibility: Visibility,
    forms: list[str] | None = None,
    ruled: bool = True,
    among: Candidates | None = None,
) -> tuple[str | None, list[str]]:
    """The stages before the classifier: why the text is refused, else None with the
    normalised forms the classifier judges (`forms`: its variants, where known; `ruled`:
    False where the rule patterns are known to pass them; `among`: the credential patterns
    that may match, where known)."""
    refused = unstorable(text)
    if refused is not None:
        return refused, []
    hidden = hidden_character(text)
    if hidden is not None:
        return (
            f"contains the invisible or bidirectional character {hidden} "
            "(safety screen rule: hidden characters)"
        ), []
    forms = variants(text) if forms is None else forms
    rule = first_broken(forms) if ruled else None
    if rule is not None:
        return f"{rule.refusal} (safety screen rule: {rule.name})", forms
    if visibility == "shared":
        kind = credential_kind(text, among)
        if kind is not None:
            return (
                f"holds a secret ({kind}), and shared memory is seen by the whole workspace; "
                "keep secrets in a secret manager (safety screen rule: credential)"
            ), forms
    return None, forms


def first_refused_line(lines: list[str], visibility: Visibility) -> tuple[int, str] | None:
    """The first line the built-in stages refuse (its index) and why, else None: the verdict
    of `builtin_violation` on each line in turn, with each distinct line judged once and the
    classifier scoring the forms of the lines the earlier stages pass in batches."""
    unique = list(dict.fromkeys(lines))
    runs = encoded_runs(unique)
    distinct = {line: variants(line, runs) for line in unique}
    # A rule pattern that matches no form of any line matches none of a line's: one pass over
    # them all tells a document no line breaks a rule (the usual case) at a fraction of the cost.
    ruled = first_broken([form for forms in distinct.values() for form in forms]) is not None
    among = candidates(unique) if visibility == "shared" else None
    seen: set[str] = set()
    pending: list[tuple[int, list[str]]] = []  # lines the earlier stages pass, with forms
    chars = 0
    for index, line in enumerate(lines):
        if line in seen:
            continue  # refused or not as where it first appeared
        seen.add(line)
        reason, forms = _ruled(line, visibility, distinct[line], ruled, among)
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
    concepts = iter(shipped_concepts().refusals([forms for _, forms in pending]))
    for index, forms in pending:
        if any([next(verdicts) for _ in forms]) | next(concepts):
            return index, _CLASSIFIER
    return None
