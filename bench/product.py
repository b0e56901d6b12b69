"""The product as users build it: create_memory_graph against LangChain's create_agent, per turn.

Run: python bench/product.py [--sizes 10000,50000,150000,400000]
     [--checkpointers memory,sqlite,postgres]
     [--sides ours,ours-bounded,langchain,plain,plain-delta]
     [--scenarios idle,masking,compaction] [--rounds 3] [--turns 5] [--compaction-rounds 5]
     [--durability async,exit] [--pg-latency-ms 25] [--postgres-url URL] [--json out.json]
     [--quick]

Five sides run the same thread, turn for turn, on the same fake models:

- ours: `create_memory_graph(model, tools=[fetch], store=..., checkpointer=...,
  maintenance_model=...)` with the default settings (the compaction turn turns masking off,
  as LangChain's side turns context editing off), invoked with
  `context=MemoryContext(user_id=...)`;
- ours-bounded: the same with `MemorySettings(bounded_memory=True, agent_memory=True)` and an
  `agent_id` in the context;
- langchain: `create_agent` with SummarizationMiddleware(trigger=("fraction", 0.8),
  keep=("fraction", 0.1)) and ContextEditingMiddleware(ClearToolUsesEdit(trigger=0.55 window,
  clear_at_least=0.15 window, keep=5)), our own thresholds;
- plain: `create_agent` with no middleware;
- plain-delta: the same with `state_schema` keeping `messages` in LangGraph's DeltaChannel (with
  the reducer ours uses), as ours keeps them: what that channel costs on its own (its history
  read each turn, its writes at exit), so that ours minus it is memory's own cost.

The model is instant and scripted (a user turn gets one `fetch` tool call, the tool result a
final answer); its profile gives both sides the context window. The maintenance model
(ours: `maintenance_model`; LangChain: the summarizer) answers "A short summary.".

Checkpointers: memory (ours: what `connect("memory://")` opens; LangChain: InMemorySaver),
sqlite (ours: `connect("sqlite:///...")`; LangChain: LangGraph's SqliteSaver on its own file,
WAL, `PRAGMA synchronous` NORMAL like ours unless `--langchain-sqlite-synchronous FULL`),
postgres (ours: `connect(url)`; LangChain: PostgresSaver on a pool of the same database).
Every side's invoke gets the same `durability` (LangGraph's default, "async"; `--durability
async,exit` runs every cell under each).

Scenarios per thread size (approximate tokens of turns with 2-8 KB tool results), as in
bench/context_nodes.py: idle (window 4x the thread: nothing fires), masking (window =
thread / 0.65: between the 55% masking and the 80% compaction trigger), compaction (masking
and context editing off, thread seeded at 75% of the window, the timed question pastes 6% of
the window, so both sides compact on that one timed turn; one timed turn per fresh thread).
A thread is seeded by one invoke whose input is the whole history, then one warm-up turn.

Per turn (medians over the timed turns; sides alternate which goes first):

- wall ms of `graph.invoke` (LangGraph waits for its background checkpoint saves before
  invoke returns), and the CPU ms of the whole process meanwhile (every thread's);
- replies waited for (PostgreSQL, with `--pg-latency-ms L`): every PostgreSQL cell runs again
  with every reply of the server delayed by L ms (bench/latency_proxy.py, both sides' pools
  through it: a database in another zone); (wall with the delay - wall without) / L is how
  many replies the turn waited for one after another;
- database round trips, counted at the connection. SQLite: statements the side's
  connections execute (every execute, each row of an executemany, plus the implicit BEGIN
  and the COMMIT of Python's sqlite3 transactions), by wrapping the connections.
  PostgreSQL: what is sent to the server, by hooking psycopg: a statement outside a pipeline
  is one (Cursor.execute, the connection's BEGIN/COMMIT; preparing it outside a pipeline, the
  first time a connection runs it, one more), a pipeline Sync is one (statements inside a
  pipeline are not). Split by what the statement ran for: checkpoint put,
  put_writes, checkpoint read (get_tuple, list, get_delta_channel_history) or store batch
  (else "other"). memory: none (no database);
- bytes written. SQLite and PostgreSQL: bytes of the parameters bound to writing statements
  (INSERT, UPDATE, DELETE; bytes and str by length, JSON by its dumped length). memory:
  bytes the checkpointer's serializer produced (`serde.dumps_typed`);
- model calls: the agent's model and the maintenance model, during invoke. After every
  invoke the bench waits until nothing has been counted for `--settle-ms` (background work,
  e.g. post-turn profile consolidation, never overlaps the next timed turn); model calls and
  round trips landing after invoke returns are reported as background.

A second table breaks every turn into checkpointer and store calls (put, put_writes,
get_tuple/list/delta reads, store batches). The targets summary compares ours with LangChain
(whole turn, compaction turn, round trips) and ours with a plain create_agent (memory's cost).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import logging
import os
import re
import sqlite3
import statistics
import sys
import tempfile
import threading
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from typing import Annotated, Any, Required
from urllib.parse import urlsplit

from langchain.agents import create_agent
from langchain.agents.middleware import (
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    SummarizationMiddleware,
)
from langchain.agents.middleware.types import AgentState
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AnyMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langgraph.channels import DeltaChannel
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from psycopg_pool import ConnectionPool

from memory_plugin import MemoryContext, MemorySettings, connect, create_memory_graph
from memory_plugin.context_management.state import add_messages_batch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from host import HostLoad
from latency_proxy import LatencyProxy

SYSTEM_PROMPT = "You are a helpful assistant."
MASK_TRIGGER, COMPACT_TRIGGER, KEEP_RATIO, MIN_CLEAR, KEEP_RECENT = 0.55, 0.8, 0.1, 0.15, 5
IDLE, MASKING, COMPACTION = "idle", "masking", "compaction"
SCENARIOS = (IDLE, MASKING, COMPACTION)
SEEDED_SHARE = {IDLE: 0.25, MASKING: 0.65, COMPACTION: 0.75}
PASTE_SHARE = 0.06
OURS, BOUNDED, LANGCHAIN, PLAIN = "ours", "ours-bounded", "langchain", "plain"
PLAIN_DELTA = "plain-delta"
SIDES = (OURS, BOUNDED, LANGCHAIN, PLAIN, PLAIN_DELTA)
SIDE_LABELS = {
    OURS: "ours (defaults)",
    BOUNDED: "ours (bounded + agent memory)",
    LANGCHAIN: "create_agent + both middlewares",
    PLAIN: "plain create_agent",
    PLAIN_DELTA: "plain create_agent keeping its messages in LangGraph's DeltaChannel, as ours",
}
KINDS = ("put", "writes", "read", "store", "other")
MAIN_COLUMNS = 18


class DeltaAgentState(AgentState[Any]):
    """create_agent's state with its messages in LangGraph's DeltaChannel and the reducer
    ours uses: what keeping the transcript as ours does costs a plain agent."""

    messages: Required[Annotated[list[AnyMessage], DeltaChannel(add_messages_batch)]]


# --------------------------------------------------------------------------- thread contents


def tool_output(n: int) -> str:
    """A tool output of 2-8 KB, its size varying with n."""
    kilobytes = 2 + (n * 3) % 7
    return f"<page {n}> " + ("lorem ipsum dolor sit amet " * 38)[:1000] * kilobytes


def history(approx_tokens: int) -> list[BaseMessage]:
    """Turns of question, one tool call, a 2-8 KB result and an answer, every message with an
    id, until the thread holds about this many approximate tokens."""
    messages: list[BaseMessage] = []
    total, i = 0, 0
    while total < approx_tokens:
        call = {"name": "fetch", "args": {"url": f"https://example.com/h{i}"}, "id": f"hc{i}"}
        turn = [
            HumanMessage(f"Please read page {i} and tell me what it says.", id=f"hh{i}"),
            AIMessage("", tool_calls=[call], id=f"ha{i}"),
            ToolMessage(tool_output(i), tool_call_id=f"hc{i}", name="fetch", id=f"ht{i}"),
            AIMessage(f"Page {i} is about lorem ipsum.", id=f"hr{i}"),
        ]
        total += count_tokens_approximately(turn)
        messages += turn
        i += 1
    return messages


_fetches = itertools.count(1000)


@tool
def fetch(url: str) -> str:
    """Fetch a page (returns 2-8 KB)."""
    return tool_output(next(_fetches))


def ask(n: int) -> list[BaseMessage]:
    """A new user turn."""
    return [HumanMessage(f"Now read page {n}, please.", id=f"q-{uuid.uuid4().hex[:12]}")]


def paste(window: int) -> list[BaseMessage]:
    """A user turn pasting about PASTE_SHARE of the window."""
    text = ("Here is the log you asked for: " + "lorem ipsum dolor sit amet " * 40)[:1000]
    chars = int(PASTE_SHARE * window * 4)
    body = (text * (chars // len(text) + 1))[:chars]
    return [HumanMessage(body, id=f"p-{uuid.uuid4().hex[:12]}")]


# --------------------------------------------------------------------------- counting


class Tally:
    """Everything counted while a side runs (one side runs at a time): statements per kind,
    bytes, saver/store calls, model calls. Thread-safe: LangGraph saves in worker threads."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.counts: Counter[str] = Counter()
        self.local = threading.local()

    def add(self, key: str, n: int = 1) -> None:
        with self.lock:
            self.counts[key] += n

    def snapshot(self) -> Counter[str]:
        with self.lock:
            return Counter(self.counts)

    def statement(self, n: int = 1, written: int = 0) -> None:
        """n round trips, attributed to the saver or store call this thread is in."""
        kind = getattr(self.local, "kind", None) or "other"
        with self.lock:
            self.counts[f"rt {kind}"] += n
            self.counts["rt"] += n
            self.counts["bytes"] += written

    @contextmanager
    def within(self, kind: str) -> Iterator[None]:
        """Statements on this thread belong to `kind` (the outermost call decides)."""
        outer = getattr(self.local, "kind", None)
        if outer is None:
            self.local.kind = kind
        try:
            yield
        finally:
            if outer is None:
                self.local.kind = None


