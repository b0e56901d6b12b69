"""Issue 9, settings and services: every setting takes effect, from one owner, on every path.

Point 8: settings given in code reach the tools; a memory kind switched off at any layer is
off for the scope (tools not offered, calls refused, no flush, no nightly consolidation);
environment switches lock; bad values are refused when written or when the graph is built;
unknown MEMORY_* variables are reported. Point 7: a store that fails never stops the answer.
The membership hook reaches every node and tool of the graph.
"""

from __future__ import annotations

import logging
import math
from collections.abc import Sequence
from datetime import timedelta
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.tools import tool
from langgraph.config import get_config
from pydantic import Field

from memory_plugin import (
    Backend,
    LayeredSettings,
    LockedSettingError,
    MemoryContext,
    MemorySettings,
    ScopeError,
    SettingsError,
    create_memory_graph,
)
from memory_plugin.background import wait_all
from memory_plugin.offline.demo import DemoModel
from memory_plugin.prebuilt.middleware import MemoryMiddleware
from memory_plugin.profile.memory import ProfileMemory
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.consolidation import consolidate
from memory_plugin.settings.layers import LAYER_KEY, layer_namespace
from tests.fakes import merging_model
from tests.faults import FaultyStore
from tests.scoped_helpers import Clock

ANN = MemoryContext(user_id="ann", workspace_id="acme", org_id="globex", space_id="research")
ANN_SALES = MemoryContext(user_id="ann", workspace_id="acme", org_id="globex", space_id="sales")
BOB = MemoryContext(user_id="bob", workspace_id="acme", org_id="globex", space_id="research")
SCOPED_TOOLS = {"remember", "update_memory", "recall"}
LONG_NOTE = "The quarterly report is due on the last Friday of the month. " * 5  # 300 chars


@tool
def lookup(term: str) -> str:
    """Look a term up (returns a long glossary entry)."""
    return f"{term}: " + "a long glossary entry about the term and its history. " * 60


class OfferedToolsModel(DemoModel):
    """The demo model, recording the tool names bound for each of the agent's own calls."""

    offered: list[set[str]] = Field(default_factory=list)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        """Bind the names, so each call can record what the model was offered."""
        names = [getattr(t, "name", None) or getattr(t, "__name__", str(t)) for t in tools]
        return self.bind(offered_names=names)

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
        if "offered_names" in kwargs:
            self.offered.append(set(kwargs.pop("offered_names")))
        return super()._generate(messages, *args, **kwargs)


def call(name: str, n: int = 1, **args: Any) -> AIMessage:
    return AIMessage("", tool_calls=[{"name": name, "args": args, "id": f"{name}-{n}"}])


def turn(graph: Any, text: str, thread: str, ctx: MemoryContext = ANN) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    return dict(graph.invoke({"messages": [HumanMessage(text)]}, config, context=ctx))


async def aturn(graph: Any, text: str, thread: str, ctx: MemoryContext = ANN) -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    return dict(await graph.ainvoke({"messages": [HumanMessage(text)]}, config, context=ctx))


def tool_replies(out: dict[str, Any]) -> list[ToolMessage]:
    return [m for m in out["messages"] if isinstance(m, ToolMessage)]


def graph_for(backend: Backend, model: DemoModel, **options: Any) -> Any:
    return create_memory_graph(
        model, [lookup], store=backend.store, checkpointer=backend.checkpointer, **options
    )


def agent_for(backend: Backend, model: DemoModel, **options: Any) -> Any:
    return create_agent(
        model,
        tools=[lookup],
        middleware=[MemoryMiddleware(model, **options)],
        checkpointer=backend.checkpointer,
        store=backend.store,
        context_schema=MemoryContext,
    )


def layer(backend: Backend, name: str, ctx: MemoryContext = ANN) -> Any:
    item = backend.store.get(layer_namespace(name, ctx), LAYER_KEY)  # type: ignore[arg-type]
    return item.value if item is not None else None


# --- settings in code reach every path ------------------------------------------------------


def test_code_settings_reach_the_remember_tool(backend: Backend) -> None:
    """create_memory_graph(settings=MemorySettings(note_max_chars=100)) refuses a long note."""
    model = DemoModel(script=[call("remember", text=LONG_NOTE), "Done."])
    graph = graph_for(backend, model, settings=MemorySettings(note_max_chars=100))
    (reply,) = tool_replies(turn(graph, "Remember the report deadline.", "t1"))
    assert reply.status == "error" and "100" in str(reply.content)
    assert ScopedMemory(backend.store).list_notes(ANN) == []


