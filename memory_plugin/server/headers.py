"""The security headers on every answer of the console: a Content-Security-Policy that runs
only the page's own scripts and styles and lets no site frame it, no MIME sniffing, and no
Referer sent anywhere.

The API's own documentation pages (/docs, /redoc) load FastAPI's viewers from their CDN with
an inline start-up script, so they get a policy that allows those, and nothing else.
"""

from __future__ import annotations

from starlette.types import ASGIApp, Message, Receive, Scope, Send

PAGE_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
DOCS_CDN = "https://cdn.jsdelivr.net"
DOCS_POLICY = (
    f"default-src 'none'; script-src {DOCS_CDN} 'unsafe-inline'; "
    f"style-src {DOCS_CDN} https://fonts.googleapis.com 'unsafe-inline'; "
    "font-src https://fonts.gstatic.com; img-src 'self' data: https://fastapi.tiangolo.com; "
    f"connect-src 'self'; worker-src blob:; base-uri 'none'; form-action 'none'; "
    "frame-ancestors 'none'"
)
DOCS_PAGES = ("/docs", "/docs/oauth2-redirect", "/redoc")


def security_headers(path: str) -> list[tuple[bytes, bytes]]:
    """The headers every answer to `path` carries."""
    policy = DOCS_POLICY if path in DOCS_PAGES else PAGE_POLICY
    return [
        (b"content-security-policy", policy.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"no-referrer"),
    ]


class SecurityHeaders:
    """ASGI middleware adding `security_headers` to every HTTP answer."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Pass the request on; add the headers to its answer."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        added = security_headers(scope["path"])

        async def with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *added]}
            await send(message)

        await self.app(scope, receive, with_headers)
