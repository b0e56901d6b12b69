"""The staged safety screen: the built-in rules, then an operator's check, then a judge.

Every write path calls `memory_plugin.safety.screen` (or `violation`), which asks the active
`Screen`. The built-in stages always run first (NUL and lone surrogates, hidden characters,
the rules on normalised forms, credentials in shared memory); text they pass goes to the
operator's `check` and then to the `judge`, when the screen has them. A refusal names its
stage: "(safety screen rule: ...)" for a built-in rule, "(safety screen: operator check)" or
"(safety screen: judge)" for the later stages.

The active screen is a context variable (`screening(screen)` sets it), so a graph, the console
or the CLI set it once and every write path they reach gives the same verdict for the same
text without passing it along. Outside any `screening` block the default `Screen()` applies:
the built-in stages alone.

A check is any callable with the signature of `Check`: given the text as the caller wrote it
and whom it reaches ("private": one user's memory, "shared": memory the workspace or every
user of an agent sees), it returns a reason to refuse ("reads as an ad") or None to pass.
A check that raises, or returns anything but a non-empty string or None, has failed: private
memory is then stored (the failure is logged), and shared memory follows `on_failure`
("refuse", the default, or "allow"; the `screen_judge_failure` setting).
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING

from memory_plugin.errors import SettingsError
from memory_plugin.safety.builtin import builtin_violation
from memory_plugin.safety.check import Check, CheckFailed, OnFailure, Visibility
from memory_plugin.safety.classifier import shipped
from memory_plugin.safety.concept_model import shipped_concepts
from memory_plugin.safety.credentials import prepare as prepare_credentials
from memory_plugin.safety.judge import Judge
from memory_plugin.safety.normalise import prepare as prepare_forms
from memory_plugin.safety.rules import prepare

if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from memory_plugin.settings import MemorySettings

logger = logging.getLogger(__name__)

__all__ = [
    "Check",
    "CheckFailed",
    "OnFailure",
    "Screen",
    "Visibility",
    "active_screen",
    "prepare_screen",
    "screen_from",
    "screening",
]


@dataclass(frozen=True)
class Screen:
    """The stages a write passes: the built-in rules, then `check`, then `judge` (any callable
    of the Check signature that raises CheckFailed when it has no verdict, such as
    memory_plugin.safety.judge.Judge). `on_failure` is what a failed stage means for shared
    memory; private memory is never refused because a stage failed."""

    check: Check | None = None
    judge: Check | None = None
    on_failure: OnFailure = "refuse"

    def __post_init__(self) -> None:
        for name in ("check", "judge"):
            stage = getattr(self, name)
            if stage is not None and not callable(stage):
                raise TypeError(
                    f"the screen's {name} must be a callable check(text, visibility) -> "
                    f"reason or None, got {type(stage).__name__}: {stage!r}"
                )
        if self.on_failure not in ("refuse", "allow"):
            raise ValueError(f"on_failure must be 'refuse' or 'allow', got {self.on_failure!r}")

    def violation(self, text: str, visibility: Visibility = "private") -> str | None:
        """Why the text may not be stored (what is wrong, then the stage), else None."""
        reason = builtin_violation(text, visibility=visibility)
        if reason is not None:
            return reason
        return self.later(text, visibility)

    def later(self, text: str, visibility: Visibility = "private") -> str | None:
        """The operator check's and the judge's verdict on text the built-in stages passed."""
        for stage, name in ((self.check, "operator check"), (self.judge, "judge")):
            if stage is None:
                continue
            reason = self._ask(stage, name, text, visibility)
            if reason is not None:
                return f"{reason} (safety screen: {name})"
        return None

    def _ask(self, stage: Check, name: str, text: str, visibility: Visibility) -> str | None:
        try:
            reason = stage(text, visibility)
            if reason is not None and not (isinstance(reason, str) and reason.strip()):
                raise CheckFailed(f"answered {reason!r}, not a reason or None")
        except Exception as exc:
            failure = str(exc) or type(exc).__name__
            if visibility == "private" or self.on_failure == "allow":
                logger.warning(
                    "safety screen: the %s failed (%s); the %s text is stored",
                    name,
                    failure,
                    visibility,
                )
                return None
            logger.warning(
                "safety screen: the %s failed (%s); the shared text is refused", name, failure
            )
            return (
                f"could not be checked ({failure}), and shared memory is refused when a check "
                "fails (setting screen_judge_failure)"
            )
        if reason is None:
            return None
        return f"was refused: {reason.strip()}" if name == "operator check" else reason


_DEFAULT = Screen()
_ACTIVE: ContextVar[Screen | None] = ContextVar("memory_plugin_screen", default=None)


def active_screen() -> Screen:
    """The screen the write paths use here: the innermost `screening`, else `Screen()`."""
    return _ACTIVE.get() or _DEFAULT


@contextmanager
def screening(screen: Screen) -> Iterator[Screen]:
    """Make `screen` the active screen inside the block (this context and tasks or threads
    started from it with a copy of the context)."""
    token = _ACTIVE.set(screen)
    try:
        yield screen
    finally:
        _ACTIVE.reset(token)


def prepare_screen() -> None:
    """Load the classifier and build the rules' index and RE2 sieves now, not at the first
    write: a missing or damaged classifier file raises ModelFileError naming it (never a silent
    pass)."""
    shipped()
    shipped_concepts()
    prepare()
    prepare_forms()
    prepare_credentials()


def screen_from(
    check: Check | None, settings: MemorySettings, model: BaseChatModel | None = None
) -> Screen:
    """The screen for an operator's `check` and the judge the settings ask for
    (`screen_judge`, `screen_judge_failure`, `screen_judge_timeout`), asking `model`. A check
    that is not callable raises TypeError; a judge with no model raises SettingsError; a
    missing or damaged classifier file raises ModelFileError (see `prepare_screen`)."""
    prepare_screen()
    judge = None
    if settings.screen_judge != "off":
        if model is None:
            raise SettingsError("setting 'screen_judge' needs a maintenance model to ask")
        judge = Judge(
            model, mode=settings.screen_judge, timeout=settings.screen_judge_timeout_seconds
        )
    return Screen(check=check, judge=judge, on_failure=settings.screen_judge_failure)