async def test_code_settings_reach_the_remember_tool_async(abackend: Backend) -> None:
    model = DemoModel(script=[call("remember", text=LONG_NOTE), "Done."])
    graph = graph_for(abackend, model, settings=MemorySettings(note_max_chars=100))
    (reply,) = tool_replies(await aturn(graph, "Remember the report deadline.", "t1"))
    assert reply.status == "error" and "100" in str(reply.content)
    assert await ScopedMemory(abackend.store).alist_notes(ANN) == []


def test_code_settings_reach_the_middleware_tools(backend: Backend) -> None:
    model = DemoModel(script=[call("remember", text=LONG_NOTE), "Done."])
    agent = agent_for(backend, model, settings=MemorySettings(note_max_chars=100))
    (reply,) = tool_replies(turn(agent, "Remember the report deadline.", "t1"))
    assert reply.status == "error" and "100" in str(reply.content)
    assert ScopedMemory(backend.store).list_notes(ANN) == []


# --- a kind switched off at any layer is off for the scope -------------------------------


def switched_off_script() -> list[Any]:
    return [call("remember", text="Prefers tea"), "Done.", "Hello."]


def assert_scoped_memory_off(model: OfferedToolsModel, out: dict[str, Any]) -> None:
    (reply,) = tool_replies(out)
    assert reply.status == "error" and "scoped_memory" in str(reply.content)
    assert model.offered and all(not SCOPED_TOOLS & names for names in model.offered)
    assert all("lookup" in names for names in model.offered)


def test_space_layer_switch_hides_and_refuses_scoped_tools(backend: Backend) -> None:
    LayeredSettings(backend.store).update("space", ANN, set={"scoped_memory": False})
    ScopedMemory(backend.store).write_document(ANN_SALES, "# Ann\n- Works in sales")
    model = OfferedToolsModel(script=switched_off_script())
    graph = graph_for(backend, model)
    out = turn(graph, "Remember that I like tea.", "research")
    assert_scoped_memory_off(model, out)
    assert ScopedMemory(backend.store).list_notes(ANN) == []
    assert not any("Works in sales" in b["text"] for b in out.get("memory_blocks") or [])
    model.offered.clear()
    turn(graph, "Hi.", "sales", ANN_SALES)
    assert model.offered == [{"lookup", *SCOPED_TOOLS}]  # journal tools: nothing left the prompt


async def test_space_layer_switch_hides_and_refuses_scoped_tools_async(
    abackend: Backend,
) -> None:
    await LayeredSettings(abackend.store).aupdate("space", ANN, set={"scoped_memory": False})
    model = OfferedToolsModel(script=switched_off_script())
    out = await aturn(graph_for(abackend, model), "Remember that I like tea.", "research")
    assert_scoped_memory_off(model, out)
    assert await ScopedMemory(abackend.store).alist_notes(ANN) == []


def test_middleware_hides_and_refuses_tools_of_a_kind_switched_off(backend: Backend) -> None:
    LayeredSettings(backend.store).update("user", ANN, set={"scoped_memory": False})
    model = OfferedToolsModel(script=switched_off_script())
    out = turn(agent_for(backend, model), "Remember that I like tea.", "research")
    assert_scoped_memory_off(model, out)
    assert ScopedMemory(backend.store).list_notes(ANN) == []


async def test_middleware_hides_and_refuses_tools_async(abackend: Backend) -> None:
    await LayeredSettings(abackend.store).aupdate("org", ANN, set={"scoped_memory": False})
    model = OfferedToolsModel(script=switched_off_script())
    out = await aturn(agent_for(abackend, model), "Remember that I like tea.", "research")
    assert_scoped_memory_off(model, out)
    assert await ScopedMemory(abackend.store).alist_notes(ANN) == []


def long_thread(backend: Backend, turns: int = 6) -> list[tuple[str, str]]:
    """Turns that each look up a long entry on a small window (they compact); their events."""
    script: list[Any] = []
    for n in range(turns):
        script += [call("lookup", n, term=f"term {n}"), f"Looked up {n}."]
    model = DemoModel(script=script, profile={"max_input_tokens": 5_000})
    graph = graph_for(backend, model)
    events: list[tuple[str, str]] = []
    for n in range(turns):
        for mode, chunk in graph.stream(
            {"messages": [HumanMessage(f"look up term {n}")]},
            {"configurable": {"thread_id": "long"}},
            context=ANN,
            stream_mode=["custom", "updates"],
        ):
            if mode == "custom":
                events.append((chunk["kind"], chunk["action"]))
    return events


