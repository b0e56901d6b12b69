"""The doors of the kind conformance test (tests/test_kind_conformance.py): each writes a
text into one memory kind as a user and shows everything of a kind a user can see through it.

A door learns how to write or read a kind from the kind's calls (`Calls`, one row per kind in
the test's table): the tool call that writes a text, the tool call that reads it back, what a
user says for a turn to write it, the console's routes. Every door runs over one open backend;
the CLI opens its own connection from the backend's URL.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from mcp.shared.memory import create_connected_server_and_client_session
from mcp.types import TextContent, TextResourceContents
from pydantic import Field

from memory_plugin import Backend, aconnect, connect, create_memory_graph
from memory_plugin.base import MemoryService
from memory_plugin.cli import main as cli_main
from memory_plugin.kinds import KINDS
from memory_plugin.mcp_gateway.identity import fixed
from memory_plugin.mcp_gateway.server import build_server, gateway_services
from memory_plugin.offline.demo import DemoModel
from memory_plugin.plans import arun, run
from memory_plugin.prebuilt.middleware import MemoryMiddleware
from memory_plugin.privacy.archive import export_plan
from memory_plugin.privacy.erase import aerase_user, erase_user
from memory_plugin.privacy.inventory import Owner, UnknownUserError
from memory_plugin.profile.memory import await_profiles, wait_for_profiles
from memory_plugin.scope.context import MemoryContext
from memory_plugin.server import create_app
from memory_plugin.settings import MemorySettings

Kind = type[MemoryService]

AGENT = "helper"
ASKED = "What do you remember about me?"
Args = Callable[[str], dict[str, Any]]
RestWrite = Callable[[httpx.AsyncClient, dict[str, str], str], Awaitable[httpx.Response]]


@dataclass(frozen=True)
class Person:
    """Who is at the door: their run context, console token and export owner."""

    name: str
    ctx: MemoryContext
    token: dict[str, Any]

    @property
    def owner(self) -> Owner:
        """The owner whose export and deletion this person is."""
        return Owner(self.ctx.user_id or "", self.ctx.org_id)

    @property
    def headers(self) -> dict[str, str]:
        """The console's Authorization header of this person."""
        return {"Authorization": f"Bearer {self.name}-token"}


def alone(kind: Kind) -> MemorySettings:
    """The settings with `kind` the only kind switched on (the ones always built still are)."""
    names = MemorySettings.model_fields
    return MemorySettings(**{other.name: other is kind for other in KINDS if other.name in names})


def person(name: str, user: str, org: str | None = None) -> Person:
    """A user (of `org`) at every door with the same agent."""
    token: dict[str, Any] = {"identity": user, "agent_id": AGENT}
    if org is not None:
        token["org_id"] = org
    return Person(name, MemoryContext(user_id=user, org_id=org, agent_id=AGENT), token)


ANN = person("ann", "ann")
BOB = person("bob", "bob")
OTHER_ANN = person("other-ann", "ann", org="other")
PEOPLE = (ANN, BOB, OTHER_ANN)
TOKENS = {f"{p.name}-token": p.token for p in PEOPLE}


@dataclass(frozen=True)
class Calls:
    """One kind, and what the doors need said of it that the kind does not declare: `say`
    what the user says in the turn that writes it (`{}`: the text), `write`/`read` one of the
    kind's tools called to write it (name, arguments from the text) and to read it back (name,
    arguments that never hold the text, so no answer echoes it), `rest_write` the console's
    request that writes it, `rest_read` the console's routes that show it, `exported` whether
    an export holds it."""

    kind: Kind
    say: str = "Please keep this in mind."
    write: tuple[str, Args] | None = None
    read: tuple[str, dict[str, Any]] | None = None
    rest_write: RestWrite | None = None
    rest_read: tuple[str, ...] = ()
    exported: bool = True


@dataclass
class World:
    """One backend and its URL (`sync`: opened with connect), the settings every door runs
    with, the console over it."""

    backend: Backend
    url: str
    tmp: Path
    settings: MemorySettings
    sync: bool = False
    console: Any = field(init=False)

    def __post_init__(self) -> None:
        self.console = create_app(
            self.backend.store,
            tokens=TOKENS,
            checkpointer=self.backend.checkpointer,
            settings=self.settings,
            model=DemoModel(),
        )

    @contextlib.asynccontextmanager
    async def rest(self) -> AsyncIterator[httpx.AsyncClient]:
        """A client of the console."""
        transport = httpx.ASGITransport(app=self.console)
        async with httpx.AsyncClient(transport=transport, base_url="http://console") as client:
            yield client


class RecordingModel(DemoModel):
    """The demo model, keeping every prompt the agent's turns showed it."""

    seen: list[str] = Field(default_factory=list)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        self.seen.append("\n".join(str(m.content) for m in messages))
        return super()._generate(messages, *args, **kwargs)


