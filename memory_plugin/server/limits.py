"""What the console refuses before any route runs: a body over the byte cap (413, without
reading it whole) and a request path or query that is not text (400, naming why).

The cap fits the largest text a route takes, a curated document of the largest hard limit a
settings layer may set plus the compression headroom, at three UTF-8 bytes a character;
each route's body schema then holds its own text to its own limit (see schemas.py).
"""

from __future__ import annotations

import json
from urllib.parse import quote, unquote_to_bytes

from starlette.datastructures import Headers
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memory_plugin.settings import field_bounds

DOCUMENT_HEADROOM = 4
"""A document may be a quarter (1/4) over its hard limit: the compression rewrite brings it
under; anything longer is refused before it is screened or compressed."""


def document_limit(hard_limit: int) -> int:
    """The longest document a write accepts: its hard limit plus the compression headroom."""
    return hard_limit + hard_limit // DOCUMENT_HEADROOM


def largest_setting(name: str) -> int:
    """The largest value a settings layer may give a bounded setting."""
    _, high = field_bounds(name)
    assert high is not None, name
    return int(high)


MAX_DOCUMENT_CHARS = document_limit(largest_setting("document_hard_limit_chars"))
"""The longest document any settings layer lets a route accept."""
MAX_BODY_BYTES = 3 * MAX_DOCUMENT_CHARS + 16_384
"""The byte cap on every request body: the longest document at three UTF-8 bytes a character
(every character of the Basic Multilingual Plane), and room for the rest of the body."""


async def refuse(send: Send, status: int, detail: str) -> None:
    """Answer `status` with `{"detail": detail}`, closing the connection."""
    body = json.dumps({"detail": detail}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"connection", b"close"),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def too_large(limit: int) -> str:
    """The 413 answer's reason."""
    return f"the request body is over {limit:,} bytes, the most this server reads"


def not_text(raw: bytes, what: str) -> str | None:
    """Why a percent-encoded path or query is not text (NUL, or bytes that are not UTF-8,
    such as an encoded lone surrogate), else None."""
    decoded = unquote_to_bytes(raw)
    try:
        text = decoded.decode("utf-8")
    except UnicodeDecodeError as exc:
        return (
            f"the request {what} is not UTF-8 text at byte {exc.start} "
            "(a lone surrogate or a broken character)"
        )
    if "\x00" in text:
        return f"the request {what} holds U+0000 (NUL), which is not text"
    return None


class ClientGone(Exception):
    """The client disconnected before its body was read."""


class RequestLimits:
    """ASGI middleware: 413 for a body over `max_bytes` (by its Content-Length up front, and
    counted as it streams in), 400 for a path or query that is not text."""

    def __init__(self, app: ASGIApp, max_bytes: int = MAX_BODY_BYTES) -> None:
        self.app = app
        self.max_bytes = max_bytes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Refuse what is too large or not text; pass the rest on with its body read once."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        reason = target_problem(scope)
        if reason is not None:
            await refuse(send, 400, reason)
            return
        declared = Headers(scope=scope).get("content-length", "")
        if declared.isdigit() and int(declared) > self.max_bytes:
            await refuse(send, 413, too_large(self.max_bytes))
            return
        try:
            body = await self._body(receive)
        except ClientGone:
            return
        if body is None:
            await refuse(send, 413, too_large(self.max_bytes))
            return
        await self.app(scope, replay(body, receive), send)

    async def _body(self, receive: Receive) -> bytes | None:
        """The whole body, read as it arrives; None once it passes the cap."""
        chunks: list[bytes] = []
        size = 0
        more = True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                raise ClientGone
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > self.max_bytes:
                return None
            chunks.append(chunk)
            more = message.get("more_body", False)
        return b"".join(chunks)


def target_problem(scope: Scope) -> str | None:
    """Why the request's path or query is not text, else None."""
    path = scope.get("raw_path")
    if path is None:
        path = quote(scope["path"], safe="/", errors="surrogatepass").encode("ascii")
    return not_text(path, "path") or not_text(scope.get("query_string", b""), "query")


def replay(body: bytes, receive: Receive) -> Receive:
    """A receive that gives the app the body already read, then what the client sends next
    (its disconnect)."""
    sent = False

    async def again() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again
