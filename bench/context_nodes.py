"""Per-turn cost of the context-management nodes against LangChain's middlewares.

Run: python bench/context_nodes.py [--turns 6] [--rounds 2] [--sizes 50000,150000,400000]
     [--profile-turns 3] [--no-steady] [--checkpointers memory,sqlite,postgres]
     [--compaction-rounds 4] [--postgres-url URL]

For each thread size (approximate tokens of user turns, tool calls, 2-8 KB tool outputs and
answers) and scenario ("nothing fires": window 4x the thread; "masking active": window =
thread / 0.65, between the 55% masking and the 80% compaction trigger), two graphs run the
same thread side by side, turn for turn:

- ours: a StateGraph(MemoryState) wired like tests/thread_helpers.build_graph, with the
  store and checkpointer a user gets from `memory_plugin.connect` (memory: InMemoryStore and
  InMemorySaver(serde=CachingSerializer()); sqlite: a SqliteStore and SqliteSaver file;
  postgres: PostgresStore and PostgresSaver on a pool);
- LangChain: create_agent with SummarizationMiddleware + ContextEditingMiddleware
  (ClearToolUsesEdit) at the same thresholds and LangGraph's own saver of the same kind with
  its default serializer (InMemorySaver, SqliteSaver on its own file, PostgresSaver on the
  same database). Our SQLite connections run WAL with synchronous=NORMAL (no fsync per
  commit); LangChain's SqliteSaver keeps SQLite's default FULL unless
  `--langchain-sqlite-synchronous NORMAL` gives it the same.

`--checkpointers` repeats every cell per checkpointer (postgres needs `--postgres-url` or
$MEMORY_TEST_POSTGRES_URL). A "compaction turn" cell per size and checkpointer times the turn
on which each side compacts: masking and ContextEditingMiddleware off, the thread seeded at
75% of the window, and the timed turn's question pastes 6% of the window, so both sides
summarize on that turn (one timed turn per fresh thread, `--compaction-rounds` threads).

Each thread is seeded by one invoke whose input is the prebuilt history, then one warm-up
turn; then `--turns` turns (a new HumanMessage each; the fake model answers with one tool call
then a final answer) are timed, for `--rounds` fresh threads, alternating which side goes
first. A third scenario at the largest size ("masking active, past snapshot") first runs
untimed turns until our messages DeltaChannel has written its first snapshot (about 100
channel updates), the state a long-lived thread is in. "Our nodes' work" is the time inside
our node functions (and `model_input`), summed per turn; checkpointer loads and saves are
timed on both sides. Medians are reported, then turns of ours at the largest size are
profiled with cProfile (the graph's thread, and the background threads that save).
"""

from __future__ import annotations

