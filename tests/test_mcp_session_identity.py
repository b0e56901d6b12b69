"""An MCP session over HTTP belongs to exactly one person (issue 34, point 1): `ann` of org o2,
holding the session id of `ann` of org o1, can neither use nor end it."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.testclient import TestClient

from memory_plugin import Backend
from memory_plugin.mcp_gateway.server import gateway_services, http_app

pytestmark = pytest.mark.slow

TOKENS = {
    "o1-ann": {"identity": "ann", "org_id": "o1", "workspaces": ["acme"]},
    "o2-ann": {"identity": "ann", "org_id": "o2", "workspaces": ["acme"]},
}
ACCEPT = {"Accept": "application/json, text/event-stream"}
HELLO = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}
PING = {"jsonrpc": "2.0", "id": 2, "method": "ping"}


def headers(token: str, session: str | None = None) -> dict[str, str]:
    found = {**ACCEPT, "Authorization": f"Bearer {token}"}
    return found if session is None else {**found, "mcp-session-id": session}


def test_another_orgs_ann_can_neither_use_nor_end_anns_session(backend: Backend) -> None:
    app = http_app(gateway_services(store=backend.store), backend.store, TOKENS)
    with TestClient(app, base_url="http://127.0.0.1:8000") as client:
        opened = client.post("/mcp", json=HELLO, headers=headers("o1-ann"))
        assert opened.status_code == 200, opened.text
        session = opened.headers["mcp-session-id"]

        used: Any = client.post("/mcp", json=PING, headers=headers("o2-ann", session))
        assert used.status_code == 404 and "Session not found" in used.text
        ended = client.delete("/mcp", headers=headers("o2-ann", session))
        assert ended.status_code == 404

        still = client.post("/mcp", json=PING, headers=headers("o1-ann", session))
        assert still.status_code == 200 and '"result":{}' in still.text