TALLY = Tally()
_WRITE = re.compile(r"\b(insert|update|delete|replace)\b", re.IGNORECASE)
_writes_cache: dict[str | bytes, bool] = {}


def is_write(query: Any) -> bool:
    """Whether a statement writes (INSERT, UPDATE, DELETE, REPLACE anywhere in it)."""
    if not isinstance(query, (str, bytes)):  # psycopg.sql.Composed: its repr names the SQL
        return bool(_WRITE.search(repr(query)))
    found = _writes_cache.get(query)
    if found is None:
        text = query.decode() if isinstance(query, bytes) else query
        found = _writes_cache[query] = bool(_WRITE.search(text))
    return found


def param_bytes(params: Any) -> int:
    """Bytes of bound parameters: bytes and str by length, JSON by its dumped length."""
    if params is None:
        return 0
    values = params.values() if isinstance(params, dict) else params
    total = 0
    for value in values:
        if isinstance(value, (bytes, bytearray, memoryview, str)):
            total += len(value)
        elif value is None:
            continue
        elif isinstance(value, (int, float)):
            total += 8
        elif hasattr(value, "obj"):  # psycopg's Jsonb / Json wrappers
            total += len(json.dumps(value.obj, default=str))
        else:
            total += len(str(value))
    return total


# SQLite: the side's connections, wrapped


