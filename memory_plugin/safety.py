"""Screening memory text before it is stored: it is re-injected into every prompt."""

from __future__ import annotations

import re
import unicodedata

from memory_plugin.errors import MemoryWriteError

# Invisible or direction-changing characters hide text from a human reviewer.
_HIDDEN = re.compile("[\u200b\u200c\u200d\u2060\ufeff\u202a-\u202e\u2066-\u2069]")
_INJECTION = [
    re.compile(p, re.IGNORECASE | re.MULTILINE)
    for p in (
        r"\bignore\s+(all\s+)?(the\s+)?(previous|prior|above|earlier)\s+(instructions|prompts?|messages?)",
        r"\bdisregard\s+(all\s+)?(the\s+)?(previous|prior|above|system)\s+(instructions|prompts?)",
        r"^\s*(-\s*)?(system|assistant|developer)\s*:",
        r"</?\s*(system|recent_memory_notes|memory_document|user_memory)\b",
        r"\byou\s+are\s+now\s+(in\s+)?(developer|dan|jailbreak)",
    )
]


def strip_control(text: str, *, keep_newlines: bool) -> str:
    """Remove control characters (keeping line breaks and tabs in multi-line text)."""
    allowed = "\n\t" if keep_newlines else ""
    return "".join(ch for ch in text if ch in allowed or unicodedata.category(ch) != "Cc")


def screen(text: str, what: str) -> None:
    """Refuse text that hides characters or tries to steer the model."""
    if _HIDDEN.search(text):
        raise MemoryWriteError(f"{what} contains invisible or bidirectional control characters")
    for pattern in _INJECTION:
        if pattern.search(text):
            raise MemoryWriteError(
                f"{what} reads like an instruction to the model, not a memory; state it as a fact"
            )
