"""Credentials and personal data in an agent entry: they force private visibility."""

from __future__ import annotations

import re

from memory_plugin.safety import credential_kind

_PERSONAL = re.compile(
    r"[\w.+-]+@[\w-]+\.[\w.-]+"
    r"|\+?\d[\d ()-]{8,}\d"
    r"|\b\d{3}-\d{2}-\d{4}\b"
    r"|\b(?:IBAN|passport|social security)\b",
    re.IGNORECASE,
)


def sensitive(text: str) -> str | None:
    """What sensitive data the text holds (a credential's kind, or "personal data"), else None."""
    kind = credential_kind(text)
    if kind is not None:
        return f"a credential ({kind})"
    if _PERSONAL.search(text):
        return "personal data"
    return None