class CountingCursor:
    """A sqlite3 cursor counting what it executes into TALLY."""

    def __init__(self, cur: Any, conn: CountingConnection) -> None:
        self._cur, self._conn = cur, conn

    def execute(self, sql: str, params: Any = ()) -> CountingCursor:
        self._conn.count(sql, [params])
        self._cur.execute(sql, params)
        return self

    def executemany(self, sql: str, seq: Any) -> CountingCursor:
        rows = list(seq)
        self._conn.count(sql, rows)
        self._cur.executemany(sql, rows)
        return self

    def __iter__(self) -> Iterator[Any]:
        return iter(self._cur)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._cur, name)


class CountingConnection:
    """A sqlite3 connection counting statements (with Python's implicit BEGIN and its COMMIT)
    and the bytes bound to writes into TALLY."""

    def __init__(self, conn: Any) -> None:
        object.__setattr__(self, "_real", conn)

    def count(self, sql: str, rows: list[Any]) -> None:
        conn = self._real
        write = is_write(sql)
        implicit_begin = (
            write and conn.isolation_level is not None and not conn.in_transaction and rows
        )
        written = sum(param_bytes(r) for r in rows) if write else 0
        TALLY.statement(len(rows) + (1 if implicit_begin else 0), written)

    def cursor(self, *args: Any, **kwargs: Any) -> CountingCursor:
        return CountingCursor(self._real.cursor(*args, **kwargs), self)

    def execute(self, sql: str, params: Any = ()) -> CountingCursor:
        return self.cursor().execute(sql, params)

    def executemany(self, sql: str, seq: Any) -> CountingCursor:
        return self.cursor().executemany(sql, seq)

    def commit(self) -> None:
        if self._real.in_transaction:
            TALLY.statement()
        self._real.commit()

    def __enter__(self) -> CountingConnection:
        self._real.__enter__()
        return self

    def __exit__(self, *exc: Any) -> Any:
        if self._real.in_transaction:
            TALLY.statement()
        return self._real.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._real, name, value)


def count_sqlite(obj: Any) -> None:
    """Wrap the sqlite3 connection of a LangGraph saver or store (its `conn`)."""
    if not isinstance(obj.conn, CountingConnection):
        obj.conn = CountingConnection(obj.conn)


# PostgreSQL: psycopg hooked once, for every connection of the process

_psycopg_hooked = False


def hook_psycopg() -> None:
    """Count what psycopg sends: a statement outside a pipeline is one round trip (its
    parameters' bytes counted when it writes), preparing it outside a pipeline (the first
    time a connection runs it, where prepared statements are on) one more, a pipeline Sync
    one."""
    global _psycopg_hooked
    if _psycopg_hooked:
        return
    _psycopg_hooked = True
    import psycopg
    from psycopg import _connection_base, _cursor_base, _pipeline_base

    execute, executemany = psycopg.Cursor.execute, psycopg.Cursor.executemany
    exec_command = _connection_base.BaseConnection._exec_command
    enqueue_sync = _pipeline_base.BasePipeline._enqueue_sync
    send_prepare = _cursor_base.BaseCursor._send_prepare

    def counted_execute(self: Any, query: Any, params: Any = None, **kwargs: Any) -> Any:
        in_pipeline = self._conn._pipeline is not None
        written = param_bytes(params) if is_write(query) else 0
        TALLY.statement(0 if in_pipeline else 1, written)
        return execute(self, query, params, **kwargs)

    def counted_executemany(self: Any, query: Any, params_seq: Any, **kwargs: Any) -> Any:
        rows = list(params_seq)
        written = sum(param_bytes(r) for r in rows) if is_write(query) else 0
        trips = 0 if psycopg.Pipeline.is_supported() else len(rows)  # else: one Sync, below
        TALLY.statement(trips, written)
        return executemany(self, query, rows, **kwargs)

    def counted_exec_command(self: Any, command: Any, *args: Any, **kwargs: Any) -> Any:
        if self._pipeline is None:
            TALLY.statement()
        return exec_command(self, command, *args, **kwargs)

    def counted_sync(self: Any) -> Any:
        TALLY.statement()
        return enqueue_sync(self)

    def counted_prepare(self: Any, name: bytes, query: Any) -> Any:
        if self._conn._pipeline is None:  # libpq sends Parse + Sync and waits
            TALLY.statement()
            TALLY.add("prepares")
        return send_prepare(self, name, query)

    psycopg.Cursor.execute = counted_execute  # type: ignore[method-assign]
    psycopg.Cursor.executemany = counted_executemany  # type: ignore[method-assign]
    _connection_base.BaseConnection._exec_command = counted_exec_command  # type: ignore[method-assign]
    _pipeline_base.BasePipeline._enqueue_sync = counted_sync  # type: ignore[method-assign]
    _cursor_base.BaseCursor._send_prepare = counted_prepare  # type: ignore[method-assign]