def test_flush_skips_a_scope_with_scoped_memory_off(backend: Backend) -> None:
    LayeredSettings(backend.store).update("user", ANN, set={"scoped_memory": False})
    events = long_thread(backend)
    assert ("context_management", "compacted") in events
    assert ("scoped_memory", "flushed") not in events
    assert wait_all() and ScopedMemory(backend.store).list_notes(ANN) == []


def test_stored_platform_record_switches_context_management_off(backend: Backend) -> None:
    platform = LayeredSettings(backend.store, environ={})
    platform.update("platform", ANN, set={"context_management": False})
    events = long_thread(backend)
    assert not {
        ("context_management", "masked"),
        ("context_management", "compacted"),
        ("scoped_memory", "flushed"),
    } & set(events)
    model = OfferedToolsModel(script=[call("journal_message_search", query="tea"), "Done."])
    (reply,) = tool_replies(turn(graph_for(backend, model), "What did I say?", "journal"))
    assert reply.status == "error" and "context_management" in str(reply.content)
    assert model.offered and all("journal_message_search" not in n for n in model.offered)


def test_nightly_consolidation_skips_a_scope_switched_off(backend: Backend) -> None:
    clock = Clock()
    memory = ScopedMemory(backend.store, clock=lambda: clock() - timedelta(days=10))
    memory.remember(ANN, "Prefers tea")
    memory.remember(BOB, "Prefers coffee")
    LayeredSettings(backend.store).update("user", ANN, set={"scoped_memory": False})
    report = consolidate(backend.store, merging_model(), now=clock())
    assert report.folded == 1
    assert memory.read_document(ANN) is None
    assert "Prefers coffee" in memory.read_document(BOB).text  # type: ignore[union-attr]
    assert [n.consolidated for n in memory.list_notes(ANN)] == [False]


# --- environment switches are locks --------------------------------------------------------


def test_env_switch_cannot_be_turned_back_on_by_any_layer(backend: Backend) -> None:
    LayeredSettings(backend.store, environ={}).update("platform", ANN, set={"flush": True})
    for name in ("org", "space", "user"):
        LayeredSettings(backend.store, environ={}).update(name, ANN, set={"flush": True})
    settings = LayeredSettings(backend.store, environ={"MEMORY_FLUSH": "off"})
    effective = settings.get(ANN)
    assert effective.values.flush is False and effective.sources["flush"] == "env"
    assert effective.ignored["flush"] == ["platform", "org", "space", "user"]
    for name in ("platform", "org", "space", "user"):
        before = layer(backend, name)
        with pytest.raises(LockedSettingError, match="MEMORY_FLUSH"):
            settings.update(name, ANN, set={"flush": True})  # type: ignore[arg-type]
        assert layer(backend, name) == before


