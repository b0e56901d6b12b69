"""Issue 9, points 4 and 12: identity comes from the server, ids are checked, and backend
errors never show a password.

Point 4: under LangGraph Server the authenticated user (`langgraph_auth_user`,
`langgraph_auth_user_id` in `config["configurable"]`) is the only source of `user_id`, its
workspace, org and the thread owner win over the client's context, and a client-named
workspace needs the membership hook (by default the user object's `workspaces`), for every
read and write. Blank, invisible and over-long ids are refused on every backend with the same
InvalidIdError. The end-to-end check through `langgraph dev` is tests/test_server_auth.py.

Point 12: `connect()` against a closed port with a password in the query string, an
unencoded "@" in the password, or a key=value string shows no password in the error, its
repr or its causes.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
from langgraph.graph import END, START, StateGraph
from psycopg.conninfo import conninfo_to_dict
from typing_extensions import TypedDict

from memory_plugin import (
    Backend,
    BackendError,
    InvalidIdError,
    MemoryContext,
    ScopeError,
    aconnect,
    connect,
    current_context,
    personal_scope,
    team_scope,
)
from memory_plugin.backends.url import parse_url, redact
from memory_plugin.scope import agent_scope, reachable_namespace
from memory_plugin.scope.identity import Membership
from memory_plugin.scope.namespaces import MAX_ID_BYTES, ROOT, encode_id
from memory_plugin.scoped import ScopedMemory
from tests.test_scoped_tools import agent, call, run_turn, tool_replies

ACME = "acme"


def server_conf(user: str, **fields: Any) -> dict[str, Any]:
    """`config["configurable"]` as LangGraph Server fills it for an authenticated user: the
    user object its auth handler returned, and that user's id."""
    return {
        "langgraph_auth_user": {"identity": user, **fields},
        "langgraph_auth_user_id": user,
    }


ANN_SERVER = server_conf("ann", workspaces=[ACME])
MALLORY_SERVER = server_conf("mallory", workspaces=["mallory-lab"])


def memory_items(backend: Backend) -> list[tuple[tuple[str, ...], str, dict[str, Any]]]:
    """Every item the plugin holds in the store."""
    found = backend.store.search((ROOT,), limit=1000)
    return sorted((tuple(i.namespace), i.key, i.value) for i in found)


# Point 4: context resolution ----------------------------------------------------------------


def test_server_user_is_the_only_user() -> None:
    ctx = MemoryContext.from_run({}, ANN_SERVER)
    assert ctx.user_id == "ann"
    for claimed in ({"user_id": "mallory"}, None):
        conf = {**ANN_SERVER, "user_id": "mallory"} if claimed is None else ANN_SERVER
        with pytest.raises(ScopeError, match="user_id 'mallory' does not match"):
            MemoryContext.from_run(claimed, conf)
    only_object = {"langgraph_auth_user": {"identity": "ann"}}
    assert MemoryContext.from_run({}, only_object).user_id == "ann"


def test_server_workspace_org_and_thread_owner_win_over_the_client() -> None:
    conf = server_conf("ann", workspace_id=ACME, org_id="acme-corp")
    ctx = MemoryContext.from_run({"thread_visibility": "shared"}, conf, metadata={"owner": "bob"})
    assert (ctx.user_id, ctx.workspace_id, ctx.org_id) == ("ann", ACME, "acme-corp")
    assert ctx.thread_owner_id == "bob"
    refused = {
        "workspace_id": "globex",
        "org_id": "globex-corp",
        "thread_owner_id": "ann",
    }
    for name, value in refused.items():
        with pytest.raises(ScopeError, match=f"{name} '{value}' does not match"):
            MemoryContext.from_run({name: value}, conf, metadata={"owner": "bob"})


def test_client_named_workspace_needs_the_users_workspaces_under_the_server() -> None:
    assert MemoryContext.from_run({"workspace_id": ACME}, ANN_SERVER).workspace_id == ACME
    with pytest.raises(ScopeError, match="'mallory' is not a member of workspace 'acme'"):
        MemoryContext.from_run({"workspace_id": ACME}, MALLORY_SERVER)
    with pytest.raises(ScopeError, match="workspace 'acme'"):
        MemoryContext.from_run({"workspace_id": ACME}, server_conf("ann"))
    with pytest.raises(ScopeError, match="org_id 'acme-corp' is not vouched for"):
        MemoryContext.from_run({"org_id": "acme-corp"}, ANN_SERVER)