# Savers and stores: their calls counted, and the statements they run attributed


SAVER_CALLS = {
    "put": "put",
    "put_writes": "writes",
    "get_tuple": "read",
    "list": "read",
    "get_delta_channel_history": "read",
}


def _counted(kind: str, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(fn)  # LangGraph reads put_writes' signature (its task_path parameter)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        TALLY.add(f"call {name}")
        with TALLY.within(kind):
            return fn(*args, **kwargs)

    return wrapper


def count_saver(saver: Any) -> None:
    """Count this saver's calls (on the instance), and the bytes its serializer produces."""
    if getattr(saver, "_bench_counted", False):
        return
    for name, kind in SAVER_CALLS.items():
        if hasattr(saver, name):
            setattr(saver, name, _counted(kind, name, getattr(saver, name)))
    saver._bench_counted = True
    serde = saver.serde
    if getattr(serde, "_bench_counted", False):  # LangGraph's savers share one default serde
        return
    dumps = serde.dumps_typed

    def counted_dumps(obj: Any) -> Any:
        out = dumps(obj)
        TALLY.add("serialized", len(out[1]) if isinstance(out[1], (bytes, bytearray)) else 0)
        return out

    serde.dumps_typed = counted_dumps
    serde._bench_counted = True


def count_store(store: Any) -> None:
    """Count this store's batches (every get, put and search goes through one)."""
    if getattr(store, "_bench_counted", False):
        return
    store.batch = _counted("store", "batch", store.batch)
    store.abatch = _counted("store", "abatch", store.abatch)
    store._bench_counted = True


# --------------------------------------------------------------------------- fake models


class ScriptedChat(BaseChatModel):
    """The agent's model: answers a user turn with one fetch call (a final answer straight
    away while `tools_on` is False), a tool result with a final answer. Reads only the last
    message, so its own cost does not grow with the thread. Counts its calls."""

    tools_on: bool = True

    @property
    def _llm_type(self) -> str:
        return "bench-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        TALLY.add("agent calls")
        key = uuid.uuid4().hex[:12]
        if isinstance(messages[-1], ToolMessage) or not self.tools_on:
            reply = AIMessage("Here is what the page says.", id=f"r-{key}")
        else:
            call = {"name": "fetch", "args": {"url": f"https://example.com/{key}"}, "id": key}
            reply = AIMessage("", tool_calls=[call], id=f"a-{key}")
        return ChatResult(generations=[ChatGeneration(message=reply)])


class SummaryChat(BaseChatModel):
    """The maintenance model: summaries, flush notes, profile work. Counts its calls."""

    @property
    def _llm_type(self) -> str:
        return "bench-summary"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> SummaryChat:
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        TALLY.add("maintenance calls")
        return ChatResult(generations=[ChatGeneration(message=AIMessage("A short summary."))])


# --------------------------------------------------------------------------- checkpointers


@dataclass
class Backends:
    """Per checkpointer kind: our store and checkpointer from `connect`, and LangGraph's own
    saver for the LangChain sides; all of them counted; closed at the end."""

    kind: str
    postgres_url: str | None
    their_sqlite_sync: str
    latency_ms: float = 0.0
    stack: ExitStack = field(default_factory=ExitStack)

    def __post_init__(self) -> None:
        if self.kind not in ("memory", "sqlite", "postgres"):
            raise SystemExit(f"unknown checkpointer {self.kind!r}")
        if self.kind == "postgres":
            if not self.postgres_url:
                raise SystemExit("--checkpointers postgres needs --postgres-url")
            hook_psycopg()
            if self.latency_ms:
                self.postgres_url = self._delayed(self.postgres_url)
        folder = self.stack.enter_context(tempfile.TemporaryDirectory())
        url = {
            "memory": "memory://",
            "sqlite": f"sqlite:///{folder}/ours.db",
            "postgres": self.postgres_url,
        }[self.kind]
        backend = self.stack.enter_context(connect(url))
        self.store, self.checkpointer = backend.store, backend.checkpointer
        if self.kind == "sqlite":
            count_sqlite(self.store)
            count_sqlite(self.checkpointer)
        count_store(self.store)
        count_saver(self.checkpointer)
        self.theirs = self._their_saver(folder)
        count_saver(self.theirs)

    def _delayed(self, url: str) -> str:
        """The URL through a proxy delaying every reply of the server by latency_ms."""
        parts = urlsplit(url)
        proxy = LatencyProxy(
            parts.hostname or "127.0.0.1", parts.port or 5432, self.latency_ms / 1000
        )
        self.stack.enter_context(proxy)
        return proxy.url(url)

    def _their_saver(self, folder: str) -> Any:
        if self.kind == "memory":
            return InMemorySaver()
        if self.kind == "sqlite":
            conn = sqlite3.connect(f"{folder}/theirs.db", check_same_thread=False)
            self.stack.callback(conn.close)
            lite = SqliteSaver(conn)
            lite.setup()  # WAL
            conn.execute(f"PRAGMA synchronous={self.their_sqlite_sync}")
            count_sqlite(lite)
            return lite
        pool: ConnectionPool[Any] = ConnectionPool(
            str(self.postgres_url),
            min_size=1,
            max_size=4,
            kwargs={"autocommit": True, "prepare_threshold": 0},
            open=True,
        )
        self.stack.callback(pool.close)
        saver = PostgresSaver(pool)
        saver.setup()
        return saver


# --------------------------------------------------------------------------- sides


@dataclass
class Side:
    """One graph on one thread."""

    name: str
    graph: Any
    thread_id: str
    context: MemoryContext | None
    durability: str

    @property
    def config(self) -> RunnableConfig:
        return {"configurable": {"thread_id": self.thread_id}, "recursion_limit": 100}

    def invoke(self, messages: list[BaseMessage]) -> tuple[float, float]:
        """One invoke; its wall time and the process's CPU time meanwhile, in ms."""
        start, cpu = time.perf_counter(), time.process_time()
        self.graph.invoke(
            {"messages": messages},
            self.config,
            context=self.context,
            durability=self.durability,
        )
        return (time.perf_counter() - start) * 1000, (time.process_time() - cpu) * 1000


def build_side(
    name: str,
    model: ScriptedChat,
    window: int,
    backends: Backends,
    compaction: bool,
    label: str,
    durability: str,
) -> Side:
    """A side as its user builds it, on a fresh thread."""
    summary = SummaryChat()
    thread = f"{name}-{label}-{uuid.uuid4().hex[:8]}"
    if name in (OURS, BOUNDED):
        values: dict[str, Any] = {"masking": False} if compaction else {}
        if name == BOUNDED:
            values.update(bounded_memory=True, agent_memory=True)
        graph = create_memory_graph(
            model,
            tools=[fetch],
            store=backends.store,
            checkpointer=backends.checkpointer,
            settings=MemorySettings(**values) if values else None,
            system_prompt=SYSTEM_PROMPT,
            maintenance_model=summary,
        )
        context = MemoryContext(
            user_id=f"bench-{name}", agent_id="bench-agent" if name == BOUNDED else None
        )
        return Side(name, graph, thread, context, durability)
    middleware: list[Any] = []
    if name == LANGCHAIN:
        middleware.append(
            SummarizationMiddleware(
                model=model,  # its profile gives the window, as ours does
                summarizer=summary,
                trigger=("fraction", COMPACT_TRIGGER),
                keep=("fraction", KEEP_RATIO),
            )
        )
        if not compaction:
            clear = ClearToolUsesEdit(
                trigger=int(MASK_TRIGGER * window),
                clear_at_least=int(MIN_CLEAR * window),
                keep=KEEP_RECENT,
            )
            middleware.append(ContextEditingMiddleware(edits=[clear]))
    graph = create_agent(
        model,
        tools=[fetch],
        system_prompt=SYSTEM_PROMPT,
        middleware=middleware,
        checkpointer=backends.theirs,
        state_schema=DeltaAgentState if name == PLAIN_DELTA else None,
    )
    return Side(name, graph, thread, None, durability)


# --------------------------------------------------------------------------- measuring


@dataclass
class Samples:
    """Per timed turn: wall ms and every count (in turn; background ones prefixed 'bg ')."""

    wall_ms: list[float] = field(default_factory=list)
    cpu_ms: list[float] = field(default_factory=list)
    counts: list[Counter[str]] = field(default_factory=list)

    def median(self, key: str) -> float:
        """Median per turn of one count (0 where it did not happen)."""
        return med([c.get(key, 0) for c in self.counts])


@dataclass
class Cell:
    """One checkpointer, size and scenario: samples per side."""

    checkpointer: str
    size: int
    scenario: str
    window: int
    messages: int
    sides: dict[str, Samples]
    durability: str = "async"
    latency_ms: float = 0.0
    load: tuple[float, float, float] = (0.0, 0.0, 0.0)


def med(values: Sequence[float]) -> float:
    """The median, NaN when empty."""
    return statistics.median(values) if values else float("nan")


def settle(seconds: float, limit: float = 10.0) -> None:
    """Wait until background work started by the last invoke is done: nothing counted (no
    statement, saver or store call, model call) for `seconds` (at most `limit` in all)."""
    deadline = time.perf_counter() + limit
    last = TALLY.snapshot()
    while True:
        time.sleep(seconds)
        now = TALLY.snapshot()
        if now == last or time.perf_counter() > deadline:
            return
        last = now


def timed_turn(side: Side, question: list[BaseMessage], samples: Samples, settle_s: float) -> None:
    """One timed turn: wall time, counts during invoke, then counts of what lands after."""
    before = TALLY.snapshot()
    wall, cpu = side.invoke(question)
    samples.wall_ms.append(wall)
    samples.cpu_ms.append(cpu)
    during = TALLY.snapshot()
    settle(settle_s)
    after = TALLY.snapshot()
    counts = during - before
    for key, value in (after - during).items():
        counts[f"bg {key}"] = value
    samples.counts.append(counts)


@dataclass
class Plan:
    """What to run."""

    sides: list[str]
    turns: int
    rounds: int
    compaction_rounds: int
    durability: str
    settle_s: float


def run_round(cell: Cell, plan: Plan, round_no: int, backends: Backends) -> None:
    """Fresh threads for every side: seed, warm up, then the timed turns, alternating which
    side goes first (the compaction scenario: one timed turn pasting past the trigger; the
    model answers the seeding turns without a tool call, so the thread stays at its share)."""
    compaction = cell.scenario == COMPACTION
    model = ScriptedChat(profile={"max_input_tokens": cell.window})
    label = f"{cell.size}-{cell.scenario}-{round_no}"
    sides = [
        build_side(n, model, cell.window, backends, compaction, label, plan.durability)
        for n in plan.sides
    ]
    model.tools_on = not compaction
    for side in sides:
        side.invoke(history(cell.size))
        settle(plan.settle_s)
        side.invoke(ask(-1))
        settle(plan.settle_s)
    model.tools_on = True
    turns = 1 if compaction else plan.turns
    for t in range(turns):
        shift = (t + round_no) % len(sides)
        for side in sides[shift:] + sides[:shift]:
            question = paste(cell.window) if compaction else ask(t)
            timed_turn(side, question, cell.sides[side.name], plan.settle_s)


def measure(size: int, scenario: str, plan: Plan, backends: Backends) -> Cell:
    """Every side on fresh threads of about `size` tokens."""
    thread = history(size)
    window = int(count_tokens_approximately(thread) / SEEDED_SHARE[scenario])
    sides = {s: Samples() for s in plan.sides}
    cell = Cell(
        backends.kind,
        size,
        scenario,
        window,
        len(thread),
        sides,
        plan.durability,
        backends.latency_ms,
    )
    rounds = plan.compaction_rounds if scenario == COMPACTION else plan.rounds
    for round_no in range(rounds):
        run_round(cell, plan, round_no, backends)
    cell.load = os.getloadavg()
    delayed = f", {backends.latency_ms:g} ms a reply" if backends.latency_ms else ""
    print(
        f"measured ~{size // 1000}k {scenario} ({backends.kind}{delayed}, {plan.durability})",
        file=sys.stderr,
        flush=True,
    )
    return cell


# --------------------------------------------------------------------------- reporting


def size_label(size: int) -> str:
    return f"~{size // 1000}k" if size >= 1000 else str(size)


def fmt(value: float, digits: int = 1) -> str:
    if value != value:  # NaN
        return "-"
    return f"{value:.{digits}f}" if value != int(value) or digits == 0 else f"{int(value)}"


def delayed_twin(cell: Cell, cells: list[Cell]) -> Cell | None:
    """The same PostgreSQL cell run with every reply delayed, if it was."""
    for c in cells:
        same = (c.checkpointer, c.size, c.scenario, c.durability)
        if c.latency_ms and same == (cell.checkpointer, cell.size, cell.scenario, cell.durability):
            return c
    return None


def replies_waited(cell: Cell, cells: list[Cell], side: str) -> float:
    """(wall with every reply delayed - wall without) / the delay, medians; NaN if not run."""
    twin = delayed_twin(cell, cells)
    if twin is None or side not in twin.sides:
        return float("nan")
    extra = med(twin.sides[side].wall_ms) - med(cell.sides[side].wall_ms)
    return extra / twin.latency_ms


def shown(cells: list[Cell]) -> list[Cell]:
    """The cells of the main tables (a delayed run only feeds `replies waited`)."""
    return [c for c in cells if not c.latency_ms]


def print_main(cells: list[Cell]) -> None:
    """One row per durability, checkpointer, size, scenario and side."""
    print(
        "| durability | checkpointer | thread | scenario | side | wall ms | CPU ms "
        "| LangChain / this | round trips | replies waited | put | put_writes | reads | store "
        "| other | bytes written | model calls (agent + maintenance) | background calls |"
    )
    print("| " + " | ".join(["---"] * MAIN_COLUMNS) + " |")
    for c in shown(cells):
        theirs = c.sides.get(LANGCHAIN)
        for name, s in c.sides.items():
            wall = med(s.wall_ms)
            ratio = med(theirs.wall_ms) / wall if theirs and name != LANGCHAIN else float("nan")
            trips = "-" if c.checkpointer == "memory" else fmt(s.median("rt"))
            split = ["-" if c.checkpointer == "memory" else fmt(s.median(f"rt {k}")) for k in KINDS]
            written = s.median("serialized" if c.checkpointer == "memory" else "bytes")
            agent, upkeep = s.median("agent calls"), s.median("maintenance calls")
            background = s.median("bg agent calls") + s.median("bg maintenance calls")
            print(
                f"| {c.durability} | {c.checkpointer} | {size_label(c.size)} | {c.scenario} "
                f"| {name} | {wall:.2f} | {med(s.cpu_ms):.2f} "
                f"| {'-' if ratio != ratio else f'{ratio:.2f}x'} "
                f"| {trips} | {fmt(replies_waited(c, cells, name))} | {' | '.join(split)} "
                f"| {written / 1024:.1f} KiB "
                f"| {fmt(agent + upkeep)} ({fmt(agent)} + {fmt(upkeep)}) | {fmt(background)} |"
            )


def print_calls(cells: list[Cell]) -> None:
    """Checkpointer and store calls per turn (medians), with what was serialized."""
    names = ["put", "put_writes", "get_tuple", "list", "get_delta_channel_history", "batch"]
    print("\nCheckpointer and store calls per turn (medians; serialized = serde output):\n")
    print(
        "| durability | checkpointer | thread | scenario | side | "
        + " | ".join(names)
        + " | serialized | prepares (PostgreSQL round trips) | background round trips |"
    )
    print("| " + " | ".join(["---"] * (len(names) + 8)) + " |")
    for c in shown(cells):
        for name, s in c.sides.items():
            calls = " | ".join(fmt(s.median(f"call {n}")) for n in names)
            print(
                f"| {c.durability} | {c.checkpointer} | {size_label(c.size)} | {c.scenario} "
                f"| {name} | {calls} "
                f"| {s.median('serialized') / 1024:.1f} KiB | {fmt(s.median('prepares'))} "
                f"| {fmt(s.median('bg rt'))} |"
            )


def targets(cells: list[Cell]) -> list[dict[str, Any]]:
    """Every target the issue sets, per cell: met or not, with the figures."""
    found: list[dict[str, Any]] = []

    def add(what: str, where: str, value: str, met: bool) -> None:
        found.append({"target": what, "where": where, "value": value, "met": met})

    for c in shown(cells):
        theirs, plain = c.sides.get(LANGCHAIN), c.sides.get(PLAIN)
        for name in (OURS, BOUNDED):
            ours = c.sides.get(name)
            if ours is None:
                continue
            where = f"{c.durability} {c.checkpointer} {size_label(c.size)} {c.scenario} {name}"
            if theirs is not None and c.scenario == COMPACTION:
                ratio = med(theirs.wall_ms) / med(ours.wall_ms)
                add("compaction turn >= 1x LangChain", where, f"{ratio:.2f}x", ratio >= 1.0)
            if plain is None or c.scenario != IDLE:
                continue
            for base_side in (PLAIN, PLAIN_DELTA):
                if base_side not in c.sides:
                    continue
                if c.checkpointer == "postgres":
                    mine, base = replies_waited(c, cells, name), replies_waited(c, cells, base_side)
                    if mine == mine and base == base:
                        value = f"{mine:.1f} vs {base:.1f}"
                        what = f"replies waited <= {base_side} + 3"
                        add(what, where, value, mine <= base + 3)
                if c.checkpointer == "sqlite":
                    mine, base = ours.median("rt"), c.sides[base_side].median("rt")
                    value = f"{fmt(mine)} vs {fmt(base)}"
                    add(f"SQLite statements <= {base_side} + 5", where, value, mine <= base + 5)
    return found


def print_costs(cells: list[Cell]) -> None:
    """Ours minus a plain create_agent, per checkpointer, size and scenario (ms a turn)."""
    print("\nMemory's cost over a plain create_agent (median wall ms, this side minus plain):\n")
    print("| durability | checkpointer | thread | scenario | ours | ours-bounded |")
    print("| --- | --- | --- | --- | --- | --- |")
    for c in shown(cells):
        plain = c.sides.get(PLAIN)
        if plain is None or c.scenario == COMPACTION:
            continue
        cols = [
            f"{med(c.sides[n].wall_ms) - med(plain.wall_ms):+.2f}" if n in c.sides else "-"
            for n in (OURS, BOUNDED)
        ]
        where = f"{c.durability} | {c.checkpointer} | {size_label(c.size)} | {c.scenario}"
        print(f"| {where} | {' | '.join(cols)} |")


def print_targets(found: list[dict[str, Any]]) -> None:
    print("\nTargets:\n")
    print("| target | where | value | met |")
    print("| --- | --- | --- | --- |")
    for t in found:
        verdict = "met" if t["met"] else "NOT met"
        print(f"| {t['target']} | {t['where']} | {t['value']} | {verdict} |")
    met = sum(t["met"] for t in found)
    print(f"\n{met} of {len(found)} targets met.")
    print("\nAt a glance (per target and side: cells met, and the cells not met):\n")
    print("| target | side | met | not met |")
    print("| --- | --- | --- | --- |")
    groups: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for t in found:
        groups[(t["target"], t["where"].rsplit(" ", 1)[1])].append(t)
    for (target, side), rows in groups.items():
        missed = ", ".join(
            f"{r['where'].rsplit(' ', 1)[0]} ({r['value']})" for r in rows if not r["met"]
        )
        met_here = sum(r["met"] for r in rows)
        print(f"| {target} | {side} | {met_here}/{len(rows)} | {missed or '-'} |")


def to_json(
    cells: list[Cell], found: list[dict[str, Any]], args: argparse.Namespace, load: HostLoad
) -> Any:
    return {
        "args": vars(args),
        "host": load.to_json(),
        "cells": [
            {
                "checkpointer": c.checkpointer,
                "durability": c.durability,
                "latency_ms": c.latency_ms,
                "load": list(c.load),
                "size": c.size,
                "scenario": c.scenario,
                "window": c.window,
                "messages": c.messages,
                "sides": {
                    name: {
                        "wall_ms": s.wall_ms,
                        "cpu_ms": s.cpu_ms,
                        "median_wall_ms": med(s.wall_ms),
                        "replies_waited": replies_waited(c, cells, name),
                        "counts": [dict(x) for x in s.counts],
                    }
                    for name, s in c.sides.items()
                },
            }
            for c in cells
        ],
        "targets": found,
    }


# --------------------------------------------------------------------------- main


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", default="10000,50000,150000,400000")
    parser.add_argument("--checkpointers", default="memory,sqlite,postgres")
    parser.add_argument("--sides", default=",".join(SIDES), help=f"of {', '.join(SIDES)}")
    parser.add_argument("--scenarios", default=",".join(SCENARIOS))
    parser.add_argument("--rounds", type=int, default=3, help="fresh threads per cell")
    parser.add_argument("--turns", type=int, default=5, help="timed turns per round")
    parser.add_argument(
        "--compaction-rounds", type=int, default=5, help="fresh threads per compaction cell"
    )
    parser.add_argument(
        "--durability", default="async", help="every side's, one or more of sync,async,exit"
    )
    parser.add_argument(
        "--pg-latency-ms",
        type=float,
        default=0.0,
        help="run every PostgreSQL cell again with each server reply delayed this long, for "
        "the replies each turn waits for (e.g. 25: a database in another zone)",
    )
    parser.add_argument(
        "--settle-ms",
        type=float,
        default=40.0,
        help="after every invoke, wait until nothing is counted for this long (background "
        "work: counted as background)",
    )
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("MEMORY_TEST_POSTGRES_URL"),
        help="PostgreSQL for --checkpointers postgres (default $MEMORY_TEST_POSTGRES_URL)",
    )
    parser.add_argument(
        "--langchain-sqlite-synchronous",
        default="NORMAL",
        choices=("FULL", "NORMAL"),
        help="PRAGMA synchronous of LangChain's SqliteSaver (ours: NORMAL, from connect)",
    )
    parser.add_argument(
        "--log-warnings",
        action="store_true",
        help="keep memory_plugin's warnings (e.g. each discarded profile update: the fake "
        "maintenance model answers every prompt with a one-line summary)",
    )
    parser.add_argument("--quick", action="store_true", help="tiny sizes, one round (tests)")
    parser.add_argument("--json", help="write every sample here")
    args = parser.parse_args(argv)
    if args.quick:
        args.sizes, args.rounds, args.turns, args.compaction_rounds = "3000", 1, 1, 1
    return args