def test_env_flush_off_holds_against_a_user_layer_in_the_graph(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    LayeredSettings(backend.store, environ={}).update("user", ANN, set={"flush": True})
    monkeypatch.setenv("MEMORY_FLUSH", "off")
    events = long_thread(backend)
    assert ("context_management", "compacted") in events
    assert ("scoped_memory", "flushed") not in events
    assert wait_all() and ScopedMemory(backend.store).list_notes(ANN) == []


def test_env_switch_takes_a_kind_out_of_the_graph(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    LayeredSettings(backend.store, environ={}).update("user", ANN, set={"scoped_memory": True})
    monkeypatch.setenv("MEMORY_SCOPED_MEMORY", "off")
    model = OfferedToolsModel(script=[call("remember", text="Prefers tea"), "Done."])
    out = turn(graph_for(backend, model), "Remember that I like tea.", "env")
    (reply,) = tool_replies(out)
    assert reply.status == "error" and ScopedMemory(backend.store).list_notes(ANN) == []
    assert model.offered and all(not SCOPED_TOOLS & names for names in model.offered)


# --- values are validated when written ----------------------------------------------------

# Values a settings layer used to store (coerced, or out of range for later clamping).
BAD_VALUES = [
    ("flush_timeout_seconds", math.nan, "not a finite number"),
    ("summary_timeout_seconds", math.inf, "not a finite number"),
    ("masking_trigger_ratio", -math.inf, "not a finite number"),
    ("note_max_chars", "300", "malformed"),
    ("note_max_chars", True, "malformed"),
    ("flush", 1, "malformed"),
    ("note_max_chars", 50, "out of range"),
    ("profile_max_tokens", 50_000, "out of range"),
    ("recall_default_k", 0, "out of range"),
]
# Values every path already refused, though MemorySettings not as a SettingsError.
WRONG_TYPES = [
    ("note_max_chars", 12.5, "malformed"),
    ("masking_excluded_tools", "search", "malformed"),
]


@pytest.mark.parametrize(("name", "value", "why"), BAD_VALUES)
def test_layer_writes_refuse_bad_values(backend: Backend, name: str, value: Any, why: str) -> None:
    settings = LayeredSettings(backend.store, environ={})
    settings.update("org", ANN, set={"recall_max_k": 12})
    with pytest.raises(SettingsError, match=f"'{name}'.*{why}"):
        settings.update("org", ANN, set={name: value, "recall_max_k": 15})
    assert layer(backend, "org")["values"] == {"recall_max_k": 12}
    assert settings.get(ANN).values.recall_max_k == 12


async def test_async_layer_writes_refuse_bad_values(abackend: Backend) -> None:
    settings = LayeredSettings(abackend.store, environ={})
    with pytest.raises(SettingsError, match=r"'flush_timeout_seconds'.*not a finite number"):
        await settings.aupdate("user", ANN, set={"flush_timeout_seconds": math.nan})
    assert (await settings.aget(ANN)).values.flush_timeout_seconds == 5.0


@pytest.mark.parametrize(("name", "value", "why"), BAD_VALUES + WRONG_TYPES)
def test_memory_settings_refuse_bad_values(name: str, value: Any, why: str) -> None:
    with pytest.raises(SettingsError, match=f"'{name}'.*{why}"):
        MemorySettings(**{name: value})


def test_memory_settings_refuse_inconsistent_limits() -> None:
    with pytest.raises(SettingsError, match="document_soft_limit_chars"):
        MemorySettings(document_soft_limit_chars=30_000, document_hard_limit_chars=20_000)


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("MEMORY_FLUSH_TIMEOUT_SECONDS", "nan"),
        ("MEMORY_NOTE_MAX_CHARS", "lots"),
        ("MEMORY_RECALL_MAX_K", "0"),
        ("MEMORY_FLUSH", "sometimes"),
        ("MEMORY_LOCKED", "flush,no_such_setting"),
    ],
)
def test_bad_env_value_fails_when_the_graph_is_built(
    backend: Backend, monkeypatch: pytest.MonkeyPatch, variable: str, value: str
) -> None:
    monkeypatch.setenv(variable, value)
    with pytest.raises(SettingsError, match=variable):
        graph_for(backend, DemoModel(script=["Hi."]))
    with pytest.raises(SettingsError, match=variable):
        MemoryMiddleware(DemoModel(script=["Hi."]))


def test_settings_that_are_not_memory_settings_fail_when_the_graph_is_built(
    backend: Backend,
) -> None:
    with pytest.raises(SettingsError, match="MemorySettings"):
        graph_for(backend, DemoModel(), settings={"note_max_chars": 100})