class Members:
    """An app's membership hook: who belongs where, and every question it was asked."""

    def __init__(self, **workspaces: list[str]) -> None:
        self.workspaces = workspaces
        self.asked: list[tuple[str, str]] = []

    def __call__(self, user_id: str, workspace_id: str) -> bool:
        self.asked.append((user_id, workspace_id))
        return user_id in self.workspaces.get(workspace_id, [])


def test_membership_hook_decides_under_the_server_and_outside_it() -> None:
    members = Members(acme=["ann"])
    conf = server_conf("ann")  # the user object lists no workspaces: the hook decides
    assert MemoryContext.from_run({"workspace_id": ACME}, conf, membership=members).user_id
    with pytest.raises(ScopeError, match="'mallory' is not a member of workspace 'acme'"):
        MemoryContext.from_run({"workspace_id": ACME}, MALLORY_SERVER, membership=members)
    outside = {"user_id": "mallory", "workspace_id": ACME}
    assert MemoryContext.from_run(outside).workspace_id == ACME  # the app's context is trusted
    with pytest.raises(ScopeError, match="not a member"):
        MemoryContext.from_run(outside, membership=members)
    with pytest.raises(ScopeError, match="needs a user_id"):
        MemoryContext.from_run({"workspace_id": ACME}, membership=members)
    assert members.asked == [("ann", ACME), ("mallory", ACME), ("mallory", ACME)]


# Point 4: through real graphs ----------------------------------------------------------------


class Seen(TypedDict, total=False):
    text: str


def scope_writer(backend: Backend, membership: Membership | None) -> Any:
    """A real graph whose node writes the run's thread scope (current_context)."""

    def write(state: Seen) -> Seen:
        from langgraph.config import get_store

        from memory_plugin.scope import thread_scope

        get_store().put(thread_scope(current_context(membership)).namespace, "n", {"t": 1})
        return {}

    builder = StateGraph(Seen, context_schema=MemoryContext)
    builder.add_node("write", write)
    builder.add_edge(START, "write")
    builder.add_edge("write", END)
    return builder.compile(store=backend.store, checkpointer=backend.checkpointer)


def test_server_run_naming_another_workspace_writes_nothing_invoke(backend: Backend) -> None:
    graph = scope_writer(backend, None)
    shared = {"workspace_id": ACME, "thread_visibility": "shared"}
    config = {"configurable": {"thread_id": "t1", **MALLORY_SERVER}}
    with pytest.raises(ScopeError, match="not a member of workspace 'acme'"):
        graph.invoke({"text": "x"}, config, context=shared)
    with pytest.raises(ScopeError, match="not a member of workspace 'acme'"):
        graph.invoke({"text": "x"}, config, context={"workspace_id": ACME})
    assert memory_items(backend) == []
    graph.invoke({"text": "x"}, {"configurable": {"thread_id": "t2", **ANN_SERVER}}, context=shared)
    team = team_scope(MemoryContext(workspace_id=ACME)).namespace
    assert [(ns, key) for ns, key, _ in memory_items(backend)] == [(team, "n")]


def test_nodes_take_the_thread_owner_the_server_recorded(backend: Backend) -> None:
    graph = scope_writer(backend, None)
    config = {"configurable": {"thread_id": "t1", **ANN_SERVER}, "metadata": {"owner": "bob"}}
    with pytest.raises(ScopeError, match="another user's thread"):
        graph.invoke({"text": "x"}, config)
    with pytest.raises(ScopeError, match="thread_owner_id 'ann' does not match"):
        graph.invoke({"text": "x"}, config, context={"thread_owner_id": "ann"})
    assert memory_items(backend) == []
    config["metadata"] = {"owner": "ann"}
    graph.invoke({"text": "x"}, config)
    mine = personal_scope(MemoryContext(user_id="ann")).namespace
    assert [(ns, key) for ns, key, _ in memory_items(backend)] == [(mine, "n")]


async def test_revoked_membership_takes_effect_at_once_ainvoke(abackend: Backend) -> None:
    members = Members(acme=["ann"])
    graph = scope_writer(abackend, members)
    shared = {"user_id": "ann", "workspace_id": ACME, "thread_visibility": "shared"}
    await graph.ainvoke({"text": "x"}, {"configurable": {"thread_id": "t1"}}, context=shared)
    members.workspaces["acme"] = []
    with pytest.raises(ScopeError, match="'ann' is not a member of workspace 'acme'"):
        await graph.ainvoke({"text": "x"}, {"configurable": {"thread_id": "t2"}}, context=shared)
    assert members.asked == [("ann", ACME), ("ann", ACME)]


