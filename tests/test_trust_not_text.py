"""NUL and lone surrogates are not text, and no memory write takes them, on all three
backends: every library write path (sync and async) refuses them with an error naming the
character, and every console route answers 4xx with the reason for one in a body, a path or
a query; nothing is stored, and nothing changes (before, an agent entry answered 500 and
memory:// kept the bad value; on PostgreSQL a NUL in a note key or thread id answered 500)."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pytest
from fastapi.testclient import TestClient

from memory_plugin import Backend, MemoryContext, MemorySettings
from memory_plugin.agent import AgentMemory
from memory_plugin.bounded import BoundedMemory
from memory_plugin.errors import InvalidArgumentError, MemoryWriteError
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server import create_app

NUL, SURROGATE = "\x00", "\ud800"
NAMED = {NUL: "U+0000 (NUL)", SURROGATE: "U+D800 (a lone surrogate)"}
ENCODED = {NUL: "%00", SURROGATE: "%ED%A0%80"}
SETTINGS = MemorySettings(agent_memory=True)
ANN = MemoryContext(user_id="ann", agent_id="helper")
TOKENS = {
    "ann-token": {
        "identity": "ann",
        "agent_id": "helper",
        "workspaces": ["acme"],
        "admin": ["platform"],
    }
}
HEADERS = {"Authorization": "Bearer ann-token"}
READS = [
    "/api/personal/document",
    "/api/personal/document/history",
    "/api/personal/notes?days=31",
    "/api/team/acme/document",
    "/api/entries/bounded",
    "/api/entries/agent",
    "/api/settings",
    "/memory",
]


def memories(backend: Backend) -> dict[str, Any]:
    return {
        "scoped": ScopedMemory(backend.store, defaults=SETTINGS),
        "bounded": BoundedMemory(backend.store, settings=SETTINGS),
        "agent": AgentMemory(backend.store, defaults=SETTINGS),
    }


# each write: the memory kind, its method (the async twin is "a" + the name), its arguments
# around the bad character (a last dict: keywords), and the error it must raise
WRITES: dict[str, tuple[str, str, Callable[[str], tuple[Any, ...]], type[Exception]]] = {
    "note": ("scoped", "remember", lambda bad: (f"Ann likes {bad} tea",), MemoryWriteError),
    "imported note": (
        "scoped",
        "import_notes",
        lambda bad: ([("2024-05-01", f"Ann likes {bad} tea")],),
        MemoryWriteError,
    ),
    "document": (
        "scoped",
        "write_document",
        lambda bad: (f"# Ann\n\n- likes {bad} tea",),
        MemoryWriteError,
    ),
    "bounded entry": (
        "bounded",
        "apply",
        lambda bad: ("add", "user", f"Ann likes {bad} tea"),
        MemoryWriteError,
    ),
    "agent entry key": (
        "agent",
        "store_entry",
        lambda bad: (f"k{bad}", "Ann likes tea"),
        MemoryWriteError,
    ),
    "agent entry content": (
        "agent",
        "store_entry",
        lambda bad: ("tea", f"Ann likes {bad} tea"),
        MemoryWriteError,
    ),
    "agent entry category": (
        "agent",
        "store_entry",
        lambda bad: ("tea", "Ann likes tea", {"category": f"c{bad}"}),
        MemoryWriteError,
    ),
    "agent entry forgotten": ("agent", "forget", lambda bad: (f"k{bad}",), MemoryWriteError),
    "note key read": (
        "scoped",
        "get_note",
        lambda bad: (f"2024-05-01#{bad}",),
        InvalidArgumentError,
    ),
    "note key deleted": (
        "scoped",
        "delete_note",
        lambda bad: (f"2024-05-01#{bad}",),
        InvalidArgumentError,
    ),
}


def call(kinds: dict[str, Any], write: str, bad: str, twin: str = "") -> Any:
    """Call one write with the bad character; `twin`: "a" for its async twin."""
    kind, method, arguments, _ = WRITES[write]
    args = arguments(bad)
    keywords = args[-1] if isinstance(args[-1], dict) else {}
    positional = args[:-1] if keywords else args
    return getattr(kinds[kind], twin + method)(ANN, *positional, **keywords)


def stored(kinds: dict[str, Any]) -> list[Any]:
    """Everything ann has of every kind."""
    return [
        kinds["scoped"].read_document(ANN),
        kinds["scoped"].list_notes(ANN),
        [view.entries for view in kinds["bounded"].read(ANN).values()],
        kinds["agent"].entries(ANN),
    ]


async def astored(kinds: dict[str, Any]) -> list[Any]:
    """Everything ann has of every kind, read through the async twins."""
    return [
        await kinds["scoped"].aread_document(ANN),
        await kinds["scoped"].alist_notes(ANN),
        [view.entries for view in (await kinds["bounded"].aread(ANN)).values()],
        await kinds["agent"].aentries(ANN),
    ]


@pytest.mark.parametrize("bad", [NUL, SURROGATE], ids=["nul", "surrogate"])
@pytest.mark.parametrize("write", list(WRITES))
def test_every_write_path_refuses_it_naming_the_character(
    backend: Backend, write: str, bad: str
) -> None:
    kinds = memories(backend)
    kinds["scoped"].remember(ANN, "Ann likes green tea")
    kinds["bounded"].apply(ANN, "add", "user", "Ann likes green tea")
    kinds["agent"].store_entry(ANN, "tea", "Ann likes green tea")
    before = stored(kinds)
    with pytest.raises(WRITES[write][3], match=re.escape(NAMED[bad])):
        call(kinds, write, bad)
    assert stored(kinds) == before


@pytest.mark.parametrize("bad", [NUL, SURROGATE], ids=["nul", "surrogate"])
@pytest.mark.parametrize("write", list(WRITES))
async def test_every_async_write_path_refuses_it_naming_the_character(
    abackend: Backend, write: str, bad: str
) -> None:
    kinds = memories(abackend)
    before = await astored(kinds)
    with pytest.raises(WRITES[write][3], match=re.escape(NAMED[bad])):
        await call(kinds, write, bad, "a")
    assert await astored(kinds) == before


BODIES: list[tuple[str, str, dict[str, Any], str]] = [
    ("PUT", "/api/personal/document", {"text": "- a{}b", "expected_version": None}, "text"),
    ("PUT", "/api/team/acme/document", {"text": "- a{}b", "expected_version": None}, "text"),
    (
        "POST",
        "/api/entries/bounded",
        {"action": "add", "target": "user", "content": "{}"},
        "content",
    ),
    (
        "POST",
        "/api/entries/bounded",
        {"action": "replace", "target": "user", "content": "x", "old_text": "{}"},
        "old_text",
    ),
    ("POST", "/memory", {"action": "add", "target": "memory", "content": "a{}b"}, "content"),
    ("PUT", "/api/entries/agent/tea", {"content": "Ann likes {} tea"}, "content"),
    ("PUT", "/api/entries/agent/tea", {"content": "tea", "category": "c{}"}, "category"),
    ("PUT", "/api/settings/platform", {"set": {"recall_rerank_model": "m{}"}}, "set"),
    ("PUT", "/api/settings/platform", {"set": {"flush{}": False}}, "set"),
    ("PUT", "/api/settings/user", {"clear": ["flush{}"]}, "clear"),
]
TARGETS: list[tuple[str, str]] = [
    ("GET", "/api/personal/notes/2024-05-01%23{}"),
    ("DELETE", "/api/personal/notes/2024-05-01%23{}"),
    ("PUT", "/api/entries/agent/k{}"),
    ("DELETE", "/api/entries/agent/k{}"),
    ("GET", "/api/team/ac{}me/document"),
    ("POST", "/api/threads/t{}/summarize"),
    ("GET", "/api/personal/notes/search?q=a{}b"),
    ("GET", "/api/personal/document?workspace=ac{}me"),
    ("GET", "/api/settings?space=s{}"),
    ("GET", "/api/personal/notes?before=2024-05-0{}"),
]


@pytest.fixture
def client(backend: Backend) -> TestClient:
    app = create_app(
        backend.store, tokens=TOKENS, checkpointer=backend.checkpointer, settings=SETTINGS
    )
    return TestClient(app, raise_server_exceptions=False)


def snapshot(client: TestClient) -> list[Any]:
    return [client.get(path, headers=HEADERS).json() for path in READS]


def fill(value: Any, bad: str) -> Any:
    """The body with the bad character where its template says {}."""
    if isinstance(value, str):
        return value.replace("{}", bad)
    if isinstance(value, dict):
        return {fill(k, bad): fill(v, bad) for k, v in value.items()}
    if isinstance(value, list):
        return [fill(item, bad) for item in value]
    return value


@pytest.mark.parametrize("bad", [NUL, SURROGATE], ids=["nul", "surrogate"])
def test_a_body_holding_it_answers_422_naming_the_field_and_the_character(
    client: TestClient, bad: str
) -> None:
    before = snapshot(client)
    for method, path, template, field in BODIES:
        body = json.dumps(fill(template, bad))
        answer = client.request(
            method, path, headers={**HEADERS, "Content-Type": "application/json"}, content=body
        )
        assert answer.status_code == 422, (path, field, answer.text)
        (error,) = answer.json()["detail"]
        assert error["loc"][:2] == ["body", field], (path, error)
        assert NAMED[bad] in error["msg"], (path, error)
    assert snapshot(client) == before


@pytest.mark.slow
def test_an_unencoded_surrogate_in_the_raw_body_answers_422(client: TestClient) -> None:
    before = snapshot(client)
    raw = b'{"text": "- a\xed\xa0\x80b", "expected_version": null}'
    answer = client.put(
        "/api/personal/document",
        headers={**HEADERS, "Content-Type": "application/json"},
        content=raw,
    )
    assert answer.status_code == 422
    assert NAMED[SURROGATE] in answer.json()["detail"][0]["msg"]
    assert snapshot(client) == before


@pytest.mark.parametrize("bad", [NUL, SURROGATE], ids=["nul", "surrogate"])
def test_a_path_or_query_holding_it_answers_400_with_the_reason(
    client: TestClient, bad: str
) -> None:
    reason = "holds U+0000 (NUL)" if bad == NUL else "is not UTF-8 text"
    before = snapshot(client)
    for method, target in TARGETS:
        path = target.format(ENCODED[bad])
        body = {"content": "Ann likes tea"} if method == "PUT" else None
        answer = client.request(method, path, headers=HEADERS, json=body)
        assert answer.status_code == 400, (path, answer.text)
        assert reason in answer.json()["detail"], (path, answer.text)
    assert snapshot(client) == before
