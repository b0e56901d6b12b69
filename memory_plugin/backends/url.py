"""Parsing backend URLs: memory://, sqlite:///path, postgresql://... (or a libpq key=value
string), and keeping their secrets out of every message."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal
from urllib.parse import parse_qsl, quote, unquote, urlsplit, urlunsplit

from memory_plugin.errors import BackendError

DEFAULT_URL = "sqlite:///.memory/memory.db"
URL_ENV = "MEMORY_URL"
BackendKind = Literal["memory", "sqlite", "postgres"]
_POSTGRES_SCHEMES = ("postgresql", "postgres", "postgresql+psycopg")
_HIDDEN = "***"

_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
_KEY_VALUE = re.compile(r"^\s*[A-Za-z_]+\s*=")
_SECRET_KEYS = r"(?:ssl)?password|oauth_client_secret|scram_(?:client|server)_key"
_QUERY_SECRET = re.compile(rf"([?&](?:{_SECRET_KEYS})=)([^&#]*)", re.I)
_KV_SECRET = re.compile(rf"(\b(?:{_SECRET_KEYS})\s*=\s*)('(?:\\.|[^'\\])*'|[^\s&#]*)", re.I)
_QUOTED = re.compile(r"\"([^\"]*)\"|'([^']*)'")


POOL_MAX_DEFAULT = 10
_POOL_LIMITS: dict[str, tuple[type, float, float]] = {
    "pool_max": (int, 1, 1_000),
    "pool_min": (int, 0, 1_000),
    "pool_timeout": (float, 0.1, 600),
}
PREPARED = "prepared_statements"
Prepared = Literal["auto", "on", "off"]
_PREPARED_VALUES: tuple[Prepared, ...] = ("auto", "on", "off")


@dataclass(frozen=True)
class PoolConfig:
    """Connection options of a PostgreSQL URL (`?pool_max=10&pool_timeout=5`); `timeout`
    None means the store_timeout_seconds setting; `prepared` says whether server-side
    prepared statements are used: "auto" turns them off behind a connection pooler."""

    max_size: int = POOL_MAX_DEFAULT
    min_size: int = 1
    timeout: float | None = None
    prepared: Prepared = "auto"


def _pool_value(name: str, raw: str, display: str) -> float:
    kind, low, high = _POOL_LIMITS[name]
    try:
        value = kind(raw)
    except ValueError:
        value = None
    if value is None or not low <= value <= high:
        what = "an integer" if kind is int else "a number of seconds"
        raise BackendError(
            f"{name}={raw!r} in PostgreSQL URL {display} must be {what} from {low:g} to {high:g}"
        )
    return float(value)


def _prepared_value(raw: str, display: str) -> Prepared:
    for value in _PREPARED_VALUES:
        if raw.lower() == value:
            return value
    raise BackendError(
        f"{PREPARED}={raw!r} in PostgreSQL URL {display} must be one of "
        f"{', '.join(_PREPARED_VALUES)} (off behind a transaction-mode pooler such as PgBouncer)"
    )


def _ours(part: str) -> bool:
    name = unquote(part).split("=", 1)[0]
    return name.startswith("pool_") or name == PREPARED


def split_pool_options(target: str) -> tuple[str, PoolConfig]:
    """The PostgreSQL URL without this plugin's own query options (pool_*,
    prepared_statements), and those options (validated)."""
    if not target.startswith("postgresql://") or "?" not in target:
        return target, PoolConfig()
    parts = urlsplit(target)
    query = parse_qsl(parts.query, keep_blank_values=True)
    display = redact(target)
    found: dict[str, float] = {}
    prepared: Prepared = "auto"
    for name, raw in query:
        if name == PREPARED:
            prepared = _prepared_value(raw, display)
        elif name.startswith("pool_"):
            if name not in _POOL_LIMITS:
                known = ", ".join(_POOL_LIMITS)
                raise BackendError(
                    f"unknown pool option {name!r} in PostgreSQL URL {display}; known: {known}"
                )
            found[name] = _pool_value(name, raw, display)
    config = PoolConfig(
        max_size=int(found.get("pool_max", POOL_MAX_DEFAULT)),
        min_size=int(found.get("pool_min", 1)),
        timeout=found.get("pool_timeout"),
        prepared=prepared,
    )
    if config.min_size > config.max_size:
        raise BackendError(
            f"pool_min={config.min_size} exceeds pool_max={config.max_size} "
            f"in PostgreSQL URL {display}"
        )
    kept = "&".join(part for part in parts.query.split("&") if not _ours(part))
    return urlunsplit(parts._replace(query=kept)), config


@dataclass(frozen=True)
class BackendURL:
    """A parsed backend URL: `target` for the driver, `display` (no password) for people."""

    kind: BackendKind
    target: str
    display: str


def _split_userinfo(rest: str) -> tuple[str, str] | None:
    """(userinfo, host and the rest) split at the last "@", so a password may hold "@", "/",
    "?" or "#" unencoded; None without credentials."""
    at = rest.rfind("@")
    return (rest[:at], rest[at + 1 :]) if at != -1 else None


def _url_passwords(url: str) -> list[str]:
    found = [match.group(2) for match in _QUERY_SECRET.finditer(url)]
    found += [match.group(2).strip("'") for match in _KV_SECRET.finditer(url)]
    scheme = _SCHEME.match(url)
    if scheme:
        split = _split_userinfo(url[scheme.end() :])
        if split is not None and ":" in split[0]:
            password = split[0].split(":", 1)[1]
            found += [password, unquote(password), *re.split(r"[@/?#:]", password)]
    return [secret for secret in found if secret]


def redact(url: str) -> str:
    """The URL or key=value string with every password replaced, safe for logs and errors."""
    text = _QUERY_SECRET.sub(rf"\1{_HIDDEN}", url)
    text = _KV_SECRET.sub(rf"\1{_HIDDEN}", text)
    scheme = _SCHEME.match(text)
    if scheme is None:
        return text
    split = _split_userinfo(text[scheme.end() :])
    if split is None or ":" not in split[0]:
        return text
    user = split[0].split(":", 1)[0]
    return f"{text[: scheme.end()]}{user}:{_HIDDEN}@{split[1]}"


def scrub(text: str, url: str) -> str:
    """A driver's error text about `url` with nothing of the URL's passwords left in it.

    Every password (raw, decoded, and the pieces a driver that splits at the first "@" or
    "/" would take for a host or port) is replaced, and so is every quoted fragment of the
    URL (three characters or more) that is not a parsed host, port, user, database or option
    name.
    """
    for secret in sorted(set(_url_passwords(url)), key=len, reverse=True):
        if len(secret) >= 3:
            text = text.replace(secret, _HIDDEN)
    keep = _public_parts(url)

    def fragment(match: re.Match[str]) -> str:
        quoted = match.group(1) if match.group(1) is not None else match.group(2)
        if len(quoted) < 3 or quoted in keep or quoted not in url:
            return match.group(0)
        return match.group(0).replace(quoted, _HIDDEN)

    return redact(_QUOTED.sub(fragment, text))


def _public_parts(url: str) -> set[str]:
    """The option names and the non-secret values a driver may quote back."""
    import psycopg
    from psycopg.conninfo import conninfo_to_dict

    keep = {d.keyword.decode() for d in psycopg.pq.Conninfo.get_defaults()}
    try:
        parsed = conninfo_to_dict(url)
    except psycopg.Error:
        return keep
    for name in ("host", "hostaddr", "port", "user", "dbname"):
        value = parsed.get(name)
        if value is not None:
            keep.add(str(value))
            keep.update(str(value).split(","))
    return keep


def _postgres_target(rest: str) -> str:
    """postgresql://rest with user and password percent-encoded exactly once."""
    split = _split_userinfo(rest)
    if split is None:
        return "postgresql://" + rest
    userinfo, host = split
    user, sep, password = userinfo.partition(":")
    encoded = quote(unquote(user), safe="")
    if sep:
        encoded += ":" + quote(unquote(password), safe="")
    return f"postgresql://{encoded}@{host}"


def parse_url(url: str | None = None) -> BackendURL:
    """Parse a backend URL; None means $MEMORY_URL or the embedded SQLite default."""
    url = url or os.environ.get(URL_ENV) or DEFAULT_URL
    if not isinstance(url, str):
        raise BackendError(f"backend URL must be a string, got {type(url).__name__}")
    scheme_match = _SCHEME.match(url)
    if scheme_match is None:
        if _KEY_VALUE.match(url):
            return BackendURL("postgres", url, redact(url))
        raise BackendError(
            f"backend URL {redact(url)!r} is malformed; expected memory://, sqlite:///path, "
            "postgresql://... or a PostgreSQL key=value string"
        )
    scheme = scheme_match.group(1).lower()
    rest = url[scheme_match.end() :]
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
        target = _postgres_target(rest)
        split_pool_options(target)
        return BackendURL("postgres", target, redact(target))
    raise BackendError(
        f"unknown backend URL scheme {scheme!r} in {redact(url)!r}; "
        "use memory://, sqlite:///path or postgresql://..."
    )