def _call(name: str, args: dict[str, Any]) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": uuid.uuid4().hex[:8]}])


def _script(call: tuple[str, dict[str, Any]] | None) -> list[Any]:
    return ([_call(*call)] if call else []) + ["Noted."]


def _shown(model: RecordingModel, out: Any) -> str:
    said = [str(m.content) for m in out["messages"] if not isinstance(m, HumanMessage)]
    return "\n".join([*model.seen, *said])


class Door:
    """A way in: writes a kind's text as a person, shows what a person sees of a kind.
    `sync`: its own calls are sync, so its cases open the backend with connect (aconnect
    otherwise)."""

    name = ""
    sync = False

    def writes(self, calls: Calls) -> bool:
        """Whether this door can write the kind."""
        raise NotImplementedError

    def reads(self, calls: Calls) -> bool:
        """Whether this door shows the kind."""
        raise NotImplementedError

    def reaches(self, world: World) -> bool:
        """Whether this door can reach the world's backend as it is opened."""
        return True

    async def write(self, world: World, calls: Calls, who: Person, text: str) -> None:
        """Write `text` into the kind as `who`."""
        raise NotImplementedError

    async def read(self, world: World, calls: Calls, who: Person, text: str) -> str:
        """All this door shows `who` of the kind (asked about `text`)."""
        raise NotImplementedError


class TurnDoor(Door):
    """A door that runs the model's turns: the memory tools write and read, the prompt shows."""

    def writes(self, calls: Calls) -> bool:
        return True

    def reads(self, calls: Calls) -> bool:
        return calls.kind.place is not None or calls.read is not None

    async def turn(self, world: World, model: RecordingModel, who: Person, said: str) -> str:
        """One turn on a new thread as `who`; everything the model saw and answered."""
        raise NotImplementedError

    async def write(self, world: World, calls: Calls, who: Person, text: str) -> None:
        write = calls.write
        model = RecordingModel(script=_script(write and (write[0], write[1](text))))
        shown = await self.turn(world, model, who, calls.say.format(text))
        assert "Memory not changed" not in shown, shown
        await settled()

    async def read(self, world: World, calls: Calls, who: Person, text: str) -> str:
        model = RecordingModel(script=_script(calls.read))
        shown = await self.turn(world, model, who, ASKED)
        await settled()
        return shown


async def settled() -> None:
    """Wait for the profile consolidations the turns started (sync runs' and async runs')."""
    assert await asyncio.to_thread(wait_for_profiles)
    await await_profiles()


def _config() -> Any:
    return {"configurable": {"thread_id": f"t-{uuid.uuid4().hex[:10]}"}}


class GraphDoor(TurnDoor):
    """create_memory_graph, under invoke (in a worker thread) or ainvoke."""

    def __init__(self, name: str, asynchronous: bool) -> None:
        self.name, self.asynchronous, self.sync = name, asynchronous, not asynchronous

    def reaches(self, world: World) -> bool:
        """ainvoke needs a checkpointer with async methods (SqliteSaver has none)."""
        return not (self.asynchronous and world.sync)

    async def turn(self, world: World, model: RecordingModel, who: Person, said: str) -> str:
        graph = create_memory_graph(
            model,
            store=world.backend.store,
            checkpointer=world.backend.checkpointer,
            settings=world.settings,
        )
        state = {"messages": [HumanMessage(said)]}
        if self.asynchronous:
            out = await graph.ainvoke(state, _config(), context=who.ctx)
        else:
            out = await asyncio.to_thread(graph.invoke, state, _config(), context=who.ctx)
        return _shown(model, out)


class AgentDoor(TurnDoor):
    """langchain's create_agent with MemoryMiddleware."""

    name = "create_agent"
    sync = True

    async def turn(self, world: World, model: RecordingModel, who: Person, said: str) -> str:
        agent = create_agent(
            model,
            tools=[],
            middleware=[MemoryMiddleware(model, settings=world.settings)],
            checkpointer=world.backend.checkpointer,
            store=world.backend.store,
            context_schema=MemoryContext,
        )
        state: Any = {"messages": [HumanMessage(said)]}
        out = await asyncio.to_thread(lambda: agent.invoke(state, _config(), context=who.ctx))
        return _shown(model, out)


class RestDoor(Door):
    """The console's REST API, as the person's token."""

    name = "rest"

    def writes(self, calls: Calls) -> bool:
        return calls.rest_write is not None

    def reads(self, calls: Calls) -> bool:
        return bool(calls.rest_read)

    async def write(self, world: World, calls: Calls, who: Person, text: str) -> None:
        assert calls.rest_write is not None
        async with world.rest() as client:
            answer = await calls.rest_write(client, who.headers, text)
        assert answer.status_code == 200, (answer.url, answer.text)

    async def read(self, world: World, calls: Calls, who: Person, text: str) -> str:
        shown = []
        async with world.rest() as client:
            for path in calls.rest_read:
                answer = await client.get(path, headers=who.headers)
                assert answer.status_code in (200, 404), (path, answer.text)
                shown.append(answer.text)
        return "\n".join(shown)