def test_memory_tools_refuse_another_workspace_under_the_server_invoke(backend: Backend) -> None:
    graph = agent(backend, call("remember", text="Mallory was here"))
    shared = {"workspace_id": ACME, "thread_visibility": "shared"}
    result = run_turn(graph, shared, **MALLORY_SERVER)
    (reply,) = tool_replies(result)
    assert "not a member of workspace 'acme'" in str(reply.content)
    assert memory_items(backend) == []


async def test_memory_tools_refuse_another_workspace_under_the_server_ainvoke(
    abackend: Backend,
) -> None:
    graph = agent(abackend, call("remember", text="Mallory was here"))
    shared = {"workspace_id": ACME, "thread_visibility": "shared"}
    config = {"configurable": {"thread_id": "t1", **MALLORY_SERVER}}
    result = await graph.ainvoke({"messages": [HumanMessage("hi")]}, config, context=shared)
    (reply,) = tool_replies(result)
    assert "not a member of workspace 'acme'" in str(reply.content)
    assert await abackend.store.asearch((ROOT,)) == []


def test_scoped_memory_membership_guards_every_read_and_write(backend: Backend) -> None:
    trusted = ScopedMemory(backend.store)
    ann = MemoryContext(user_id="ann", workspace_id=ACME, thread_visibility="shared")
    note = trusted.remember(ann, "Release freeze starts Friday")
    trusted.write_document(ann, "# Team\n- freeze Friday")
    before = memory_items(backend)
    guarded = ScopedMemory(backend.store, membership=Members(acme=["ann"]))
    mallory = MemoryContext(user_id="mallory", workspace_id=ACME, thread_visibility="shared")
    attempts: list[Callable[[], Any]] = [
        lambda: guarded.read_document(mallory),
        lambda: guarded.list_notes(mallory),
        lambda: guarded.recall(mallory, "freeze"),
        lambda: guarded.prompt_blocks(mallory),
        lambda: guarded.remember(mallory, "Mallory was here"),
        lambda: guarded.write_document(mallory, "# Mallory's now", expected_version=None),
        lambda: guarded.delete_note(mallory, note.key),
        lambda: guarded.list_notes(MemoryContext(user_id="mallory", workspace_id=ACME)),
    ]
    for attempt in attempts:
        with pytest.raises(ScopeError, match="'mallory' is not a member of workspace 'acme'"):
            attempt()
    assert memory_items(backend) == before
    assert [n.body for n in guarded.list_notes(ann)] == ["Release freeze starts Friday"]


def test_store_namespaces_a_user_may_reach() -> None:
    ann = MemoryContext(user_id="ann", workspace_id=ACME)
    team = team_scope(ann).namespace
    mine = [
        personal_scope(ann).child("notes"),
        personal_scope(MemoryContext(user_id="ann")).namespace,
        team,
        (*team, "notes"),
        ("memory_plugin", "profile", "ann"),
        agent_scope(MemoryContext(user_id="ann", agent_id="bot"), private=True).namespace,
        agent_scope(MemoryContext(user_id="ann", agent_id="bot"), private=False).namespace,
    ]
    for ns in mine:
        assert reachable_namespace(ns, "ann", workspaces=[ACME]), ns
    not_mine = [
        (ROOT,),
        (ROOT, "ws", "acme"),
        (ROOT, "ws", "acme", "personal"),
        personal_scope(MemoryContext(user_id="bob", workspace_id=ACME)).namespace,
        team_scope(MemoryContext(workspace_id="globex")).namespace,
        ("memory_plugin", "profile", "bob"),
        ("memory_plugin", "thread", "t1"),
        ("memory_plugin", "settings", "platform"),
        ("elsewhere", "ann"),
    ]
    for ns in not_mine:
        assert not reachable_namespace(ns, "ann", workspaces=[ACME]), ns
    assert not reachable_namespace(team, "ann", workspaces=[ACME], org_id="acme-corp")


# Point 4: ids --------------------------------------------------------------------------------

