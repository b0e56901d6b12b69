"""One user, one memory, through every door (issue 35, point 3): every door resolves (org,
user, workspace, agent) with the same rules and defaults (memory_plugin.scope.doors), so what
Ann tells one door another shows her: `chat` then `export`, `mcp` on stdio then over HTTP, and
the console, the graph, LangGraph Server's auth and the privacy commands land on the memory
the CLI writes. No workspace unless one is named; `personal` names none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypedDict

import httpx
import pytest
from langgraph.graph import END, START, StateGraph

from memory_plugin import Backend, MemoryContext, current_context
from memory_plugin.cli import main
from memory_plugin.connection import connect
from memory_plugin.mcp_gateway import server
from memory_plugin.privacy.commands import owner_of
from memory_plugin.scope.doors import token_context
from memory_plugin.scope.identity import AUTH_USER, AUTH_USER_ID
from memory_plugin.scoped import ScopedMemory
from memory_plugin.server.access import Caller
from tests.conftest import url_for
from tests.mcp_http import mcp_over_http

ROOT = Path(__file__).parent.parent
COMMAND = [sys.executable, "-m", "memory_plugin.cli"]


def environment() -> dict[str, str]:
    """The command's environment: no MEMORY_* or OPENAI_* setting (the offline model)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MEMORY_", "OPENAI_"))}
    return {**env, "PYTHONPATH": str(ROOT)}