class McpDoor(Door):
    """The MCP gateway in process: the tools of the kinds it serves (`over_mcp`), every
    resource it lists, and its memory prompt (the prompt blocks)."""

    name = "mcp"

    def writes(self, calls: Calls) -> bool:
        return calls.kind.over_mcp and calls.write is not None

    def reads(self, calls: Calls) -> bool:
        return calls.kind.place is not None or (calls.kind.over_mcp and calls.read is not None)

    @contextlib.asynccontextmanager
    async def session(self, world: World, who: Person) -> AsyncIterator[Any]:
        """A client session of the gateway as `who`."""
        services = gateway_services(world.settings, store=world.backend.store)
        server = build_server(services, world.backend.store, fixed(who.ctx))
        async with create_connected_server_and_client_session(server) as client:
            yield client

    async def write(self, world: World, calls: Calls, who: Person, text: str) -> None:
        assert calls.write is not None
        async with self.session(world, who) as client:
            result = await client.call_tool(calls.write[0], calls.write[1](text))
        assert not result.isError, result.content

    async def read(self, world: World, calls: Calls, who: Person, text: str) -> str:
        shown: list[str] = []
        async with self.session(world, who) as client:
            if calls.kind.over_mcp and calls.read is not None:
                result = await client.call_tool(*calls.read)
                shown += [part.text for part in result.content if isinstance(part, TextContent)]
            prompt = await client.get_prompt("memory")
            shown += [m.content.text for m in prompt.messages if isinstance(m.content, TextContent)]
            for resource in (await client.list_resources()).resources:
                found = await client.read_resource(resource.uri)
                shown += [c.text for c in found.contents if isinstance(c, TextResourceContents)]
        return "\n".join(shown)


class CliDoor(Door):
    """`memory-plugin import --merge` (in process, over the backend's URL): loads an export of
    the text written by the graph into a scratch store; `memory-plugin export` shows it."""

    name = "cli-import"
    sync = True

    def reaches(self, world: World) -> bool:
        """memory:// lives in one process: the CLI's own connection would open another."""
        return not world.url.startswith("memory://")

    def writes(self, calls: Calls) -> bool:
        return calls.exported

    def reads(self, calls: Calls) -> bool:
        return calls.exported

    async def write(self, world: World, calls: Calls, who: Person, text: str) -> None:
        with connect("memory://") as backend:
            scratch = World(backend, backend.url, world.tmp, world.settings, sync=True)
            await GraphDoor("graph", asynchronous=True).write(scratch, calls, who, text)
            archive = run(backend.store, export_plan(who.owner))
        path = world.tmp / f"{uuid.uuid4().hex[:8]}.json"
        path.write_text(archive.dumps())
        command = ["import", str(path), "--merge", "--url", world.url]
        code, out = await asyncio.to_thread(_cli, command)
        assert code == 0, out

    async def read(self, world: World, calls: Calls, who: Person, text: str) -> str:
        args = ["export", "--user", who.ctx.user_id or "", "--url", world.url]
        if who.ctx.org_id:
            args += ["--org", who.ctx.org_id]
        return (await asyncio.to_thread(_cli, args))[1]


def _cli(args: list[str]) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(args)
    return code, out.getvalue() + err.getvalue()


@contextlib.asynccontextmanager
async def opened(url: str, sync: bool) -> AsyncIterator[Backend]:
    """The backend at `url`, opened with connect (`sync`) or aconnect."""
    if sync:
        with connect(url) as backend:
            yield backend
    else:
        async with await aconnect(url) as backend:
            yield backend


async def erased(world: World, who: Person) -> None:
    """Delete `who` with their threads: erase_user over a backend opened with connect,
    aerase_user over one opened with aconnect."""
    store, checkpointer = world.backend.store, world.backend.checkpointer
    if world.sync:
        await asyncio.to_thread(erase_user, store, who.owner, checkpointer=checkpointer)
    else:
        await aerase_user(store, who.owner, checkpointer=checkpointer)


async def exported(world: World, who: Person) -> str:
    """Everything an export of `who` holds (empty when the store holds nothing of theirs)."""
    try:
        archive = await arun(world.backend.store, export_plan(who.owner))
    except UnknownUserError:
        return ""
    return json.dumps(archive.to_json())


DOORS: tuple[Door, ...] = (
    GraphDoor("graph-invoke", asynchronous=False),
    GraphDoor("graph-ainvoke", asynchronous=True),
    AgentDoor(),
    RestDoor(),
    McpDoor(),
    CliDoor(),
)