def main(argv: Sequence[str] | None = None) -> list[Cell]:
    args = parse_args(argv)
    if not args.log_warnings:
        logging.getLogger("memory_plugin").setLevel(logging.ERROR)
    sizes = [int(s) for s in args.sizes.split(",")]
    sides = [s.strip() for s in args.sides.split(",")]
    scenarios = [s.strip() for s in args.scenarios.split(",")]
    for name in sides:
        if name not in SIDES:
            raise SystemExit(f"unknown side {name!r} (of {', '.join(SIDES)})")
    for scenario in scenarios:
        if scenario not in SCENARIOS:
            raise SystemExit(f"unknown scenario {scenario!r} (of {', '.join(SCENARIOS)})")
    durabilities = [d.strip() for d in args.durability.split(",")]
    for durability in durabilities:
        if durability not in ("sync", "async", "exit"):
            raise SystemExit(f"unknown durability {durability!r} (of sync, async, exit)")
    settle_s = args.settle_ms / 1000
    cells: list[Cell] = []
    started, load = time.perf_counter(), HostLoad.start()
    for durability in durabilities:
        plan = Plan(sides, args.turns, args.rounds, args.compaction_rounds, durability, settle_s)
        for kind in (k.strip() for k in args.checkpointers.split(",")):
            delays = (
                [0.0, args.pg_latency_ms] if kind == "postgres" and args.pg_latency_ms else [0.0]
            )
            for delay in delays:
                backends = Backends(
                    kind, args.postgres_url, args.langchain_sqlite_synchronous, delay
                )
                with backends.stack:
                    for size in sizes:
                        cells += [measure(size, sc, plan, backends) for sc in scenarios]
    load.finish()
    print(f"\nSides: {'; '.join(f'{n}: {SIDE_LABELS[n]}' for n in sides)}.")
    print(load.line())
    delayed = f"; replies waited: every reply delayed {args.pg_latency_ms:g} ms"
    print(
        f"durability={args.durability}{delayed if args.pg_latency_ms else ''}; "
        f"medians of {args.rounds} rounds x {args.turns} turns "
        f"({args.compaction_rounds} single-turn rounds for compaction); LangChain's SQLite "
        f"synchronous={args.langchain_sqlite_synchronous}; "
        f"ran {time.perf_counter() - started:.0f} s.\n"
    )
    print_main(cells)
    print_calls(cells)
    print_costs(cells)
    found = targets(cells)
    print_targets(found)
    if args.json:
        with open(args.json, "w") as out:
            json.dump(to_json(cells, found, args, load), out, indent=1, default=str)
    return cells


if __name__ == "__main__":
    main()