import argparse
import cProfile
import io
import itertools
import os
import pstats
import sqlite3
import statistics
import sysconfig
import tempfile
import threading
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from langchain.agents import create_agent
from langchain.agents.middleware import (
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    SummarizationMiddleware,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import RunnableConfig, RunnableLambda
from langchain_core.tools import tool
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.graph import END, START, StateGraph
from langgraph.prebuilt import ToolNode
from psycopg_pool import ConnectionPool

from memory_plugin import Backend, MemoryContext, connect
from memory_plugin.compat import DeltaSnapshot
from memory_plugin.context_management.journal_tools import journal_tools
from memory_plugin.context_management.masking import is_masked
from memory_plugin.context_management.nodes import ContextManager, route_start
from memory_plugin.context_management.state import MemoryState
from memory_plugin.scoped import ScopedMemory
from memory_plugin.settings import MemorySettings

ROOT = Path(__file__).resolve().parent.parent
SITE = Path(sysconfig.get_paths()["purelib"]).as_posix() + "/"
SYSTEM_PROMPT = "You are a helpful assistant."
CONTEXT = {"user_id": "bench"}
MASK_TRIGGER, COMPACT_TRIGGER, KEEP_RATIO, MIN_CLEAR, KEEP_RECENT = 0.55, 0.8, 0.1, 0.15, 5
Sink = dict[str, float]
COUNTS = frozenset({"cleared"})  # sink keys holding counts, not seconds

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


# --------------------------------------------------------------------------- fake models


class ScriptedChat(BaseChatModel):
    """The graph's model: answers a user turn with one fetch call (a final answer straight
    away while `tools_on` is False), a tool result with a final answer. Reads only the last
    message, so its own cost does not grow with the thread."""

    tools_on: bool = True

    @property
    def _llm_type(self) -> str:
        return "bench-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedChat:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        key = uuid.uuid4().hex[:12]
        if isinstance(messages[-1], ToolMessage) or not self.tools_on:
            reply = AIMessage("Here is what the page says.", id=f"r-{key}")
        else:
            call = {"name": "fetch", "args": {"url": f"https://example.com/{key}"}, "id": key}
            reply = AIMessage("", tool_calls=[call], id=f"a-{key}")
        return ChatResult(generations=[ChatGeneration(message=reply)])


class SummaryChat(BaseChatModel):
    """Writes summaries and flush notes; counts its calls (none are expected here)."""

    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "bench-summary"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls += 1
        return ChatResult(generations=[ChatGeneration(message=AIMessage("A short summary."))])


# --------------------------------------------------------------------------- checkpointer


class TimedSaver(BaseCheckpointSaver[Any]):
    """Mixed into a saver by `timed_saver`: adds the wall time of loads and saves to
    sink["checkpoint_load"] and sink["checkpoint_save"], whichever thread runs them
    (LangGraph saves in the background). While `profilers` is a dict, saves off the main
    thread run under one cProfile per thread."""

    sink: Sink
    profilers: dict[int, cProfile.Profile] | None
    snapshots: int

    def _timed(self, part: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        start = time.perf_counter()
        try:
            ident = threading.get_ident()
            if self.profilers is not None and ident != threading.main_thread().ident:
                profiler = self.profilers.setdefault(ident, cProfile.Profile())
                return profiler.runcall(fn, *args, **kwargs)
            return fn(*args, **kwargs)
        finally:
            self.sink[part] += time.perf_counter() - start

    def get_tuple(self, config: RunnableConfig) -> Any:
        return self._timed("checkpoint_load", super().get_tuple, config)

    def get_delta_channel_history(self, **kwargs: Any) -> Any:
        return self._timed("checkpoint_load", super().get_delta_channel_history, **kwargs)

    def put(self, config: RunnableConfig, checkpoint: Any, *args: Any, **kwargs: Any) -> Any:
        if isinstance(checkpoint["channel_values"].get("messages"), DeltaSnapshot):
            self.snapshots += 1  # a DeltaChannel snapshot: every message is written
        return self._timed("checkpoint_save", super().put, config, checkpoint, *args, **kwargs)

    def put_writes(self, *args: Any, **kwargs: Any) -> Any:
        return self._timed("checkpoint_save", super().put_writes, *args, **kwargs)


_timed_classes: dict[type, type] = {}


def timed_saver(saver: BaseCheckpointSaver[Any], sink: Sink) -> TimedSaver:
    """The same saver, its loads and saves timed into `sink` from now on (see TimedSaver)."""
    base = type(saver)
    if not isinstance(saver, TimedSaver):
        cls = _timed_classes.get(base) or type(f"Timed{base.__name__}", (TimedSaver, base), {})
        saver.__class__ = _timed_classes.setdefault(base, cls)
    timed = cast(TimedSaver, saver)
    timed.sink, timed.profilers, timed.snapshots = sink, None, 0
    return timed


# --------------------------------------------------------------------------- checkpointers


@dataclass
class Checkpointers:
    """Opens, per thread pair, our backend (from `connect`) and LangChain's saver of the same
    kind; closes everything at the end."""

    kind: str
    postgres_url: str | None
    their_sqlite_sync: str = "FULL"
    stack: ExitStack = field(default_factory=ExitStack)
    folder: str = ""

    def __post_init__(self) -> None:
        if self.kind == "postgres" and not self.postgres_url:
            raise SystemExit("--checkpointers postgres needs --postgres-url")
        self.folder = self.stack.enter_context(tempfile.TemporaryDirectory())
        self._ours: Backend | None = None
        self._theirs: BaseCheckpointSaver[Any] | None = None

    def ours(self) -> Backend:
        """Our backend, as `connect` opens it (one per run, threads kept apart by id)."""
        if self._ours is None:
            url = {
                "memory": "memory://",
                "sqlite": f"sqlite:///{self.folder}/ours.db",
                "postgres": self.postgres_url,
            }[self.kind]
            self._ours = self.stack.enter_context(connect(url))
        return self._ours

    def theirs(self) -> BaseCheckpointSaver[Any]:
        """LangGraph's saver of this kind with its default serializer (one per run)."""
        if self._theirs is None:
            if self.kind == "memory":
                self._theirs = InMemorySaver()
            elif self.kind == "sqlite":
                conn = sqlite3.connect(f"{self.folder}/theirs.db", check_same_thread=False)
                self.stack.callback(conn.close)
                self._theirs = SqliteSaver(conn)
                self._theirs.setup()  # WAL, and SQLite's default synchronous=FULL
                conn.execute(f"PRAGMA synchronous={self.their_sqlite_sync}")
            else:
                pool = ConnectionPool(
                    str(self.postgres_url),
                    min_size=1,
                    max_size=4,
                    kwargs={"autocommit": True, "prepare_threshold": 0},
                    open=True,
                )
                self.stack.callback(pool.close)
                saver = PostgresSaver(pool)  # type: ignore[arg-type]
                saver.setup()
                self._theirs = saver
        return self._theirs


@contextmanager
def checkpointers(
    kind: str, postgres_url: str | None, their_sqlite_sync: str = "FULL"
) -> Iterator[Checkpointers]:
    """The checkpointers of one kind, closed on exit."""
    opened = Checkpointers(kind, postgres_url, their_sqlite_sync)
    with opened.stack:
        yield opened


# --------------------------------------------------------------------------- our graph


def timed(name: str, fn: Callable[[Any, RunnableConfig], Any], sink: Sink) -> RunnableLambda:
    """A node running our node function `fn` and adding the CPU time of this thread to
    sink[name] (wall time to sink[name + " wall"]): LangGraph saves the previous checkpoint
    in a background thread at the same moment, so wall time also counts waiting for the GIL.
    LangGraph's own cost of invoking a node stays outside, as it is for any node."""

    def node(state: Any, config: RunnableConfig) -> Any:
        start, cpu = time.perf_counter(), time.thread_time()
        out = fn(state, config)
        sink[name] += time.thread_time() - cpu
        sink[name + " wall"] += time.perf_counter() - start
        return out

    return RunnableLambda(node, name=name)


def build_ours(
    model: ScriptedChat,
    summary: SummaryChat,
    sink: Sink,
    backend: Backend,
    settings: MemorySettings | None = None,
) -> Any:
    """start_turn (load_memory + journal, mask, summarize) -> model <-> (tools ->
    prepare_context) -> finish_turn (journal + rolling_summary), each node timed into `sink`,
    on `backend`'s store and checkpointer."""
    store = backend.store
    manager = ContextManager(
        model,
        sources=[ScopedMemory(store)],
        summary_model=summary,
        system_prompt=SYSTEM_PROMPT,
        defaults=settings,
    )

    def respond(state: MemoryState) -> dict[str, Any]:
        start, cpu = time.perf_counter(), time.thread_time()
        messages = manager.model_input(state)
        sink["model_input"] += time.thread_time() - cpu
        sink["model_input wall"] += time.perf_counter() - start
        return {"messages": [model.invoke(messages)]}

    def after_model(state: MemoryState) -> str:
        last = state["messages"][-1]
        return "tools" if isinstance(last, AIMessage) and last.tool_calls else "finish_turn"

    nodes = {
        "start_turn": manager.start_turn,
        "summarize_now": manager.summarize_now,
        "prepare_context": manager.prepare_context,
        "finish_turn": manager.finish_turn,
    }
    builder = StateGraph(MemoryState, context_schema=MemoryContext)
    for name, runnable in nodes.items():
        builder.add_node(name, timed(name, runnable.func, sink))  # type: ignore[attr-defined]
    builder.add_node("model", RunnableLambda(respond))
    builder.add_node("tools", ToolNode([fetch, *journal_tools()]))
    builder.add_conditional_edges(
        START, route_start, {"load_memory": "start_turn", "summarize_now": "summarize_now"}
    )
    builder.add_edge("summarize_now", END)
    builder.add_edge("start_turn", "model")
    builder.add_conditional_edges("model", after_model)
    builder.add_edge("tools", "prepare_context")
    builder.add_edge("prepare_context", "model")
    builder.add_edge("finish_turn", END)
    saver = timed_saver(backend.checkpointer, sink)
    return builder.compile(store=store, checkpointer=saver)


# --------------------------------------------------------------------------- LangChain agent


class TimedSummarization(SummarizationMiddleware):
    """SummarizationMiddleware whose before_model time goes to sink["summarization"]."""

    def __init__(self, sink: Sink, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sink = sink

    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        start = time.perf_counter()
        out = super().before_model(state, runtime)
        self.sink["summarization"] += time.perf_counter() - start
        return out


class TimedContextEditing(ContextEditingMiddleware):
    """ContextEditingMiddleware whose wrap_model_call time, less the model call it wraps,
    goes to sink["context_editing"]; sink["cleared"] counts cleared results the model saw."""

    def __init__(self, sink: Sink, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.sink = sink

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        inner = 0.0

        def timed_handler(edited: Any) -> Any:
            nonlocal inner
            self.sink["cleared"] += sum(
                1
                for m in edited.messages
                if isinstance(m, ToolMessage) and "context_editing" in m.response_metadata
            )
            start = time.perf_counter()
            try:
                return handler(edited)
            finally:
                inner += time.perf_counter() - start

        start = time.perf_counter()
        out = super().wrap_model_call(request, timed_handler)
        self.sink["context_editing"] += time.perf_counter() - start - inner
        return out


def build_langchain(
    model: ScriptedChat,
    summary: SummaryChat,
    window: int,
    sink: Sink,
    saver: BaseCheckpointSaver[Any],
    editing_on: bool = True,
) -> Any:
    """create_agent with both middlewares (or summarization alone) at our thresholds, on
    LangGraph's own `saver`."""
    summarization = TimedSummarization(
        sink,
        model=model,  # its profile gives the window, as ours does
        summarizer=summary,
        trigger=("fraction", COMPACT_TRIGGER),
        keep=("fraction", KEEP_RATIO),
    )
    clear = ClearToolUsesEdit(
        trigger=int(MASK_TRIGGER * window),
        clear_at_least=int(MIN_CLEAR * window),
        keep=KEEP_RECENT,
    )
    editing = TimedContextEditing(sink, edits=[clear])
    return create_agent(
        model,
        tools=[fetch],
        system_prompt=SYSTEM_PROMPT,
        middleware=[summarization, editing] if editing_on else [summarization],
        checkpointer=timed_saver(saver, sink),
    )


# --------------------------------------------------------------------------- measuring


@dataclass
class Samples:
    """Per-turn wall times and, per part (node or middleware), per-turn times, in ms."""

    turns_ms: list[float] = field(default_factory=list)
    parts_ms: dict[str, list[float]] = field(default_factory=lambda: defaultdict(list))


@dataclass
class Side:
    """One graph on one thread."""

    name: str
    graph: Any
    sink: Sink
    summary: SummaryChat
    thread_id: str
    context: dict[str, str] | None

    @property
    def config(self) -> RunnableConfig:
        return {"configurable": {"thread_id": self.thread_id}, "recursion_limit": 100}

    def invoke(self, messages: list[BaseMessage]) -> float:
        """Run one invoke; its wall time in ms. The sink is reset first."""
        self.sink.clear()
        start = time.perf_counter()
        self.graph.invoke({"messages": messages}, self.config, context=self.context)
        return (time.perf_counter() - start) * 1000

    def timed_turn(
        self, n: int, samples: Samples, question: list[BaseMessage] | None = None
    ) -> None:
        """One timed turn (a new question unless given), recorded into samples."""
        samples.turns_ms.append(self.invoke(question or ask(n)))
        for name, value in self.sink.items():
            samples.parts_ms[name].append(value if name in COUNTS else value * 1000)


def ask(n: int) -> list[BaseMessage]:
    """A new user turn."""
    return [HumanMessage(f"Now read page {n}, please.", id=f"q-{uuid.uuid4().hex[:12]}")]


def masked_so_far(side: Side) -> int:
    """Tool results our nodes have masked on this thread (memory_context["masked"])."""
    values = side.graph.get_state(side.config).values
    return int((values.get("memory_context") or {}).get("masked", 0))


def masked_results(side: Side) -> int:
    """Masked tool results in our thread's state."""
    return sum(is_masked(m) for m in side.graph.get_state(side.config).values["messages"])


@dataclass
class Cell:
    """The measurements of one size and scenario."""

    size: int
    scenario: str
    window: int
    messages: int
    checkpointer: str = "memory"
    ours: Samples = field(default_factory=Samples)
    theirs: Samples = field(default_factory=Samples)
    masked_in_timed: int = 0
    masked: int = 0
    our_compactions: int = 0
    their_compactions: int = 0
    warm_turns: int = 0
    last_ours: Side | None = None


def new_sides(
    window: int, label: str, savers: Checkpointers, compaction: bool = False
) -> tuple[Side, Side, ScriptedChat]:
    """Our graph and the LangChain agent on fresh threads, sharing one fake model (for a
    compaction turn: masking and context editing off on both sides)."""
    model = ScriptedChat(profile={"max_input_tokens": window})
    sinks: tuple[Sink, Sink] = (defaultdict(float), defaultdict(float))
    summaries = (SummaryChat(), SummaryChat())
    settings = MemorySettings(masking=False) if compaction else None
    label = f"{label}-{uuid.uuid4().hex[:8]}"
    ours = Side(
        "ours",
        build_ours(model, summaries[0], sinks[0], savers.ours(), settings),
        sinks[0],
        summaries[0],
        label,
        CONTEXT,
    )
    graph = build_langchain(
        model, summaries[1], window, sinks[1], savers.theirs(), editing_on=not compaction
    )
    theirs = Side("langchain", graph, sinks[1], summaries[1], f"lc-{label}", None)
    return ours, theirs, model


NOTHING, MASKING, STEADY = "nothing fires", "masking active", "masking active, past snapshot"
COMPACTION = "compaction turn"
SCENARIOS = (NOTHING, MASKING, COMPACTION, STEADY)
MAX_WARM_TURNS = 60
SEEDED_SHARE = {NOTHING: 0.25, MASKING: 0.65, STEADY: 0.65, COMPACTION: 0.75}
PASTE_SHARE = 0.06


def paste(window: int) -> list[BaseMessage]:
    """A user turn pasting about PASTE_SHARE of the window."""
    text = ("Here is the log you asked for: " + "lorem ipsum dolor sit amet " * 40)[:1000]
    chars = int(PASTE_SHARE * window * 4)
    body = (text * (chars // len(text) + 1))[:chars]
    return [HumanMessage(body, id=f"p-{uuid.uuid4().hex[:12]}")]


def compactions(side: Side) -> int:
    """Compactions on this side's thread so far (our dividers; LangChain's summary calls)."""
    if side.name == "langchain":
        return side.summary.calls
    values = side.graph.get_state(side.config).values
    return len((values.get("memory_context") or {}).get("dividers") or [])


def warm_past_snapshot(ours: Side, theirs: Side) -> int:
    """Untimed turns on both sides until our messages channel has written its first
    DeltaChannel snapshot (every `snapshot_frequency` updates); how many turns it took."""
    saver: TimedSaver = ours.graph.checkpointer
    turns = 0
    while saver.snapshots == 0 and turns < MAX_WARM_TURNS:
        for side in (ours, theirs):
            side.invoke(ask(-2 - turns))
        turns += 1
    return turns


def run_round(cell: Cell, turns: int, round_no: int, savers: Checkpointers) -> None:
    """Seed both threads, one warm-up turn (for STEADY, turns until our first snapshot), then
    `turns` timed turns, alternating which side goes first (a compaction turn: one timed
    turn, pasting enough to cross the trigger; the model answers the seeding turns without a
    tool call then, so the thread stays at its seeded share until that turn)."""
    label = f"{cell.size}-{cell.scenario}-{round_no}"
    compaction = cell.scenario == COMPACTION
    ours, theirs, model = new_sides(cell.window, label, savers, compaction)
    model.tools_on = not compaction
    for side in (ours, theirs):
        side.invoke(history(cell.size))
        side.invoke(ask(-1))
    model.tools_on = True
    if cell.scenario == STEADY:
        cell.warm_turns = warm_past_snapshot(ours, theirs)
    before = masked_so_far(ours)
    compacted = (compactions(ours), compactions(theirs))
    for t in range(1 if cell.scenario == COMPACTION else turns):
        order = ((ours, cell.ours), (theirs, cell.theirs))
        for side, samples in order if (t + round_no) % 2 == 0 else order[::-1]:
            side.timed_turn(t, samples, paste(cell.window) if cell.scenario == COMPACTION else None)
    cell.masked_in_timed += masked_so_far(ours) - before
    cell.masked = masked_results(ours)
    cell.our_compactions += compactions(ours) - compacted[0]
    cell.their_compactions += compactions(theirs) - compacted[1]
    cell.last_ours = ours


def measure(size: int, scenario: str, turns: int, rounds: int, savers: Checkpointers) -> Cell:
    """Both sides on `rounds` fresh threads of about `size` tokens."""
    thread = history(size)
    tokens = count_tokens_approximately(thread)
    window = int(tokens / SEEDED_SHARE[scenario])
    cell = Cell(size, scenario, window, len(thread), savers.kind)
    for round_no in range(rounds):
        run_round(cell, turns, round_no, savers)
    print(f"measured ~{size // 1000}k {scenario} ({savers.kind})", flush=True)
    return cell


# --------------------------------------------------------------------------- reporting

OUR_NODES = ("start_turn", "prepare_context", "finish_turn")


def med(values: Sequence[float]) -> float:
    """The median, NaN when empty."""
    return statistics.median(values) if values else float("nan")


def summed(samples: Samples, names: Sequence[str]) -> list[float]:
    """Per turn: the summed time of these parts (0 for a part that did not run)."""
    turns = len(samples.turns_ms)
    columns = [samples.parts_ms.get(n) or [0.0] * turns for n in names]
    return [sum(vals) for vals in zip(*columns, strict=True)]


def node_work(samples: Samples, include_input: bool = True, wall: bool = False) -> list[float]:
    """Per turn: our nodes' CPU time (or wall time), with model_input unless told otherwise."""
    names = [*OUR_NODES, "model_input"] if include_input else list(OUR_NODES)
    return summed(samples, [f"{n} wall" for n in names] if wall else names)


def print_table(cells: list[Cell]) -> None:
    """The main table: medians per turn and the whole-turn ratio."""
    print(
        "| checkpointer | thread | msgs | scenario | our nodes' work, CPU (ms) | same, wall (ms) "
        "| our turn (ms) | LangChain middleware work (ms) | LangChain turn (ms) "
        "| LangChain / ours |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for c in cells:
        middleware = summed(c.theirs, ("summarization", "context_editing"))
        ours_ms, theirs_ms = med(c.ours.turns_ms), med(c.theirs.turns_ms)
        print(
            f"| {c.checkpointer} | ~{c.size // 1000}k | {c.messages} | {c.scenario} "
            f"| {med(node_work(c.ours)):.3f} | {med(node_work(c.ours, wall=True)):.3f} "
            f"| {ours_ms:.2f} | {med(middleware):.2f} | {theirs_ms:.2f} "
            f"| {theirs_ms / ours_ms:.1f}x |"
        )


def print_nodes(cells: list[Cell]) -> None:
    """Per node medians, and evidence that masking is active on both sides."""
    names = [*OUR_NODES, "model_input"]
    print("\nOur nodes, median CPU ms per turn (prepare_context runs after each tool step):\n")
    print(
        "| checkpointer | thread | scenario | "
        + " | ".join(names)
        + " | results masked in timed turns | masked results in state "
        + "| LangChain cleared results per model call | compactions in timed turns (ours, "
        + "LangChain) |"
    )
    print("| --- | --- | --- | " + " | ".join("---" for _ in names) + " | --- | --- | --- | --- |")
    for c in cells:
        parts = " | ".join(f"{med(c.ours.parts_ms.get(n, [])):.3f}" for n in names)
        calls = 2 * len(c.theirs.turns_ms)
        cleared = sum(c.theirs.parts_ms.get("cleared", [])) / max(calls, 1)
        print(
            f"| {c.checkpointer} | ~{c.size // 1000}k | {c.scenario} | {parts} "
            f"| {c.masked_in_timed} | {c.masked} | {cleared:.0f} "
            f"| {c.our_compactions}, {c.their_compactions} |"
        )


def print_split(cells: list[Cell]) -> None:
    """Where a whole turn goes on each side: checkpointer (any thread) and the hooks."""
    print("\nCheckpointer and middleware, median ms per turn (saves run in background threads):\n")
    print(
        "| checkpointer | thread | scenario | ours: checkpoint load | ours: checkpoint save "
        "| LangChain: checkpoint load | LangChain: checkpoint save "
        "| LangChain: SummarizationMiddleware | LangChain: ContextEditingMiddleware |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for c in cells:
        cols = [
            med(c.ours.parts_ms.get("checkpoint_load", [])),
            med(c.ours.parts_ms.get("checkpoint_save", [])),
            med(c.theirs.parts_ms.get("checkpoint_load", [])),
            med(c.theirs.parts_ms.get("checkpoint_save", [])),
            med(c.theirs.parts_ms.get("summarization", [])),
            med(c.theirs.parts_ms.get("context_editing", [])),
        ]
        print(
            f"| {c.checkpointer} | ~{c.size // 1000}k | {c.scenario} | "
            + " | ".join(f"{v:.2f}" for v in cols)
            + " |"
        )


def print_growth(cells: list[Cell]) -> None:
    """Our nodes' work at the largest size over the smallest, per scenario."""
    print()
    for kind, scenario in itertools.product(
        dict.fromkeys(c.checkpointer for c in cells), SCENARIOS
    ):
        row = {c.size: c for c in cells if c.scenario == scenario and c.checkpointer == kind}
        if len(row) < 2 or scenario not in (NOTHING, MASKING):
            continue
        small, large = row[min(row)], row[max(row)]
        for label, include in (("nodes + model_input", True), ("nodes only", False)):
            growth = med(node_work(large.ours, include)) / med(node_work(small.ours, include))
            print(
                f"growth of our work ({label}), {kind}, {scenario}, "
                f"~{large.size // 1000}k / ~{small.size // 1000}k: {growth:.2f}x"
            )


# --------------------------------------------------------------------------- profiling

SAVERS = (
    "langgraph/checkpoint/memory/__init__.py",
    "langgraph/checkpoint/sqlite/__init__.py",
    "langgraph/checkpoint/postgres/__init__.py",
)
MAIN_GROUPS: dict[str, tuple[tuple[str, str], ...]] = {
    "checkpoint load (get_tuple + get_delta_channel_history)": tuple(
        (saver, name) for saver in SAVERS for name in ("get_tuple", "get_delta_channel_history")
    ),
    "our nodes (start_turn, prepare_context, finish_turn)": (("bench/context_nodes.py", "node"),),
    "model node (model_input + fake model invoke)": (("bench/context_nodes.py", "respond"),),
    "tools node (ToolNode + fetch)": (("langgraph/prebuilt/tool_node.py", "_func"),),
}
OVERLAPPING = {
    "add_messages_batch reducer (in load replay and in step updates)": (
        ("memory_plugin/context_management/state.py", "add_messages_batch"),
    ),
    "CachingSerializer.cached_hook (message decode, inside checkpoint load)": (
        ("memory_plugin/serde.py", "cached_hook"),
    ),
    "jsonplus ext_hook (uncached decode, e.g. inside a _DeltaSnapshot)": (
        ("langgraph/checkpoint/serde/jsonplus.py", "ext_hook"),
    ),
    "langchain_core BaseChatModel.invoke (fake model)": (
        ("langchain_core/language_models/chat_models.py", "invoke"),
    ),
}
SAVE = (tuple((saver, name) for saver in SAVERS for name in ("put", "put_writes")),)


def cumulative(stats: pstats.Stats, patterns: tuple[tuple[str, str], ...]) -> float:
    """Summed cumulative seconds of the functions matching (file suffix, name) patterns."""
    total = 0.0
    for (filename, _, func), row in stats.stats.items():  # type: ignore[attr-defined]
        if any(filename.endswith(f) and func == name for f, name in patterns):
            total += row[3]
    return total


def print_stats(stats: pstats.Stats, sort: str, limit: int) -> None:
    """The top `limit` entries, paths shortened."""
    out = io.StringIO()
    stats.stream = out  # type: ignore[attr-defined]
    stats.sort_stats(sort).print_stats(limit)
    for line in out.getvalue().splitlines():
        line = line.replace(str(SITE), "").replace(str(ROOT) + "/", "")
        if line.strip() and "function calls" not in line and "List reduced" not in line:
            print(line)


def profile_turns(side: Side, n: int, scenario: str, kind: str) -> None:
    """cProfile `n` turns of ours: grouped split, then top entries by cumulative and own time.
    The main thread runs the graph; saves run in LangGraph's background threads and are
    profiled there (one profiler per thread, merged)."""
    saver: TimedSaver = side.graph.checkpointer
    saver.profilers = {}
    main = cProfile.Profile()
    main.enable()
    for t in range(n):
        side.invoke(ask(10_000 + t))
    main.disable()
    stats = pstats.Stats(main)
    total = cumulative(stats, (("langgraph/pregel/main.py", "invoke"),)) / n
    print(f"\ncProfile of {n} turns of ours, largest size, {scenario}, {kind}")
    print(f"(ms per turn, under the profiler; whole invoke {total * 1000:.2f} ms):\n")
    grouped = 0.0
    for label, patterns in MAIN_GROUPS.items():
        seconds = cumulative(stats, patterns) / n
        grouped += seconds
        print(f"- {label}: {seconds * 1000:.2f} ms ({seconds / total:.0%})")
    rest = total - grouped
    print(
        f"- LangGraph scheduling and the rest (difference): {rest * 1000:.2f} ms "
        f"({rest / total:.0%})"
    )
    print("\nOverlapping with the groups above:\n")
    for label, patterns in OVERLAPPING.items():
        print(f"- {label}: {cumulative(stats, patterns) / n * 1000:.2f} ms")
    background = list(saver.profilers.values())
    saver.profilers = None
    if background:
        save = pstats.Stats(*background)
        seconds = cumulative(save, SAVE[0]) / n
        print(f"- checkpoint save in background threads (overlaps): {seconds * 1000:.2f} ms")
    print("\nTop entries by cumulative time (main thread):\n")
    print_stats(stats, "cumulative", 30)
    print("\nTop entries by own time (main thread):\n")
    print_stats(stats, "tottime", 15)
    if background:
        print("\nCheckpoint saves (background threads), by cumulative time:\n")
        print_stats(pstats.Stats(*background), "cumulative", 8)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=6, help="timed turns per round")
    parser.add_argument("--rounds", type=int, default=2, help="fresh threads per cell")
    parser.add_argument("--sizes", default="50000,150000,400000")
    parser.add_argument("--profile-turns", type=int, default=3)
    parser.add_argument(
        "--no-steady", action="store_true", help=f"skip the '{STEADY}' cell (largest size)"
    )
    parser.add_argument(
        "--checkpointers", default="memory", help="comma-separated: memory, sqlite, postgres"
    )
    parser.add_argument(
        "--compaction-rounds",
        type=int,
        default=4,
        help=f"fresh threads for each '{COMPACTION}' cell (0: none)",
    )
    parser.add_argument(
        "--postgres-url",
        default=os.environ.get("MEMORY_TEST_POSTGRES_URL"),
        help="PostgreSQL for --checkpointers postgres (default $MEMORY_TEST_POSTGRES_URL)",
    )
    parser.add_argument(
        "--langchain-sqlite-synchronous",
        default="FULL",
        choices=("FULL", "NORMAL"),
        help="PRAGMA synchronous of LangChain's SqliteSaver (ours: NORMAL, from connect)",
    )
    args = parser.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    their_sync = args.langchain_sqlite_synchronous
    with ExitStack() as stack:
        cells: list[Cell] = []
        for kind in args.checkpointers.split(","):
            savers = stack.enter_context(checkpointers(kind.strip(), args.postgres_url, their_sync))
            for size in sizes:
                cells += [
                    measure(size, sc, args.turns, args.rounds, savers) for sc in (NOTHING, MASKING)
                ]
                if args.compaction_rounds:
                    cells.append(measure(size, COMPACTION, 1, args.compaction_rounds, savers))
            if not args.no_steady:
                cells.append(measure(max(sizes), STEADY, args.turns, args.rounds, savers))
        report(cells, sizes, args.profile_turns)


def report(cells: list[Cell], sizes: list[int], profile: int) -> None:
    """Every table, then the profiles (largest size, masking active, per checkpointer)."""
    print()
    print_table(cells)
    print_split(cells)
    print_nodes(cells)
    print_growth(cells)
    for cell in cells:
        if cell.scenario == STEADY:
            print(f"\n{STEADY}: {cell.warm_turns} untimed turns before our first snapshot.")
    profiled: set[str] = set()
    for cell in cells[::-1]:
        if (
            profile
            and cell.size == max(sizes)
            and cell.scenario in (MASKING, STEADY)
            and cell.last_ours
            and cell.checkpointer not in profiled
        ):
            profiled.add(cell.checkpointer)
            profile_turns(cell.last_ours, profile, cell.scenario, cell.checkpointer)


if __name__ == "__main__":
    main()