def test_unknown_env_variables_are_reported_with_the_closest_setting(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("MEMORY_NOTE_MAX_CHAR", "100")
    monkeypatch.setenv("MEMORY_FLUSHH", "off")
    monkeypatch.setenv("MEMORY_URL", "memory://")
    monkeypatch.setenv("MEMORY_MODEL", "openai:gpt-4o-mini")
    monkeypatch.setenv("MEMORY_LOCKED", "flush")
    with caplog.at_level(logging.WARNING, logger="memory_plugin"):
        create_memory_graph(DemoModel(script=["Hi."]))
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert any(
        "MEMORY_NOTE_MAX_CHAR " in w and "did you mean MEMORY_NOTE_MAX_CHARS" in w for w in warnings
    )
    assert any("MEMORY_FLUSHH" in w and "did you mean MEMORY_FLUSH?" in w for w in warnings)
    assert not any(v in w for w in warnings for v in ("MEMORY_URL", "MEMORY_MODEL", "LOCKED"))


# --- a failing store never stops the answer ----------------------------------------------------


def test_settings_fall_back_to_the_last_good_values(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    store = FaultyStore(backend.store)
    settings = LayeredSettings(store, environ={"MEMORY_RECALL_MAX_K": "15"})
    settings.update("user", ANN, set={"note_max_chars": 150})
    assert settings.get(ANN).values.note_max_chars == 150
    store.set("down")
    with caplog.at_level(logging.WARNING, logger="memory_plugin"):
        assert settings.get(ANN).values.note_max_chars == 150
        fresh = settings.get(BOB).values
    assert (fresh.note_max_chars, fresh.recall_max_k) == (2_000, 15)
    assert sum("settings unreadable" in r.getMessage() for r in caplog.records) == 2


async def test_settings_fall_back_under_ainvoke(abackend: Backend) -> None:
    store = FaultyStore(abackend.store)
    settings = LayeredSettings(store, environ={})
    await settings.aupdate("user", ANN, set={"note_max_chars": 150})
    assert (await settings.aget(ANN)).values.note_max_chars == 150
    store.set("down")
    assert (await settings.aget(ANN)).values.note_max_chars == 150


def fault_script() -> list[Any]:
    return [
        call("remember", 1, text="Prefers tea"),
        call("update_memory", 2, content="# Ann\n- Prefers tea"),
        call("recall", 3, query="tea"),
        "Answered anyway.",
    ]


@pytest.mark.parametrize("fault", ["down", "read_only", "full"])
def test_a_full_turn_answers_while_the_store_fails(backend: Backend, fault: Any) -> None:
    store = FaultyStore(backend.store)
    graph = create_memory_graph(
        DemoModel(script=["Hello.", *fault_script()]),
        store=store,
        checkpointer=backend.checkpointer,
    )
    turn(graph, "Hi, my name is Ann.", "faults")
    store.set(fault)
    out = turn(graph, "Remember that I like tea.", "faults")
    assert out["messages"][-1].content == "Answered anyway."
    replies = {m.name: m for m in tool_replies(out)}
    assert replies["remember"].status == "error"
    assert str(replies["remember"].content).startswith("Memory is unavailable right now")
    assert str(replies["update_memory"].content).startswith("Memory is unavailable right now")
    if fault == "down":
        assert str(replies["recall"].content).startswith("Memory is unavailable right now")
    store.set(None)
    assert ScopedMemory(backend.store).list_notes(ANN) == []


async def test_a_full_turn_answers_while_the_store_is_down_async(abackend: Backend) -> None:
    store = FaultyStore(abackend.store)
    graph = create_memory_graph(
        DemoModel(script=fault_script()), store=store, checkpointer=abackend.checkpointer
    )
    store.set("down")
    out = await aturn(graph, "Remember that I like tea.", "faults")
    assert out["messages"][-1].content == "Answered anyway."
    assert all(
        str(m.content).startswith("Memory is unavailable right now") for m in tool_replies(out)
    )


# --- the membership hook reaches every node and tool -----------------------------------------

TEAM = MemoryContext(user_id="ann", workspace_id="acme", thread_visibility="shared")


def refusing_in(node: str) -> Any:
    """A membership hook that admits the workspace everywhere but in one node."""

    def membership(user_id: str, workspace_id: str) -> bool:
        return get_config()["metadata"].get("langgraph_node") != node

    return membership


def test_membership_hook_guards_the_tools(backend: Backend) -> None:
    model = DemoModel(script=[call("remember", text="Freeze starts Friday"), "Done."])
    graph = graph_for(backend, model, membership=refusing_in("tools"))
    (reply,) = tool_replies(turn(graph, "Remember the freeze.", "team", TEAM))
    assert reply.status == "error" and "not a member" in str(reply.content)
    assert ScopedMemory(backend.store).list_notes(TEAM) == []


async def test_membership_hook_guards_the_tools_async(abackend: Backend) -> None:
    model = DemoModel(script=[call("remember", text="Freeze starts Friday"), "Done."])
    graph = graph_for(abackend, model, membership=refusing_in("tools"))
    (reply,) = tool_replies(await aturn(graph, "Remember the freeze.", "team", TEAM))
    assert reply.status == "error" and "not a member" in str(reply.content)
    assert await ScopedMemory(abackend.store).alist_notes(TEAM) == []


def test_membership_hook_guards_the_turn_and_the_profile(backend: Backend) -> None:
    graph = graph_for(backend, DemoModel(script=["Hi."]), membership=refusing_in("agent"))
    with pytest.raises(ScopeError, match="not a member"):
        turn(graph, "Hi, my name is Ann.", "t1", TEAM)
    assert ProfileMemory(backend.store).read(TEAM) is None
    admitted = graph_for(backend, DemoModel(script=["Hi."]), membership=lambda u, w: True)
    turn(admitted, "Hi, my name is Ann.", "t3", TEAM)
    assert wait_all()
    assert ProfileMemory(backend.store).read(TEAM) is not None


def test_middleware_membership_hook_guards_the_tools(backend: Backend) -> None:
    model = DemoModel(script=[call("remember", text="Freeze starts Friday"), "Done."])
    agent = agent_for(backend, model, membership=refusing_in("tools"))
    (reply,) = tool_replies(turn(agent, "Remember the freeze.", "team", TEAM))
    assert reply.status == "error" and "not a member" in str(reply.content)
    assert ScopedMemory(backend.store).list_notes(TEAM) == []
