"""Injective mapping from arbitrary id strings to LangGraph store namespace labels."""

from __future__ import annotations

from urllib.parse import quote, unquote

from memory_plugin.errors import InvalidIdError

ROOT = "memory_plugin"

# Letters, digits, "_-~" and these stay as they are; everything else, "." (forbidden in
# labels) and "%" (the escape character) included, is percent-encoded, so decoding is exact.
_SAFE = "-_~@+=:,;!$&'()*"


def encode_id(value: str, *, what: str = "id") -> str:
    """Encode an id as a non-empty namespace label with no "." in it."""
    if not isinstance(value, str):
        raise InvalidIdError(f"{what} must be a string, got {type(value).__name__}")
    if value == "":
        raise InvalidIdError(f"{what} must not be empty")
    return quote(value, safe=_SAFE, errors="surrogatepass").replace(".", "%2E")


def decode_id(label: str) -> str:
    """Invert encode_id."""
    return unquote(label, errors="surrogatepass")


def namespace(*parts: str) -> tuple[str, ...]:
    """Build a namespace under the plugin's root label."""
    return (ROOT, *parts)
