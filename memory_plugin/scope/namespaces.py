"""Injective mapping from arbitrary id strings to LangGraph store namespace labels."""

from __future__ import annotations

import unicodedata
from urllib.parse import quote, unquote

from memory_plugin.errors import InvalidIdError

ROOT = "memory_plugin"

# Letters, digits, "_-~" and these stay as they are; everything else, "." (forbidden in
# labels) and "%" (the escape character) included, is percent-encoded, so decoding is exact.
_SAFE = "-_~@+=:,;!$&'()*"

MAX_ID_BYTES = 256
"""The longest id, in UTF-8 bytes. Its label is at most 3 x 256 = 768 characters, so the
deepest namespace (org, workspace and user ids) stays well inside PostgreSQL's btree limit
on the store's (prefix, key) index (2,704 bytes): tests/test_trust_identity.py proves it."""

# Categories that draw nothing: controls, format characters (zero-width, bidi, BOM), spaces
# and line separators, combining marks with no base; plus blank letters and symbols.
_INVISIBLE_CATEGORIES = frozenset(("Cc", "Cf", "Zs", "Zl", "Zp", "Mn", "Me"))
_BLANK = frozenset("\u115f\u1160\u3164\uffa0\u2800")


def _invisible(char: str) -> bool:
    return char.isspace() or char in _BLANK or unicodedata.category(char) in _INVISIBLE_CATEGORIES


def check_id(value: object, *, what: str = "id") -> str:
    """The id itself when it is usable, else InvalidIdError naming `what` and the reason."""
    if not isinstance(value, str):
        raise InvalidIdError(f"{what} must be a string, got {type(value).__name__}")
    if value == "":
        raise InvalidIdError(f"{what} must not be empty")
    if all(_invisible(char) for char in value):
        raise InvalidIdError(f"{what} must not be blank (only whitespace or invisible characters)")
    for char in value:
        category = unicodedata.category(char)
        if category == "Cc":
            raise InvalidIdError(f"{what} must not contain control characters ({char!r})")
        if category == "Cs":
            raise InvalidIdError(f"{what} must not contain lone surrogates ({char!r})")
    size = len(value.encode("utf-8"))
    if size > MAX_ID_BYTES:
        raise InvalidIdError(
            f"{what} is too long: {size} bytes in UTF-8, at most {MAX_ID_BYTES} allowed"
        )
    return value


def encode_id(value: str, *, what: str = "id") -> str:
    """Encode a valid id (see check_id) as a non-empty namespace label with no "." in it."""
    return quote(check_id(value, what=what), safe=_SAFE).replace(".", "%2E")


def decode_id(label: str) -> str:
    """Invert encode_id."""
    return unquote(label)


def namespace(*parts: str) -> tuple[str, ...]:
    """Build a namespace under the plugin's root label."""
    return (ROOT, *parts)