BLANK_IDS = [
    "",
    " ",
    "\t\n",
    "\u00a0\u3000",
    "\u200b",
    "\u200b\u200c\u200d\u2060",
    "\u202e\u200f",
    "\ufeff",
    "\u3164\u2800",
    "\u0301",
]


@pytest.mark.parametrize("bad", BLANK_IDS)
def test_blank_and_invisible_ids_are_refused(bad: str) -> None:
    for field in ("user_id", "workspace_id", "org_id", "space_id", "agent_id"):
        with pytest.raises(InvalidIdError, match=field):
            MemoryContext(**{field: bad})
    with pytest.raises(InvalidIdError, match="user_id"):
        MemoryContext.from_run({"user_id": bad})


@pytest.mark.parametrize("bad", ["ann\x00", "ann\nbob", "a\x1bb", "ann\ud800"])
def test_ids_with_control_characters_or_surrogates_are_refused(bad: str) -> None:
    with pytest.raises(InvalidIdError, match="workspace_id must not contain"):
        MemoryContext(workspace_id=bad)


def test_visible_ids_with_format_characters_inside_are_kept() -> None:
    for good in ("ann", "a\u200bb", "\u0645\u06cc\u200c\u062e", "x@example.com", "👩\u200d💻"):
        assert MemoryContext(user_id=good).user_id == good


def widest_id(rng: random.Random) -> str:
    """An id of exactly MAX_ID_BYTES UTF-8 bytes whose label is as long as any can be (every
    byte percent-encoded) and random, so PostgreSQL cannot compress it in the index."""
    chars: list[str] = []
    size = 0
    while size + 4 <= MAX_ID_BYTES:
        char = chr(rng.randrange(0x10000, 0x10FFFF))
        chars.append(char)
        size += 4
    return "".join(chars) + "." * (MAX_ID_BYTES - size)


