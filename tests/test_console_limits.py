"""Requests cannot tie up the console, on all three backends: a body over the byte cap is
refused with 413 before it is read whole (by its Content-Length, or counted as a chunked body
streams in), through the test client and a real uvicorn server; every text a route takes has
a size limit (a document its scope's hard limit plus a quarter, checked before screening; an
entry its target's largest limit; an agent entry the library's), and a refused request
changes nothing."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

import httpx
import pytest
from fastapi.testclient import TestClient

from memory_plugin import Backend, MemorySettings
from memory_plugin.server import create_app
from memory_plugin.server.limits import MAX_BODY_BYTES, MAX_DOCUMENT_CHARS
from tests.browser import ANN_TOKEN, serve

TOKENS = {"ann-token": {"identity": "ann", "workspaces": ["acme"], "admin": ["platform"]}}
ANN = {"Authorization": "Bearer ann-token"}
FOUR_MB = 4 * 1024 * 1024
READS = [
    "/api/personal/document",
    "/api/personal/document/history",
    "/api/team/acme/document",
    "/api/entries/bounded",
    "/api/entries/agent",
    "/api/settings",
]
ANSWER_SECONDS = 30
"""How long a raw request waits for its answer before failing (not a speed bound: a server that
waited for the body never sent would not answer at all)."""


@pytest.fixture
def client(backend: Backend) -> TestClient:
    app = create_app(backend.store, tokens=TOKENS, settings=MemorySettings(agent_memory=True))
    return TestClient(app)


def snapshot(client: TestClient) -> list[Any]:
    """Everything ann sees."""
    return [client.get(path, headers=ANN).json() for path in READS]


def document(chars: int, char: str = "x") -> dict[str, Any]:
    """A document body of `chars` characters."""
    return {"text": "- " + char * (chars - 2), "expected_version": None}


def chunks(size: int, chunk: int = 64 * 1024) -> Iterator[bytes]:
    """`size` bytes of a JSON document body, streamed (no Content-Length: chunked)."""
    yield b'{"expected_version": null, "text": "- '
    for _ in range(size // chunk):
        yield b"x" * chunk
    yield b'"}'


def test_a_4_mb_document_is_refused_with_413_at_once_and_changes_nothing(
    client: TestClient,
) -> None:
    before = snapshot(client)
    read: list[bytes] = []

    def body() -> Iterator[bytes]:
        for chunk in chunks(FOUR_MB):
            read.append(chunk)
            yield chunk

    headers = {**ANN, "Content-Type": "application/json", "Content-Length": str(FOUR_MB + 40)}
    refused = client.put("/api/personal/document", headers=headers, content=body())
    assert read == [], "the body was read: the refusal should come from its Content-Length"
    assert refused.status_code == 413
    assert refused.json() == {
        "detail": f"the request body is over {MAX_BODY_BYTES:,} bytes, the most this server reads"
    }
    assert snapshot(client) == before


@pytest.mark.slow
def test_a_chunked_body_is_refused_once_it_passes_the_cap(client: TestClient) -> None:
    before = snapshot(client)
    for path in ("/api/personal/document", "/api/team/acme/document", "/api/settings/user"):
        refused = client.put(
            path,
            headers={**ANN, "Content-Type": "application/json"},
            content=chunks(FOUR_MB),
        )
        assert refused.status_code == 413, path
    assert snapshot(client) == before


def test_the_cap_fits_the_longest_document_a_layer_may_allow(client: TestClient) -> None:
    before = snapshot(client)
    widest = client.put(
        "/api/personal/document", headers=ANN, json=document(MAX_DOCUMENT_CHARS, "€")
    )
    assert widest.status_code == 400, widest.text
    assert "at most 31,250" in widest.json()["detail"]
    longer = client.put(
        "/api/personal/document", headers=ANN, json=document(MAX_DOCUMENT_CHARS + 1)
    )
    assert longer.status_code == 422
    assert longer.json()["detail"][0]["loc"] == ["body", "text"]
    assert f"at most {MAX_DOCUMENT_CHARS}" in longer.json()["detail"][0]["msg"]
    assert snapshot(client) == before


def test_a_document_is_held_to_its_scopes_hard_limit_plus_a_quarter(client: TestClient) -> None:
    limits = {"document_soft_limit_chars": 1_000, "document_hard_limit_chars": 2_000}
    assert client.put("/api/settings/user", headers=ANN, json={"set": limits}).status_code == 200
    before = snapshot(client)
    for path in ("/api/personal/document", "/api/team/acme/document"):
        refused = client.put(path, headers=ANN, json=document(2_501))
        assert refused.status_code == 400
        assert refused.json()["detail"] == (
            "the memory document is 2,501 characters; this memory takes at most 2,500 (its "
            "hard limit of 2,000 and a quarter more for the compression rewrite); nothing was "
            "saved"
        )
    assert snapshot(client) == before
    saved = client.put("/api/personal/document", headers=ANN, json=document(1_900))
    assert saved.status_code == 200 and saved.json()["document"]["chars"] == 1_900


@pytest.mark.slow
@pytest.mark.parametrize(
    ("method", "path", "body", "field", "limit"),
    [
        ("POST", "/api/entries/bounded", {"action": "add", "target": "user"}, "content", 20_000),
        (
            "POST",
            "/api/entries/bounded",
            {"action": "replace", "target": "memory", "content": "x"},
            "old_text",
            20_000,
        ),
        ("POST", "/memory", {"action": "add", "target": "memory"}, "content", 20_000),
        ("PUT", "/api/entries/agent/k", {}, "content", 2_000),
        ("PUT", "/api/entries/agent/k", {"content": "x"}, "category", 60),
    ],
)
def test_every_entry_text_has_its_limit(
    client: TestClient, method: str, path: str, body: dict[str, Any], field: str, limit: int
) -> None:
    before = snapshot(client)
    refused = client.request(method, path, headers=ANN, json={**body, field: "x" * (limit + 1)})
    assert refused.status_code == 422
    (error,) = refused.json()["detail"]
    assert error["loc"] == ["body", field]
    assert f"at most {limit} characters" in error["msg"]
    assert snapshot(client) == before


def test_settings_bodies_and_queries_have_limits(client: TestClient) -> None:
    before = snapshot(client)
    many = {f"setting_{n}": 1 for n in range(100)}
    for path, body in [
        ("/api/settings/user", {"set": many}),
        ("/api/settings/user", {"clear": list(many)}),
        ("/api/settings/user", {"set": {"x" * 101: 1}}),
    ]:
        assert client.put(path, headers=ANN, json=body).status_code == 422, body
    for path in ("/api/settings?space=" + "s" * 257, "/api/personal/notes?before=" + "9" * 11):
        assert client.get(path, headers=ANN).status_code == 422, path
    assert snapshot(client) == before


def answer_to_unfinished(base: str, head: str, sent: bytes) -> str:
    """What a real server answers to a request whose body stops after `sent` (the rest is never
    sent, so only a server that refuses without reading on can answer)."""
    address = urlsplit(base)
    request = f"{head}\r\nHost: {address.netloc}\r\nAuthorization: Bearer {ANN_TOKEN}\r\n"
    with socket.create_connection((address.hostname, address.port), ANSWER_SECONDS) as raw:
        raw.sendall(request.encode() + b"Content-Type: application/json\r\n\r\n" + sent)
        answer = b""
        while b"the request body is over" not in answer and (got := raw.recv(65536)):
            answer += got
    return answer.decode()


def test_a_real_server_refuses_4_mb_at_once_and_keeps_serving(backend_url: str) -> None:
    headers = {"Authorization": f"Bearer {ANN_TOKEN}", "Content-Type": "application/json"}
    with serve(backend_url) as base, httpx.Client(base_url=base, headers=headers) as http:
        before = http.get("/api/personal/document").json()
        for body in (b"x" * FOUR_MB, chunks(FOUR_MB)):
            refused = http.put("/api/personal/document", content=body)
            assert refused.status_code == 413
            assert "the request body is over" in refused.json()["detail"]
        put = "PUT /api/personal/document HTTP/1.1"
        by_length = answer_to_unfinished(base, f"{put}\r\nContent-Length: {FOUR_MB}", b"{")
        assert by_length.startswith("HTTP/1.1 413 ") and "the request body is over" in by_length
        past_the_cap = b"".join(
            f"{len(piece):x}\r\n".encode() + piece + b"\r\n"
            for piece in [b"x" * 65536] * (MAX_BODY_BYTES // 65536 + 1)
        )
        streamed = answer_to_unfinished(base, f"{put}\r\nTransfer-Encoding: chunked", past_the_cap)
        assert streamed.startswith("HTTP/1.1 413 ") and "the request body is over" in streamed
        assert http.get("/api/personal/document").json() == before
        saved = http.put("/api/personal/document", json=document(100))
        assert saved.status_code == 200
