"""What a stage of the safety screen is: a `Check` of text by whom it reaches (`Visibility`),
and `CheckFailed`, raised by a later stage that has no verdict."""

from __future__ import annotations

from collections.abc import Callable
from typing import Literal

Visibility = Literal["private", "shared"]
Check = Callable[[str, Visibility], "str | None"]
"""An extra check: `check(text, visibility)` returns a reason to refuse the text, else None."""
OnFailure = Literal["refuse", "allow"]


class CheckFailed(Exception):
    """A later stage gave no verdict: it raised, timed out or answered garbage."""
