"""The pieces of the readable (Markdown) export each kind renders its items with."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def origin_of(value: Mapping[str, Any]) -> str:
    """Who or what wrote an item, and when, from its provenance."""
    found = value.get("provenance")
    if isinstance(found, list):
        found = found[-1] if found else None
    if not isinstance(found, dict):
        return ""
    parts = [str(found.get("source", "?"))]
    if found.get("actor"):
        parts.append(f"by {found['actor']}")
    if found.get("thread_id"):
        parts.append(f"in thread {found['thread_id']}")
    if found.get("at"):
        parts.append(f"at {found['at']}")
    return f" _({' '.join(parts)})_"


def quoted(text: str) -> list[str]:
    """Text as a Markdown quote."""
    return [f"> {line}" if line else ">" for line in text.splitlines()] or [">"]
