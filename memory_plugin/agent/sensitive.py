"""Credentials and personal data in an agent entry: they force private visibility."""

from __future__ import annotations

import re

_CREDENTIAL = re.compile(
    r"-----BEGIN [A-Z ]*PRIVATE KEY-----"
    r"|\b(?:sk|pk|rk)-[A-Za-z0-9_-]{16,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
    r"|\bgh[pousr]_[A-Za-z0-9]{20,}"
    r"|\bxox[abprs]-[A-Za-z0-9-]{10,}"
    r"|\b(?:password|passwd|pwd|passcode|api[_ -]?key|secret|token)\b\s*(?:is|[:=])\s*\S{4,}",
    re.IGNORECASE,
)
_PERSONAL = re.compile(
    r"[\w.+-]+@[\w-]+\.[\w.-]+"
    r"|\+?\d[\d ()-]{8,}\d"
    r"|\b\d{3}-\d{2}-\d{4}\b"
    r"|\b(?:IBAN|passport|social security)\b",
    re.IGNORECASE,
)


def sensitive(text: str) -> str | None:
    """What sensitive data the text holds ("credentials" or "personal data"), None if none."""
    if _CREDENTIAL.search(text):
        return "credentials"
    if _PERSONAL.search(text):
        return "personal data"
    return None