@pytest.fixture(params=["sqlite", "postgres"])
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A store a command opens by URL (memory:// lives and dies with one process)."""
    return url_for(request.param, request, tmp_path)


def chat(url: str, *args: str, say: str) -> str:
    """`memory-plugin chat --user ann` on the offline model: what it printed."""
    told = subprocess.run(
        [*COMMAND, "chat", "--user", "ann", "--url", url, *args],
        input=f"{say}\n/quit\n",
        capture_output=True,
        text=True,
        env=environment(),
        timeout=300,
        check=True,
    )
    return told.stdout


@pytest.mark.slow
def test_what_chat_remembered_is_in_the_export(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    here = chat(url, say="remember that my dog is called Rex")
    assert "Chatting as ann in no workspace (personal), agent default" in here
    assert "scoped memory note stored" in here
    there = chat(url, "--workspace", "acme", say="remember that I deploy on Fridays")
    assert "Chatting as ann in workspace acme" in there
    assert main(["export", "--user", "ann", "--url", url]) == 0
    exported, said = capsys.readouterr()
    document = json.loads(exported)
    notes = {
        item["workspace"]: json.dumps(item["value"])
        for item in document["items"]
        if item["kind"] == "scoped_memory" and item["path"] == ["notes"]
    }
    assert "Rex" in notes[None] and "Fridays" in notes["acme"]
    assert document["workspaces"] == ["acme"]
    assert "personal memory in no workspace (personal) and workspaces acme" in said


class State(TypedDict, total=False):
    seen: dict[str, Any]


def graph_context(backend: Backend, context: dict[str, Any], conf: dict[str, Any]) -> Any:
    """The context a real graph's node sees for a run's `context` and configurable."""

    def look(state: State) -> State:
        return {"seen": {"ctx": current_context()}}

    builder = StateGraph(State, context_schema=MemoryContext)
    builder.add_node("look", look)
    builder.add_edge(START, "look")
    builder.add_edge("look", END)
    graph = builder.compile(store=backend.store, checkpointer=backend.checkpointer)
    config = {"configurable": {"thread_id": "t", **conf}}
    return graph.invoke({}, config, context=context)["seen"]["ctx"]


def stdio_context(monkeypatch: pytest.MonkeyPatch, *args: str) -> MemoryContext:
    """The context `memory-plugin mcp` serves on stdio for `args`."""
    served: list[MemoryContext] = []

    async def serve_stdio(url: str, ctx: MemoryContext, **options: Any) -> None:
        served.append(ctx)

    monkeypatch.setattr(server, "serve_stdio", serve_stdio)
    assert main(["mcp", "--url", "memory://", "--user", "ann", *args]) == 0
    return served[0]


@pytest.mark.parametrize("workspace", [None, "personal", "acme"])
def test_every_door_lands_ann_on_the_same_memory(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, workspace: str | None
) -> None:
    named = {"workspace_id": workspace} if workspace else {}
    token = {"identity": "ann", "workspaces": ["acme"], **named}
    server_user = {AUTH_USER: token, AUTH_USER_ID: "ann"}
    doors = {
        "mcp stdio": stdio_context(monkeypatch, *(["--workspace", workspace] if workspace else [])),
        "mcp http": token_context(token),
        "graph": graph_context(backend, {"user_id": "ann", **named}, {}),
        "langgraph server": graph_context(backend, named, server_user),
    }
    console = Caller.of(token)
    where = None if workspace in (None, "personal") else workspace
    assert {name: ctx.workspace_id for name, ctx in doors.items()} == dict.fromkeys(doors, where)
    assert {ctx.user_id for ctx in doors.values()} == {"ann"}
    assert {ctx.org_id for ctx in doors.values()} == {None}
    assert doors["mcp stdio"].agent_id == doors["mcp http"].agent_id == console.agent_id
    memory = ScopedMemory(backend.store)
    for name, ctx in doors.items():
        memory.remember(ctx, f"Ann told the {name} door")
    for ctx in (*doors.values(), console.personal(where)):
        assert len(memory.list_notes(ctx)) == len(doors)
    owner = owner_of("ann", None, [workspace] if workspace else [])
    assert owner.workspaces == ((where,) if where else ())


@pytest.mark.slow
def test_privacy_commands_reach_every_workspace_by_default(
    url: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with connect(url) as backend:
        memory = ScopedMemory(backend.store)
        for where in (None, "acme", "globex"):
            memory.remember(MemoryContext(user_id="ann", workspace_id=where), f"Rex in {where}")
    assert main(["export", "--user", "ann", "--url", url]) == 0
    exported, said = capsys.readouterr()
    assert json.loads(exported)["counts"]["scoped_memory"] == 3
    assert "no workspace (personal) and workspaces acme, globex; " in said
    assert main(["forget", "Rex", "--user", "ann", "--yes", "--url", url]) == 0
    assert "in 3 place(s)" in capsys.readouterr().out


def test_a_shared_thread_needs_a_workspace_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'memory.db'}"
    for workspace in ([], ["--workspace", "personal"]):
        assert main(["history", "--user", "ann", "--shared", *workspace, "--url", url]) == 2
        assert "shared (team) memory needs a workspace" in capsys.readouterr().err


TOKENS = {"ann-token": {"identity": "ann", "workspaces": ["acme"]}}


@pytest.fixture
def http_server(url: str, tmp_path: Path) -> Iterator[tuple[str, Path]]:
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    log = tmp_path / "server.log"
    command = [*COMMAND, "mcp", "--http", "--tokens", str(tokens), "--url", url]
    with mcp_over_http(command, log) as base:
        yield base, log


@asynccontextmanager
async def over_stdio(url: str, errors: Path) -> AsyncIterator[Any]:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    args = [*COMMAND[1:], "mcp", "--url", url, "--user", "ann"]
    params = StdioServerParameters(command=COMMAND[0], args=args, env=environment())
    with errors.open("w") as errlog:
        async with (
            stdio_client(params, errlog=errlog) as (read, write),
            ClientSession(read, write) as client,
        ):
            await client.initialize()
            yield client


@asynccontextmanager
async def over_http(base: str) -> AsyncIterator[Any]:
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    headers = {"Authorization": "Bearer ann-token"}
    async with (
        httpx.AsyncClient(headers=headers, timeout=30) as http,
        streamable_http_client(base, http_client=http) as (read, write, _),
        ClientSession(read, write) as client,
    ):
        await client.initialize()
        yield client


async def text_of(client: Any, name: str, **arguments: Any) -> str:
    from mcp.types import TextContent

    result = await client.call_tool(name, arguments)
    assert not result.isError
    return "".join(part.text for part in result.content if isinstance(part, TextContent))


@pytest.mark.slow
async def test_mcp_on_stdio_then_over_http_is_the_same_memory(
    url: str, http_server: tuple[str, Path], tmp_path: Path
) -> None:
    base, log = http_server
    async with over_stdio(url, tmp_path / "stdio.err") as ann:
        await text_of(ann, "remember", text="Ann deploys on Fridays")
    said = (tmp_path / "stdio.err").read_text()
    assert "serving ann's memory in no workspace (personal), agent default, on stdio" in said
    async with over_http(base) as ann:
        assert "Fridays" in await text_of(ann, "recall", query="deploys")
        await text_of(ann, "remember", text="Ann drinks green tea")
    async with over_stdio(url, tmp_path / "stdio.err") as ann:
        assert "green tea" in await text_of(ann, "recall", query="tea")
    assert "else in no workspace (personal)" in log.read_text()
