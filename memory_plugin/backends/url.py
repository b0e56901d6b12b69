"""Parsing backend URLs: memory://, sqlite:///path, postgresql://..."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from memory_plugin.errors import BackendError

DEFAULT_URL = "sqlite:///.memory/memory.db"
URL_ENV = "MEMORY_URL"
Kind = Literal["memory", "sqlite", "postgres"]
_POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")


@dataclass(frozen=True)
class BackendURL:
    """A parsed backend URL."""

    kind: Kind
    target: str
    display: str


def redact(url: str) -> str:
    """The URL with any password replaced, safe for logs and error messages."""
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.replace(f":{parts.password}@", ":***@", 1)
    return urlunsplit(parts._replace(netloc=netloc))


def parse_url(url: str | None = None) -> BackendURL:
    """Parse a backend URL; None means $MEMORY_URL or the embedded SQLite default."""
    url = url or os.environ.get(URL_ENV) or DEFAULT_URL
    if not isinstance(url, str) or "://" not in url:
        raise BackendError(
            f"backend URL {url!r} is malformed; expected memory://, sqlite:///path or postgresql://..."
        )
    scheme, rest = url.split("://", 1)
    scheme = scheme.lower()
    if scheme == "memory":
        return BackendURL("memory", "", url)
    if scheme == "sqlite":
        if rest not in ("", "/") and not rest.startswith("/"):
            raise BackendError(f"SQLite URL {url!r} must look like sqlite:///relative/path.db")
        path = rest[1:] if rest.startswith("/") else ""
        if path == ":memory:":
            return BackendURL("sqlite", path, url)
        return BackendURL("sqlite", str(Path(path or DEFAULT_URL.split(":///", 1)[1])), url)
    if scheme in _POSTGRES_SCHEMES:
        target = "postgresql://" + rest
        return BackendURL("postgres", target, redact(target))
    raise BackendError(
        f"unknown backend URL scheme {scheme!r} in {redact(url)!r}; "
        "use memory://, sqlite:///path or postgresql://..."
    )
