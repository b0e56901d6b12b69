"""The console's page is safe to open, on all three backends: every answer (the page, its
assets, the API's successes and refusals) carries a Content-Security-Policy that runs only the
page's own scripts and styles and lets no site frame it, `X-Content-Type-Options: nosniff` and
`Referrer-Policy: no-referrer`; the page itself holds no inline script, style or handler (its
behaviour under the policy is checked in a real browser, tests/test_console_browser.py)."""

from __future__ import annotations

import re
from html.parser import HTMLParser

import pytest
from fastapi.testclient import TestClient

from memory_plugin import Backend
from memory_plugin.bounded import BoundedMemory
from memory_plugin.server import create_app

TOKENS = {"ann-token": {"identity": "ann", "workspaces": ["acme"]}}
ANN = {"Authorization": "Bearer ann-token"}
ANSWERS = [
    ("GET", "/", None, 200),
    ("GET", "/static/console.js", None, 200),
    ("GET", "/static/console.css", None, 200),
    ("GET", "/api/me", ANN, 200),
    ("GET", "/openapi.json", None, 200),
    ("GET", "/api/me", None, 401),
    ("GET", "/api/team/nowhere/document", ANN, 404),
    ("GET", "/static/nothing.js", None, 404),
    ("GET", "/api/personal/notes?days=99", ANN, 422),
    ("GET", "/api/personal/notes/a%00b", ANN, 400),
    ("PUT", "/api/personal/document", ANN, 413),
]


@pytest.fixture
def client(backend: Backend) -> TestClient:
    return TestClient(create_app(backend.store, tokens=TOKENS))


def directives(policy: str) -> dict[str, list[str]]:
    """A Content-Security-Policy as {directive: sources}."""
    found = {}
    for part in policy.split(";"):
        name, *sources = part.split()
        found[name] = sources
    return found


@pytest.mark.parametrize(("method", "path", "headers", "status"), ANSWERS)
def test_every_answer_carries_the_security_headers(
    client: TestClient, method: str, path: str, headers: dict[str, str] | None, status: int
) -> None:
    body = b"x" * (4 * 1024 * 1024) if status == 413 else None
    answer = client.request(method, path, headers=headers, content=body)
    assert answer.status_code == status, answer.text
    policy = directives(answer.headers["content-security-policy"])
    assert policy["default-src"] == ["'none'"]
    assert policy["script-src"] == ["'self'"]
    assert policy["style-src"] == ["'self'"]
    assert policy["frame-ancestors"] == ["'none'"]
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "no-referrer"


def test_the_api_docs_load_their_viewer_and_still_cannot_be_framed(client: TestClient) -> None:
    for path in ("/docs", "/redoc"):
        answer = client.get(path)
        assert answer.status_code == 200
        policy = directives(answer.headers["content-security-policy"])
        scripts = re.findall(r'<script src="([^"]+)"', answer.text)
        assert scripts and all(src.startswith(tuple(policy["script-src"])) for src in scripts)
        assert policy["frame-ancestors"] == ["'none'"]
        assert answer.headers["x-content-type-options"] == "nosniff"


class Inline(HTMLParser):
    """What in a page the policy would refuse: inline scripts, styles and handlers."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        names = {name for name, _ in attrs}
        if tag == "script" and "src" not in names:
            self.found.append("inline <script>")
        if tag == "style":
            self.found.append("<style>")
        self.found += [f"{tag} {name}=" for name in names if name == "style" or name[:2] == "on"]


def test_the_page_holds_no_inline_script_style_or_handler(client: TestClient) -> None:
    page = client.get("/")
    inline = Inline()
    inline.feed(page.text)
    assert inline.found == []
    assert re.findall(r'<script type="module" src="(/static/[^"]+)"', page.text)


def test_an_unexpected_failure_answers_500_with_the_headers(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = create_app(backend.store, tokens=TOKENS)

    async def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug, with a secret: hunter2")

    monkeypatch.setattr(app.state.console.of(BoundedMemory), "aread", broken)
    answer = TestClient(app, raise_server_exceptions=False).get("/memory", headers=ANN)
    assert answer.status_code == 500
    assert answer.json() == {"detail": "internal error"}
    assert "hunter2" not in answer.text
    assert directives(answer.headers["content-security-policy"])["frame-ancestors"] == ["'none'"]
    assert answer.headers["x-content-type-options"] == "nosniff"
    assert answer.headers["referrer-policy"] == "no-referrer"