def test_the_longest_ids_fit_every_backend_and_longer_ones_are_refused_alike(
    backend: Backend, backend_url: str
) -> None:
    rng = random.Random(9)
    org, workspace, user = widest_id(rng), widest_id(rng), widest_id(rng)
    assert all(len(encode_id(i)) == 3 * MAX_ID_BYTES for i in (org, workspace, user))
    ctx = MemoryContext(user_id=user, workspace_id=workspace, org_id=org)
    memory = ScopedMemory(backend.store)
    note = memory.remember(ctx, "The deepest namespace still fits")
    memory.write_document(ctx, "# Deep\n- fits")
    assert [n.key for n in memory.list_notes(ctx)] == [note.key]
    assert memory.read_document(ctx) is not None
    agent_ctx = MemoryContext(user_id=user, org_id=org, agent_id=workspace)
    backend.store.put(agent_scope(agent_ctx, private=True).child("notes"), "k" * 64, {"t": 1})
    assert backend.store.get(agent_scope(agent_ctx, private=True).child("notes"), "k" * 64)

    messages = set()
    for too_long in ("x" * (MAX_ID_BYTES + 1), "é" * (MAX_ID_BYTES // 2) + "x"):
        with pytest.raises(InvalidIdError) as refused:
            MemoryContext(user_id=too_long, workspace_id=workspace, org_id=org)
        messages.add(str(refused.value))
    assert messages == {f"user_id is too long: 257 bytes in UTF-8, at most {MAX_ID_BYTES} allowed"}

    if backend.kind == "postgres":
        assert_below_the_btree_limit(backend_url, rng)


BTREE_LIMIT = 2_704
"""PostgreSQL's largest btree entry (8 kB pages), in bytes."""


def assert_below_the_btree_limit(url: str, rng: random.Random) -> None:
    """The limit is real for what PostgreSQL cannot compress, and every row the longest ids
    produced stays below it even uncompressed."""
    import psycopg

    with connect(url) as backend:
        noise = "".join(rng.choice("0123456789ABCDEF%") for _ in range(BTREE_LIMIT))
        with pytest.raises(psycopg.errors.ProgramLimitExceeded, match="index row size"):
            backend.store.put((ROOT, noise), "k", {"t": 1})
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT octet_length(prefix) + octet_length(key) FROM store").fetchall()
        vectors = conn.execute("SELECT to_regclass('store_vectors')").fetchone()
        if vectors and vectors[0]:  # only a store opened with an index made it
            rows += conn.execute(
                "SELECT octet_length(prefix) + octet_length(key) + octet_length(field_name)"
                " FROM store_vectors"
            ).fetchall()
    assert rows and max(size for (size,) in rows) < BTREE_LIMIT - 64, rows


def test_a_bad_id_from_a_run_stores_nothing(backend: Backend) -> None:
    graph = scope_writer(backend, None)
    for bad in ("\u200b", "x" * (MAX_ID_BYTES + 1)):
        with pytest.raises(InvalidIdError, match="user_id"):
            graph.invoke(
                {"text": "x"}, {"configurable": {"thread_id": "t"}}, context={"user_id": bad}
            )
    assert memory_items(backend) == []


def test_memory_tools_answer_a_bad_id_without_storing(backend: Backend) -> None:
    graph = agent(backend, call("remember", text="fact"))
    result = run_turn(graph, None, langgraph_auth_user_id="\u200b")
    replies = [m for m in result["messages"] if isinstance(m, ToolMessage | AIMessage)]
    assert any("user_id must not be blank" in str(m.content) for m in replies)
    assert memory_items(backend) == []


# Point 12: no password in backend errors -----------------------------------------------------

PASSWORD = "Pa55-w0rd-Secret"
CLOSED = "127.0.0.1:1"
FORMS = {
    "query": f"postgresql://app@{CLOSED}/db?sslmode=disable&password={PASSWORD}",
    "unencoded @": f"postgresql://app:{PASSWORD[:4]}@{PASSWORD[4:]}@{CLOSED}/db",
    "unencoded / and ?": f"postgresql://app:{PASSWORD[:4]}/{PASSWORD[4:8]}?{PASSWORD[8:]}@{CLOSED}/db",
    "key=value": f"host=127.0.0.1 port=1 user=app password={PASSWORD} dbname=db",
    "key=value quoted": f"host=127.0.0.1 port=1 user=app password='{PASSWORD} x' dbname=db",
    "key=value malformed": f"host=127.0.0.1 port=1 password={PASSWORD} dbname",
    "sslpassword": f"postgresql://app@{CLOSED}/db?sslpassword={PASSWORD}",
    "unknown scheme": f"mysql://app:{PASSWORD}@{CLOSED}/db?password={PASSWORD}",
}


SECRET_PIECES = [PASSWORD, PASSWORD[:4], PASSWORD[4:], PASSWORD[4:8], PASSWORD[8:]]
"""The password, and the parts of it a driver could echo as a host, port or option."""


def error_texts(error: BaseException) -> list[str]:
    """str and repr of an error and of every exception chained to it."""
    texts: list[str] = []
    seen: BaseException | None = error
    while seen is not None:
        texts += [str(seen), repr(seen), *map(str, seen.args)]
        seen = seen.__cause__ or seen.__context__
    return texts


@pytest.mark.parametrize("form", list(FORMS))
def test_connect_errors_never_show_the_password(form: str) -> None:
    url = FORMS[form]
    with pytest.raises(BackendError) as raised:
        connect(url)
    text = "\n".join(error_texts(raised.value))
    for piece in SECRET_PIECES:
        assert piece not in text, (piece, text)
    assert "***" in text


@pytest.mark.parametrize("form", ["query", "unencoded @", "key=value"])
async def test_aconnect_errors_never_show_the_password(form: str) -> None:
    with pytest.raises(BackendError) as raised:
        await aconnect(FORMS[form])
    text = "\n".join(error_texts(raised.value))
    assert all(piece not in text for piece in SECRET_PIECES), text


def test_passwords_with_reserved_characters_reach_the_driver_whole() -> None:
    parsed = parse_url(f"postgresql://app:{PASSWORD[:4]}@{PASSWORD[4:8]}/x#@db.internal:6543/m")
    assert conninfo_to_dict(parsed.target) == {
        "user": "app",
        "password": f"{PASSWORD[:4]}@{PASSWORD[4:8]}/x#",
        "host": "db.internal",
        "port": "6543",
        "dbname": "m",
    }
    assert parsed.display == "postgresql://app:***@db.internal:6543/m"
    encoded = parse_url("postgresql://app:p%40ss@db/m")
    assert conninfo_to_dict(encoded.target)["password"] == "p@ss"
    keyvalue = parse_url(FORMS["key=value"])
    assert (keyvalue.kind, keyvalue.target) == ("postgres", FORMS["key=value"])
    assert PASSWORD not in keyvalue.display
    assert (
        redact(f"postgresql://h/db?password={PASSWORD}&x=1") == "postgresql://h/db?password=***&x=1"
    )
