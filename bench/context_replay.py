"""Replay a long conversation through the prebuilt graph and report, per model call, the bytes
a provider would receive, how much of the previous request they reuse, the input tokens and
the summarization calls.

Run: python bench/context_replay.py [--tokens 400000] [--window 128000] [--seed 12]
     [--backend memory://] [--prompt-tokens 0] [--per-turn] [--json out.json]
     python bench/context_replay.py --session [--turns 50] [--window 24000] [--json out.json]
     python bench/context_replay.py --session --removals [--turns 50] [--window 24000]
     python bench/context_replay.py --bill [--windows 32000,48000,64000,128000] [--json out.json]

Two conversations, each run through `create_memory_graph` built as a user would (the backend
from `connect`, every memory kind on its defaults) with fake models standing for the LLM:
`ReplayChat` answers from the script and records every call it gets; `MaintenanceChat` writes
summaries, flush notes and profile rewrites and counts them. Our graph gets no maintenance
model, as shipped: its memory work goes to the agent's model unbound, which `ReplayChat`
hands to `MaintenanceChat`; a compaction's summary asked by repeating the agent's request
(memory_plugin.context_management.cache_share) is a recorded call.

- The default replay is generated from `--seed`: each turn is a user question (one in seven
  pastes 2-12 KB), one to four tool steps (one to three parallel calls each, outputs of
  0.3-24 KB: pages, query results, logs) and an answer of a few hundred tokens, until the raw
  history (every message the graph ever saw, unmasked and uncompacted) holds `--tokens`
  tokens.
- `--session` scripts a realistic session of `--turns` turns (issue 23): a mix of tool turns
  (outputs of 2-9 KB, so masking fires) and plain answers; every fifth turn the model calls
  the `remember` tool (it runs through the graph's ToolNode: the note is really stored, and
  read back at the end); every sixth turn the user states a fact about themselves and the
  maintenance model answers the profile consolidation with the rewritten profile (NOOP on
  the other turns); on the default window (32k) it compacts a few times (4 at the defaults
  of issue 37). The profile may be consolidated in the background after a turn: the driver
  waits for the maintenance model to go quiet before the next turn.
- `--removals` runs that session twice in one process, as scripted above and with a removal
  every seventh turn besides, alternately a note deleted before the turn (the newest, as the
  console deletes it) and a profile fact the user corrects (the maintenance model replaces the
  bullet); it reports both, and counts the calls after a removal whose system message or
  `<memory_update>` still holds the removed text (it must be 0).
- `--bill` (issue 37, point 3) runs the session and its removals variant at every window of
  `--windows` through our graph and through LangChain's `create_agent` with
  SummarizationMiddleware and ContextEditingMiddleware at our defaults' thresholds (built as
  bench/product.py builds that side; it has no memory: its `remember` stores nothing); one
  table: input tokens, the tokens in the previous request's byte prefix (what a provider
  caches), the bill with cached input at 10% and at 50% of the normal price (in full-price
  tokens, the plugin's counter, tools included: every request the agent's model gets, a
  compaction's summary asked by repeating the agent's request among them, plus the summaries
  sent as a transcript at the full price; flush notes and profile updates, which LangChain's
  side does not make, are not counted), the share of calls
  keeping the previous request as a byte prefix and the breaks a removal caused, with the
  host's load; then each side's breaks by the first element that differed (the JSON lists
  every break).

The headline, measured from the bytes sent and nothing else: for every agent model call the
request a provider receives is recorded, the bound tools (`convert_to_openai_tool`, in order)
then every message (`convert_to_openai_messages`), each serialized canonically (sorted keys,
no ASCII escaping, no spaces). A call "sends the previous request as a byte prefix" when its
tools are byte-identical to the previous call's and the previous call's messages are a prefix
of its own, element by element (a provider caches tools + system + messages in that order).
The cacheable share is the bytes (and the plugin counter's tokens) of the longest common
element-wise prefix with the previous request (the tools, then the leading identical
messages; nothing when the tools differ), over the request's bytes, summed over every call
but the first. Each call that breaks the prefix is listed with the first element that
differed (tools, the system message and its block, message i and its role, or a user message
whose `<memory_update>` a removal dropped) and the byte of the request where it first differs.

The project's own bookkeeping, kept for comparison:
- "prefix kept": the system message up to its first volatile block (the recent notes or the
  running summary) is byte-identical to the previous call's;
- "history kept": the previous call's messages after the system message are a
  byte-identical prefix of this call's (LangChain's JSON, message ids included).

Targets: issue 12, part 7: input never over the compaction trigger share of the window and
the total input against the raw history; issue 23, part 4: at least 95% of calls send the
previous request as a byte prefix over the session.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from host import HostLoad
from langchain.agents import create_agent
from langchain.agents.middleware import (
    ClearToolUsesEdit,
    ContextEditingMiddleware,
    SummarizationMiddleware,
)
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    convert_to_openai_messages,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from memory_plugin import (
    MemoryContext,
    ProfileMemory,
    ScopedMemory,
    connect,
    create_memory_graph,
)
from memory_plugin.blocks import SUMMARY_TAG
from memory_plugin.context_management.cache_share import SUMMARY_REQUEST
from memory_plugin.scoped.blocks import NOTES_BLOCK
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import counter_for

SYSTEM_PROMPT = "You are a careful research assistant. Use the tools, then answer briefly."
CONTEXT = MemoryContext(user_id="replay")
VOLATILE_MARKERS = (f"<{NOTES_BLOCK}>", f"<{SUMMARY_TAG}>")
REMEMBER = "remember"
PROFILE_TITLE = "# User Memory"
PROFILE_SECTIONS = (
    "Identity",
    "Communication Preferences",
    "Work Context",
    "Skills & Expertise",
    "Recent Topics",
    "Open Questions / Follow-ups",
)
WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "region",
    "latency",
    "budget",
    "vendor",
    "invoice",
    "shipment",
    "config",
    "cluster",
    "deploy",
    "metric",
    "error",
    "retry",
    "timeout",
    "quota",
    "index",
    "schema",
    "table",
    "column",
    "owner",
    "review",
    "release",
]

# --------------------------------------------------------------------------- the scripts


@dataclass(frozen=True)
class Call:
    """One scripted tool call and the size of its output (`text`: what `remember` saves)."""

    name: str
    arg: str
    out_chars: int
    text: str = ""


@dataclass(frozen=True)
class ScriptTurn:
    """A user question, its tool steps (parallel calls each) and the answer; `removal`: the
    newest note is deleted before the turn ("note"), or the user corrects a profile fact
    ("fact")."""

    question: str
    steps: tuple[tuple[Call, ...], ...]
    answer: str
    removal: str = ""


def output_text(call: Call) -> str:
    """The deterministic output of a scripted call."""
    rng = random.Random(f"{call.name}:{call.arg}")
    words = [rng.choice(WORDS) for _ in range(call.out_chars // 6 + 1)]
    return f"[{call.name} {call.arg}] " + " ".join(words)[: call.out_chars]


def script(seed: int, raw_tokens: int, counter: Any) -> list[ScriptTurn]:
    """Turns until the raw history holds about `raw_tokens` tokens."""
    rng = random.Random(seed)
    turns: list[ScriptTurn] = []
    total = 0
    while total < raw_tokens:
        n = len(turns)
        steps = []
        for s in range(rng.choice((1, 2, 2, 3, 3, 4))):
            calls = []
            for c in range(rng.choice((1, 1, 1, 2, 3))):
                name = rng.choice(("fetch_page", "run_query", "read_log"))
                size = int(rng.lognormvariate(8.0, 0.9))
                calls.append(Call(name, f"t{n}s{s}c{c}", max(300, min(size, 24_000))))
            steps.append(tuple(calls))
        question = f"Turn {n}: please look into the {rng.choice(WORDS)} {rng.choice(WORDS)} issue."
        if rng.random() < 0.15:  # the user pastes a log or a document
            question += "\n" + output_text(Call("paste", f"q{n}", rng.randint(2_000, 12_000)))
        answer = output_text(Call("answer", f"a{n}", int(rng.lognormvariate(7.0, 0.7))))
        turn = ScriptTurn(question, tuple(steps), f"Turn {n}: {answer}")
        turns.append(turn)
        total += sum(counter.count_text(output_text(c)) + 20 for step in steps for c in step)
        total += counter.count_text(turn.question + turn.answer) + 10
    return turns


# (section, what the user says, the bullet the profile gets)
FACTS = (
    (
        "Identity",
        "I work as a site reliability engineer at Northwind",
        "Works as an SRE at Northwind",
    ),
    (
        "Communication Preferences",
        "I prefer short answers with tables",
        "Prefers short answers with tables",
    ),
    (
        "Work Context",
        "I am moving our billing cluster to a new region this quarter",
        "Is moving the billing cluster to a new region this quarter",
    ),
    ("Skills & Expertise", "I write most of our tooling in Go", "Writes most tooling in Go"),
    ("Identity", "my timezone is CET", "Timezone is CET"),
    ("Work Context", "I own the latency dashboards", "Owns the latency dashboards"),
    ("Skills & Expertise", "I know PostgreSQL well", "Knows PostgreSQL well"),
    (
        "Communication Preferences",
        "I like examples more than theory",
        "Prefers examples over theory",
    ),
    (
        "Open Questions / Follow-ups",
        "remind me to revisit the quota alerts later",
        "Revisit the quota alerts",
    ),
)
# (section, the bullet corrected, what the user says, the bullet that replaces it)
CORRECTIONS = (
    (
        "Identity",
        "Works as an SRE at Northwind",
        "Correction: I left Northwind, I am an SRE at Contoso now",
        "Works as an SRE at Contoso",
    ),
    (
        "Communication Preferences",
        "Prefers short answers with tables",
        "Correction: tables are outdated for me, I prefer plain prose",
        "Prefers plain prose",
    ),
    (
        "Work Context",
        "Is moving the billing cluster to a new region this quarter",
        "Correction: the billing move is done already",
        "Moved the billing cluster to its new region",
    ),
)
NOTE_EVERY = 5
FACT_EVERY = 6
REMOVE_EVERY = 7
PASTE_SHARE = 0.15


def session_script(seed: int, turns: int, removals: bool = False) -> list[ScriptTurn]:
    """`turns` turns: a note every fifth turn, a fact about the user every sixth, tool turns
    (2-9 KB outputs) and plain answers; with `removals`, every seventh turn a note deleted
    or a fact corrected, in turn."""
    rng = random.Random(seed)
    facts = iter(FACTS)
    corrections = iter(CORRECTIONS)
    out: list[ScriptTurn] = []
    for n in range(turns):
        topic = f"{rng.choice(WORDS)} {rng.choice(WORDS)}"
        question = f"Turn {n}: please look into the {topic} issue."
        steps: list[tuple[Call, ...]] = []
        if n % NOTE_EVERY == NOTE_EVERY - 1:
            text = f"Decision on turn {n}: keep the {topic} settings as they are."
            question = (
                f"Turn {n}: we decided to keep the {topic} settings as they are; remember it."
            )
            steps.append((Call(REMEMBER, f"t{n}note", 0, text),))
        elif n % 3 != 0:
            for s in range(rng.choice((1, 2, 2, 3))):
                steps.append(
                    tuple(
                        Call(
                            rng.choice(("fetch_page", "run_query", "read_log")),
                            f"t{n}s{s}c{c}",
                            rng.randint(2_000, 9_000),
                        )
                        for c in range(rng.choice((1, 1, 2)))
                    )
                )
        if n % FACT_EVERY == 2 and (fact := next(facts, None)) is not None:
            question += f" By the way, {fact[1]}."
        if rng.random() < PASTE_SHARE:  # the user pastes a log or a document
            question += "\n" + output_text(Call("paste", f"q{n}", rng.randint(2_000, 12_000)))
        answer = output_text(Call("answer", f"a{n}", rng.randint(400, 2_400)))
        removal = ""
        if removals and n % REMOVE_EVERY == REMOVE_EVERY - 1:
            removal = "note" if n // REMOVE_EVERY % 2 == 0 else "fact"
            if removal == "fact" and (correction := next(corrections, None)) is not None:
                question += f" {correction[2]}."
        out.append(ScriptTurn(question, tuple(steps), f"Turn {n}: {answer}", removal))
    return out


@tool
def fetch_page(arg: str) -> str:
    """Fetch a page."""
    return output_text(Call("fetch_page", arg, _sizes[arg]))


@tool
def run_query(arg: str) -> str:
    """Run a database query."""
    return output_text(Call("run_query", arg, _sizes[arg]))


@tool
def read_log(arg: str) -> str:
    """Read a log excerpt."""
    return output_text(Call("read_log", arg, _sizes[arg]))


@tool(REMEMBER)
def remember_note(text: str) -> str:
    """Save a note (LangChain's side: stored nowhere, shown nowhere)."""
    return "Noted."


_sizes: dict[str, int] = {}

# --------------------------------------------------------------------------- the bytes sent


def canonical(value: Any) -> str:
    """The canonical JSON of a request part."""
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def request_parts(tools: Sequence[Any], messages: Sequence[BaseMessage]) -> tuple[str, list[str]]:
    """What a provider receives: the tools (one string) and each message (one string each)."""
    sent = convert_to_openai_messages(list(messages))
    return canonical(list(tools)), [canonical(m) for m in sent]


def common_prefix(previous: Sequence[str], current: Sequence[str]) -> int:
    """How many leading elements (messages, or characters of one) the two share."""
    k = 0
    for a, b in zip(previous, current, strict=False):
        if a != b:
            break
        k += 1
    return k


_BLOCK = re.compile(r"<([A-Za-z_][\w-]*)[^<>]*>.*?</\1>", re.DOTALL)


def system_change(before: str, after: str) -> str:
    """Which blocks of the system message were added, removed or changed (in the order they
    appear), and whether the text around them changed."""
    old = {m.group(1): m.group(0) for m in _BLOCK.finditer(before)}
    new = {m.group(1): m.group(0) for m in _BLOCK.finditer(after)}
    changes = [
        f"<{tag}> {'added' if tag not in old else 'changed'}"
        for tag in new
        if old.get(tag) != new[tag]
    ] + [f"<{tag}> removed" for tag in old if tag not in new]
    if _BLOCK.sub("", before).split() != _BLOCK.sub("", after).split():
        changes.append("text outside the blocks changed")
    return ", ".join(changes) or "whitespace changed"


def cause(broken_by: str) -> str:
    """The kind of change a break's first difference is."""
    if broken_by.startswith("tools"):
        return "tools"
    if broken_by.startswith("system message"):
        return "system message"
    if "(tool) content changed" in broken_by:
        return "tool output (masking)"
    if "<memory_update> dropped" in broken_by:
        return "memory update dropped (removal)"
    return "history"


def why_broken(
    previous_tools: str, tools: str, previous: list[str], current: list[str], k: int
) -> str:
    """Which element of the request first differs from the previous request."""
    if previous_tools != tools:
        was = [t["function"]["name"] for t in json.loads(previous_tools)]
        now = [t["function"]["name"] for t in json.loads(tools)]
        return f"tools ({', '.join(was)} -> {', '.join(now)})"
    if k >= len(current):
        return f"message {k}: the request is shorter ({len(previous)} -> {len(current)} messages)"
    old, new = json.loads(previous[k]), json.loads(current[k])
    role = new.get("role", "?")
    if role == "system" and old.get("role") == "system":
        change = system_change(str(old.get("content", "")), str(new.get("content", "")))
        return f"system message: {change}"
    if old.get("role") != role:
        return f"message {k} ({role}) replaces a {old.get('role')} message"
    size = f"{len(str(old.get('content', ''))):,} -> {len(str(new.get('content', ''))):,} chars"
    if role == "tool":
        return f"message {k} (tool) content changed, {size}"
    if _UPDATE.search(str(old.get("content", ""))) and not _UPDATE.search(
        str(new.get("content", ""))
    ):
        return f"message {k} ({role}): its <memory_update> dropped, {size}"
    return f"message {k} ({role}) changed, {size}"


# --------------------------------------------------------------------------- fake models


@dataclass
class CallRecord:
    """What one agent model call was sent."""

    turn: int
    step: int
    input_tokens: int
    raw_tokens: int
    prefix: str
    volatile: str
    history: list[str]
    maintenance: dict[str, int]
    request_bytes: int
    request_tokens: int
    cacheable_bytes: int
    cacheable_tokens: int
    byte_prefix: bool
    broken_by: str
    messages: int
    first_differing_byte: int
    memory: str = ""
    summary_request: bool = False


class ReplayChat(BaseChatModel):
    """The agent's model: plays the script (the driver sets `turn`), records every call."""

    turns: list[ScriptTurn] = Field(default_factory=list)
    turn: int = 0
    step: int = 0
    calls: list[CallRecord] = Field(default_factory=list)
    raw: list[BaseMessage] = Field(default_factory=list)
    counter: Any = None
    maintenance: Any = None
    system_prompt: str = SYSTEM_PROMPT
    last_tools: str = ""
    last_messages: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "replay-scripted"

    def bind_tools(  # type: ignore[override]
        self, tools: Sequence[Any], **kwargs: Any
    ) -> Runnable[Any, BaseMessage]:
        """Bind as a provider's chat model does: the tools in the provider's format."""
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        if not kwargs.get("tools"):  # memory work, through the agent's model as shipped
            return self.maintenance._generate(messages)
        self.calls.append(self.record(messages, kwargs["tools"]))
        if f"<{SUMMARY_REQUEST}>" in str(messages[-1].content):
            self.calls[-1].summary_request = True
            return self.maintenance.cached_summary()
        current = self.turns[self.turn]
        if self.step < len(current.steps):
            calls = [
                {
                    "name": c.name,
                    "args": {"text": c.text} if c.name == REMEMBER else {"arg": c.arg},
                    "id": f"call_{c.arg}",
                }
                for c in current.steps[self.step]
            ]
            reply = AIMessage("", tool_calls=calls)
            self.raw += [reply] + [
                ToolMessage(
                    "Noted." if c.name == REMEMBER else output_text(c), tool_call_id=call["id"]
                )
                for c, call in zip(current.steps[self.step], calls, strict=True)
            ]
        else:
            reply = AIMessage(current.answer)
            self.raw.append(reply)
        self.step += 1
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def record(self, messages: list[BaseMessage], tools: Sequence[Any]) -> CallRecord:
        """The call's request as sent (and against the previous one), its input size, and
        the bookkeeping view: its prefix, volatile part and history."""
        system = messages[0] if messages and isinstance(messages[0], SystemMessage) else None
        text = str(system.content) if system is not None else ""
        cut = min((i for i in (text.find(m) for m in VOLATILE_MARKERS) if i >= 0), default=-1)
        prefix, volatile = (text, "") if cut < 0 else (text[:cut], text[cut:])
        rest = messages[1:] if system is not None else messages
        history = [m.model_dump_json() for m in rest]
        raw = self.counter.count([SystemMessage(self.system_prompt), *self.raw])
        sent_tools, sent = request_parts(tools, messages)
        first = not self.calls
        same_tools = not first and sent_tools == self.last_tools
        k = common_prefix(self.last_messages, sent) if same_tools else 0
        byte_prefix = same_tools and k == len(self.last_messages)
        tools_bytes = len(sent_tools.encode())
        tools_tokens = self.counter.count_text(sent_tools)
        input_tokens = self.counter.count(messages)
        record = CallRecord(
            turn=self.turn,
            step=self.step,
            input_tokens=input_tokens,
            raw_tokens=raw,
            prefix=prefix,
            volatile=volatile,
            history=history,
            maintenance=self.maintenance.counts(),
            request_bytes=tools_bytes + sum(len(m.encode()) for m in sent),
            request_tokens=tools_tokens + input_tokens,
            cacheable_bytes=(tools_bytes + sum(len(m.encode()) for m in sent[:k]))
            if same_tools
            else 0,
            cacheable_tokens=(tools_tokens + self.counter.count(messages[:k])) if same_tools else 0,
            byte_prefix=byte_prefix,
            broken_by=""
            if first or byte_prefix
            else why_broken(self.last_tools, sent_tools, self.last_messages, sent, k),
            messages=len(sent),
            first_differing_byte=0
            if first or byte_prefix
            else differing_byte(self.last_tools, sent_tools, self.last_messages, sent, k),
            memory="\n".join([text, *told(rest)]),
        )
        self.last_tools, self.last_messages = sent_tools, sent
        return record


def differing_byte(
    previous_tools: str, tools: str, previous: list[str], current: list[str], k: int
) -> int:
    """The offset in the request's bytes (tools, then each message) where it first differs
    from the previous request."""
    if previous_tools != tools:
        return len(tools[: common_prefix(previous_tools, tools)].encode())
    offset = len(tools.encode()) + sum(len(m.encode()) for m in current[:k])
    if k < len(current) and k < len(previous):
        offset += len(current[k][: common_prefix(previous[k], current[k])].encode())
    return offset


def told(messages: Sequence[BaseMessage]) -> list[str]:
    """The `<memory_update>` parts of the messages (what memory told after the history)."""
    return [
        found.group(0)
        for message in messages
        if isinstance(message, HumanMessage)
        for found in _UPDATE.finditer(str(message.content))
    ]


_UPDATE = re.compile(r"<memory_update>.*?</memory_update>", re.DOTALL)


def _profile_body(prompt: str) -> dict[str, list[str]]:
    """The sections and bullets of the profile shown in a consolidation prompt."""
    inside = prompt.split("<profile>", 1)[-1].split("</profile>", 1)[0]
    sections: dict[str, list[str]] = {s: [] for s in PROFILE_SECTIONS}
    current: list[str] | None = None
    for line in inside.splitlines():
        if line.startswith("## "):
            current = sections.setdefault(line[3:].strip(), [])
        elif line.startswith("- ") and current is not None:
            current.append(line[2:].strip())
    return sections


def render_profile(sections: dict[str, list[str]]) -> str:
    """A profile body as the consolidation prompt asks for it."""
    parts = [PROFILE_TITLE]
    for name in PROFILE_SECTIONS:
        bullets = sections.get(name) or []
        parts.append(f"## {name}\n" + ("\n".join(f"- {b}" for b in bullets) or "_(empty)_"))
    return "\n\n".join(parts) + "\n"


class MaintenanceChat(BaseChatModel):
    """Writes summaries, flush notes and profile rewrites; counts each kind (and any other
    maintenance call)."""

    summaries: int = 0
    cached_summaries: int = 0
    summary_tokens: int = 0
    other_tokens: int = 0
    counter: Any = None
    flushes: int = 0
    profile_rewrites: int = 0
    profile_noops: int = 0
    others: int = 0
    corrected: list[str] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "replay-maintenance"

    def counts(self) -> dict[str, int]:
        """Every counter, by kind."""
        return {
            "summaries": self.summaries,
            "flushes": self.flushes,
            "profile_rewrites": self.profile_rewrites,
            "profile_noops": self.profile_noops,
            "others": self.others,
        }

    def calls(self) -> int:
        """Every maintenance call so far."""
        return sum(self.counts().values())

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        system = str(messages[0].content) if messages else ""
        prompt = str(messages[-1].content) if messages else ""
        tokens = self.counter.count(messages) if self.counter else 0
        if PROFILE_TITLE in system and "<exchange>" in prompt:
            text = self.consolidate(prompt)
        elif "long-term memory" in system:
            self.flushes += 1
            text = f"Working on turn-by-turn diagnostics; flush {self.flushes}."
        elif "summar" in system.lower():
            self.summaries += 1
            self.summary_tokens += tokens
            text = f"Summary {self.summaries}: the user asked about many issues; all resolved."
            return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])
        else:
            self.others += 1
            text = "NOOP"
        self.other_tokens += tokens
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])

    def cached_summary(self) -> ChatResult:
        """A summary asked by repeating the agent's request (billed as an agent call)."""
        self.summaries += 1
        self.cached_summaries += 1
        text = f"Summary {self.summaries}: the user asked about many issues; all resolved."
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])

    def consolidate(self, prompt: str) -> str:
        """The profile with the facts the user stated in the exchange (a corrected fact
        replaced), or NOOP."""
        exchange = prompt.split("<exchange>", 1)[-1]
        sections = _profile_body(prompt)
        added = False
        for section, said, bullet in FACTS:
            if said in exchange and bullet not in sections.get(section, []):
                sections.setdefault(section, []).append(bullet)
                added = True
        for section, old, said, bullet in CORRECTIONS:
            bullets = sections.get(section, [])
            if said in exchange and old in bullets:
                bullets[bullets.index(old)] = bullet
                self.corrected.append(old)
                added = True
        if not added:
            self.profile_noops += 1
            return "NOOP"
        self.profile_rewrites += 1
        return render_profile(sections)


# --------------------------------------------------------------------------- the replay


@dataclass
class Report:
    """The replay's figures (per call rows in `calls`)."""

    mode: str
    backend: str
    seed: int
    window: int
    trigger_tokens: int
    turns: int
    raw_history_tokens: int
    model_calls: int
    scripted_calls: int
    byte_prefix_calls: int
    byte_prefix_share: float
    cacheable_bytes_share: float
    cacheable_tokens_share: float
    summaries: int
    flush_notes: int
    profile_rewrites: int
    profile_noops: int
    notes_saved: int
    notes_stored: list[str]
    profile_bullets: list[str]
    max_input_tokens: int
    over_trigger_calls: int
    prefix_kept_share: float
    history_kept_share: float
    total_input_tokens: int
    total_full_history_tokens: int
    seconds: float
    median_turn_ms: float
    removals: int = 0
    summary_input_tokens: int = 0
    summaries_from_cache: int = 0
    memory_work_tokens: int = 0
    removal_calls: list[int] = field(default_factory=list)
    removed_still_shown_calls: int = 0
    breaks_by_cause: dict[str, int] = field(default_factory=dict)
    breaks: list[dict[str, Any]] = field(default_factory=list)
    calls: list[dict[str, Any]] = field(default_factory=list)


def system_prompt(tokens: int) -> str:
    """The app's system prompt, padded with style rules to about `tokens` tokens."""
    rules = " Follow the house style guide closely."
    return SYSTEM_PROMPT + rules * max(0, (tokens * 4 - len(SYSTEM_PROMPT)) // len(rules))


def settle(maintenance: MaintenanceChat, limit: float = 2.0) -> None:
    """Wait (at most `limit` seconds) until the maintenance model has had no call for a few
    polls: work a turn left in the background is done before the next turn starts."""
    deadline = time.monotonic() + limit
    seen, quiet = maintenance.calls(), 0
    while quiet < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
        now = maintenance.calls()
        quiet = quiet + 1 if now == seen else 0
        seen = now


def replay_model(turns: list[Any], counter: Any, prompt: str, window: int) -> ReplayChat:
    """The scripted agent model of one replay (its tool outputs' sizes registered)."""
    _sizes.clear()
    _sizes.update({c.arg: c.out_chars for t in turns for step in t.steps for c in step})
    return ReplayChat(
        turns=turns,
        counter=counter,
        maintenance=MaintenanceChat(counter=counter),
        system_prompt=prompt,
        profile={"max_input_tokens": window},
    )


def replay(
    backend_url: str,
    seed: int,
    raw_tokens: int,
    window: int,
    settings: MemorySettings,
    prompt_tokens: int = 0,
    session_turns: int = 0,
    removals: bool = False,
) -> Report:
    """Run the whole script (the scripted session with `session_turns`, with its removals
    when asked, else the generated conversation) through the prebuilt graph; the report."""
    counter = counter_for(None)
    prompt = system_prompt(prompt_tokens)
    turns = (
        session_script(seed, session_turns, removals)
        if session_turns
        else script(seed, raw_tokens, counter)
    )
    model = replay_model(turns, counter, prompt, window)
    maintenance = model.maintenance
    turn_ms: list[float] = []
    started = time.perf_counter()
    with connect(backend_url) as backend:
        graph = create_memory_graph(
            model,
            [fetch_page, run_query, read_log],
            store=backend.store,
            checkpointer=backend.checkpointer,
            settings=settings,
            system_prompt=prompt,
        )
        config: RunnableConfig = {
            "configurable": {"thread_id": f"replay-{seed}"},
            "recursion_limit": 200,
        }
        removed: list[tuple[int, str]] = []  # (the first call it must not reach, the text)
        for n, turn in enumerate(turns):
            model.turn, model.step = n, 0
            if turn.removal == "note":
                removed += delete_newest_note(ScopedMemory(backend.store), len(model.calls))
            corrected = len(maintenance.corrected)
            question = HumanMessage(turn.question)
            model.raw.append(question)
            begin = time.perf_counter()
            graph.invoke({"messages": [question]}, config, context=CONTEXT)
            turn_ms.append((time.perf_counter() - begin) * 1000)
            settle(maintenance)
            removed += [(len(model.calls), old) for old in maintenance.corrected[corrected:]]
        notes = [note.body for note in ScopedMemory(backend.store).list_notes(CONTEXT)]
        stored = ProfileMemory(backend.store).read(CONTEXT)
        bullets = [b for s in PROFILE_SECTIONS for b in stored.bullets(s)] if stored else []
    seconds = time.perf_counter() - started
    report = summarize(
        model, maintenance, backend_url, seed, window, settings, turns, seconds, turn_ms
    )
    report.mode = "session" if session_turns else "replay"
    report.notes_stored, report.profile_bullets = notes, bullets
    report.removals = len(removed)
    report.removal_calls = sorted({start for start, _ in removed})
    report.removed_still_shown_calls = sum(
        any(k >= start and text in call.memory for start, text in removed)
        for k, call in enumerate(model.calls)
    )
    return report


def delete_newest_note(scoped: ScopedMemory, first_call: int) -> list[tuple[int, str]]:
    """Delete the newest note, as the console would; what it held, from the next call on."""
    notes = scoped.list_notes(CONTEXT)
    if not notes:
        return []
    newest = max(notes, key=lambda note: note.key)
    scoped.delete_note(CONTEXT, newest.key)
    return [(first_call, newest.body)]


def replay_langchain(
    seed: int, window: int, settings: MemorySettings, session_turns: int, removals: bool
) -> Report:
    """The same scripted session through LangChain's `create_agent` with
    SummarizationMiddleware and ContextEditingMiddleware at our defaults' thresholds, built as
    bench/product.py builds it (no memory: `remember` stores nothing, a removal has nothing
    to take out of the prompt)."""
    counter = counter_for(None)
    turns = session_script(seed, session_turns, removals)
    model = replay_model(turns, counter, SYSTEM_PROMPT, window)
    maintenance = model.maintenance
    clear = ClearToolUsesEdit(
        trigger=int(settings.masking_trigger_ratio * window),
        clear_at_least=int(settings.masking_min_clear_ratio * window),
        keep=settings.masking_keep_recent,
    )
    graph = create_agent(
        model,
        tools=[fetch_page, run_query, read_log, remember_note],
        system_prompt=SYSTEM_PROMPT,
        middleware=[
            SummarizationMiddleware(
                model=model,
                summarizer=maintenance,
                trigger=("fraction", settings.summarization_trigger_ratio),
                keep=("fraction", settings.summarization_keep_ratio),
            ),
            ContextEditingMiddleware(edits=[clear]),
        ],
        checkpointer=InMemorySaver(),
    )
    config: RunnableConfig = {"configurable": {"thread_id": f"lc-{seed}"}, "recursion_limit": 200}
    turn_ms: list[float] = []
    started = time.perf_counter()
    for n, turn in enumerate(turns):
        model.turn, model.step = n, 0
        question = HumanMessage(turn.question)
        model.raw.append(question)
        begin = time.perf_counter()
        graph.invoke({"messages": [question]}, config)
        turn_ms.append((time.perf_counter() - begin) * 1000)
    seconds = time.perf_counter() - started
    report = summarize(
        model, maintenance, "memory", seed, window, settings, turns, seconds, turn_ms
    )
    report.mode = "langchain"
    return report


CACHE_PRICES = (0.1, 0.5)


def bill(report: Report, cached_price: float) -> float:
    """The session's input bill in full-price tokens: every request the agent's model got
    (a summary asked by repeating the agent's request among them), what the previous
    request's byte prefix covers at `cached_price` and the rest at 1, plus the summaries sent
    as a transcript (at 1: they start with no earlier request)."""
    return float(
        sum(
            r["request_tokens"] - r["cacheable_tokens"] + cached_price * r["cacheable_tokens"]
            for r in report.calls
        )
        + report.summary_input_tokens
    )


def bill_row(variant: str, side: str, report: Report) -> dict[str, Any]:
    """One row of the bill table."""
    removal_breaks = sum(b["call"] in report.removal_calls for b in report.breaks)
    later = max(report.model_calls - 1, 1)
    return {
        "variant": variant,
        "window": report.window,
        "side": side,
        "model_calls": report.model_calls,
        "compactions": report.summaries,
        "summaries_from_cache": report.summaries_from_cache,
        "summary_input_tokens": report.summary_input_tokens,
        "memory_work_tokens": report.memory_work_tokens,
        "input_tokens": sum(r["request_tokens"] for r in report.calls),
        "prefix_tokens": sum(r["cacheable_tokens"] for r in report.calls),
        **{f"bill_{round(p * 100)}": bill(report, p) for p in CACHE_PRICES},
        "byte_prefix_share": report.byte_prefix_share,
        "breaks": len(report.breaks),
        "breaks_by_cause": report.breaks_by_cause,
        "break_calls": report.breaks,
        "removal_breaks": removal_breaks,
        "share_without_removal_breaks": (report.byte_prefix_calls + removal_breaks) / later,
        "removed_still_shown_calls": report.removed_still_shown_calls,
    }


def bill_table(
    windows: Sequence[int], seed: int, turns: int, backend: str, settings: MemorySettings
) -> list[dict[str, Any]]:
    """Both variants of the session, both sides, every window: one row each. Ours runs once
    a price, its `prompt_cache_read_ratio` set to it, as a user of that provider sets it (the
    row's other figures are the first price's run)."""
    rows = []
    at = {p: settings.model_copy(update={"prompt_cache_read_ratio": p}) for p in CACHE_PRICES}
    for removals in (False, True):
        variant = "with removals" if removals else "session"
        for window in windows:
            runs = {p: replay(backend, seed, 0, window, at[p], 0, turns, removals) for p in at}
            row = bill_row(variant, "ours", runs[CACHE_PRICES[0]])
            for p, run in runs.items():
                row[f"bill_{round(p * 100)}"] = bill(run, p)
                row[f"share_{round(p * 100)}"] = run.byte_prefix_share
            rows.append(row)
            theirs = replay_langchain(seed, window, settings, turns, removals)
            rows.append(bill_row(variant, "langchain", theirs))
    return rows


def print_bill(rows: list[dict[str, Any]]) -> None:
    """The bill table, ours against LangChain's on the row below."""
    print(
        "| variant | window | side | calls | compactions | input tokens | in the previous "
        "request's prefix | bill, cached at 10% | bill, cached at 50% | ours / LangChain "
        "(10%, 50%) | calls keeping the previous request as a byte prefix | breaks: removal "
        "/ all | summaries asked by repeating the agent's request / as a transcript "
        "(its input tokens) | flush notes and profile updates: input tokens, not billed "
        "above |"
    )
    print("| --- " * 14 + "|")
    for i, r in enumerate(rows):
        other = rows[i + 1] if r["side"] == "ours" else None
        ratio = (
            f"{r['bill_10'] / other['bill_10']:.3f}, {r['bill_50'] / other['bill_50']:.3f}"
            if other
            else "-"
        )
        print(
            f"| {r['variant']} | {r['window']:,} | {r['side']} | {r['model_calls']} "
            f"| {r['compactions']} | {r['input_tokens']:,} | {r['prefix_tokens']:,} "
            f"| {r['bill_10']:,.0f} | {r['bill_50']:,.0f} | {ratio} "
            f"| {r['byte_prefix_share']:.1%} | {r['removal_breaks']} / {r['breaks']} "
            f"| {r['summaries_from_cache']} / {r['compactions'] - r['summaries_from_cache']} "
            f"({r['summary_input_tokens']:,}) | {r['memory_work_tokens']:,} |"
        )
    print("\n| variant | window | side | breaks by the first element that differed |")
    print("| --- " * 4 + "|")
    for r in rows:
        kinds = ", ".join(f"{k} {v}" for k, v in r["breaks_by_cause"].items()) or "-"
        print(f"| {r['variant']} | {r['window']:,} | {r['side']} | {kinds} |")


def summarize(
    model: ReplayChat,
    maintenance: MaintenanceChat,
    backend_url: str,
    seed: int,
    window: int,
    settings: MemorySettings,
    turns: list[ScriptTurn],
    seconds: float,
    turn_ms: list[float],
) -> Report:
    """Per call rows, the calls that broke the byte prefix, and the totals."""
    trigger = int(settings.summarization_trigger_ratio * window)
    rows: list[dict[str, Any]] = []
    breaks: list[dict[str, Any]] = []
    previous: CallRecord | None = None
    for i, call in enumerate(model.calls):
        prefix_kept = previous is not None and call.prefix == previous.prefix
        history_kept = previous is not None and call.history[: len(previous.history)] == (
            previous.history
        )
        before = previous.maintenance if previous else {}
        since = {k: v - before.get(k, 0) for k, v in call.maintenance.items()}
        rows.append(
            {
                "call": i,
                "turn": call.turn,
                "step": call.step,
                "messages": call.messages,
                "request_bytes": call.request_bytes,
                "cacheable_bytes": call.cacheable_bytes,
                "request_tokens": call.request_tokens,
                "cacheable_tokens": call.cacheable_tokens,
                "byte_prefix": call.byte_prefix,
                "broken_by": call.broken_by,
                "input_tokens": call.input_tokens,
                "full_history_tokens": call.raw_tokens,
                "summaries_since_last_call": since.get("summaries", 0),
                "summary_request": call.summary_request,
                "since_last_call": {k: v for k, v in since.items() if v},
                "prefix_kept": prefix_kept,
                "history_kept": history_kept,
                "volatile_changed": previous is not None and call.volatile != previous.volatile,
            }
        )
        if previous is not None and not call.byte_prefix:
            breaks.append({k: rows[-1][k] for k in ("call", "turn", "step", "broken_by")})
            breaks[-1]["reused"] = call.cacheable_bytes / max(call.request_bytes, 1)
            breaks[-1]["first_differing_byte"] = call.first_differing_byte
            breaks[-1]["since_last_call"] = rows[-1]["since_last_call"]
        previous = call
    later = rows[1:]
    counts = maintenance.counts()
    return Report(
        mode="replay",
        backend=backend_url.split(":", 1)[0],
        seed=seed,
        window=window,
        trigger_tokens=trigger,
        turns=len(turns),
        raw_history_tokens=model.calls[-1].raw_tokens if model.calls else 0,
        model_calls=len(rows),
        scripted_calls=sum(len(t.steps) + 1 for t in turns),
        byte_prefix_calls=sum(r["byte_prefix"] for r in later),
        byte_prefix_share=sum(r["byte_prefix"] for r in later) / max(len(later), 1),
        cacheable_bytes_share=sum(r["cacheable_bytes"] for r in later)
        / max(sum(r["request_bytes"] for r in later), 1),
        cacheable_tokens_share=sum(r["cacheable_tokens"] for r in later)
        / max(sum(r["request_tokens"] for r in later), 1),
        summaries=counts["summaries"],
        summary_input_tokens=maintenance.summary_tokens,
        summaries_from_cache=maintenance.cached_summaries,
        memory_work_tokens=maintenance.other_tokens,
        flush_notes=counts["flushes"],
        profile_rewrites=counts["profile_rewrites"],
        profile_noops=counts["profile_noops"],
        notes_saved=sum(c.name == REMEMBER for t in turns for step in t.steps for c in step),
        notes_stored=[],
        profile_bullets=[],
        max_input_tokens=max((r["input_tokens"] for r in rows), default=0),
        over_trigger_calls=sum(r["input_tokens"] > trigger for r in rows),
        prefix_kept_share=sum(r["prefix_kept"] for r in later) / max(len(later), 1),
        history_kept_share=sum(r["history_kept"] for r in later) / max(len(later), 1),
        total_input_tokens=sum(r["input_tokens"] for r in rows),
        total_full_history_tokens=sum(r["full_history_tokens"] for r in rows),
        seconds=seconds,
        median_turn_ms=statistics.median(turn_ms) if turn_ms else 0.0,
        breaks_by_cause={
            kind: sum(cause(b["broken_by"]) == kind for b in breaks)
            for kind in sorted({cause(b["broken_by"]) for b in breaks})
        },
        breaks=breaks,
        calls=rows,
    )


def print_report(report: Report, per_turn: bool) -> None:
    """The totals against the targets, the calls that broke the byte prefix, and optionally
    one row per turn."""
    r = report
    ratio = r.total_input_tokens / max(r.total_full_history_tokens, 1)
    print(
        f"{r.mode}: backend {r.backend}, seed {r.seed}, window {r.window:,}, "
        f"trigger {r.trigger_tokens:,}"
    )
    print(
        f"turns {r.turns}, model calls {r.model_calls} (scripted {r.scripted_calls}), "
        f"raw history {r.raw_history_tokens:,} tok"
    )
    print(
        f"calls sending the previous request as a byte prefix: {r.byte_prefix_calls}/"
        f"{max(r.model_calls - 1, 0)} ({r.byte_prefix_share:.1%})"
    )
    print(
        f"cacheable share of the request bytes: {r.cacheable_bytes_share:.1%} "
        f"(of the input tokens: {r.cacheable_tokens_share:.1%})"
    )
    if r.breaks_by_cause:
        kinds = ", ".join(f"{k} {v}" for k, v in r.breaks_by_cause.items())
        print(f"calls breaking it, by the first element that differed: {kinds}")
    print(f"compactions (summarization calls): {r.summaries}, flush notes {r.flush_notes}")
    print(
        f"notes saved by the model {r.notes_saved}, stored {len(r.notes_stored)}; profile "
        f"rewrites {r.profile_rewrites}, NOOP answers {r.profile_noops}, profile bullets "
        f"{len(r.profile_bullets)}"
    )
    print(
        f"max input {r.max_input_tokens:,} tokens ({r.max_input_tokens / r.window:.1%} of the "
        f"window); calls over the trigger: {r.over_trigger_calls}"
    )
    print(
        "the project's bookkeeping: calls keeping the previous call's cacheable prefix "
        f"{r.prefix_kept_share:.1%}, extending its history {r.history_kept_share:.1%}"
    )
    print(
        f"total input {r.total_input_tokens:,} tokens against {r.total_full_history_tokens:,} "
        f"for the full history ({ratio:.1%}, {1 / max(ratio, 1e-9):.1f}x fewer)"
    )
    print(f"wall {r.seconds:.1f} s, median turn {r.median_turn_ms:.1f} ms")
    if r.removals:
        print(
            f"removals {r.removals}; calls after a removal still showing the removed text in "
            f"the system message or a memory update: {r.removed_still_shown_calls}"
        )
    if r.breaks:
        print("\nCalls that did not send the previous request as a byte prefix:\n")
        print(
            "| call | turn.step | first difference | at byte | bytes reused "
            "| since the previous call |"
        )
        print("| --- | --- | --- | --- | --- | --- |")
        for b in r.breaks:
            since = ", ".join(f"{k} +{v}" for k, v in b["since_last_call"].items()) or "-"
            print(
                f"| {b['call']} | {b['turn']}.{b['step']} | {b['broken_by']} "
                f"| {b['first_differing_byte']:,} | {b['reused']:.1%} | {since} |"
            )
    if per_turn:
        print(
            "\n| turn | calls | input tokens (max) | full history (max) | summaries | byte "
            "prefix | prefix kept | history kept |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        by_turn: dict[int, list[dict[str, Any]]] = {}
        for row in r.calls:
            by_turn.setdefault(row["turn"], []).append(row)
        for turn, rows in by_turn.items():
            print(
                f"| {turn} | {len(rows)} | {max(x['input_tokens'] for x in rows):,} "
                f"| {max(x['full_history_tokens'] for x in rows):,} "
                f"| {sum(x['summaries_since_last_call'] for x in rows)} "
                f"| {sum(x['byte_prefix'] for x in rows)}/{len(rows)} "
                f"| {sum(x['prefix_kept'] for x in rows)}/{len(rows)} "
                f"| {sum(x['history_kept'] for x in rows)}/{len(rows)} |"
            )


SESSION_WINDOW = 32_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=400_000, help="raw history to replay")
    parser.add_argument(
        "--window",
        type=int,
        help=f"the model's input window (default 128,000; {SESSION_WINDOW:,} with --session)",
    )
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--backend", default="memory://", help="a connect() URL")
    parser.add_argument(
        "--prompt-tokens", type=int, default=0, help="pad the system prompt to about this size"
    )
    parser.add_argument(
        "--session", action="store_true", help="the scripted session (notes, profile updates)"
    )
    parser.add_argument("--turns", type=int, default=50, help="turns of --session")
    parser.add_argument(
        "--removals",
        action="store_true",
        help="--session without and then with a removal every seventh turn, both reported",
    )
    parser.add_argument(
        "--bill",
        action="store_true",
        help="the session and its removals variant, ours and LangChain's, at each --windows",
    )
    parser.add_argument(
        "--windows",
        default="32000,48000,64000,128000",
        help="comma-separated windows of --bill",
    )
    parser.add_argument("--per-turn", action="store_true", help="one row per turn")
    parser.add_argument("--json", type=Path, help="write the report (with per call rows)")
    args = parser.parse_args()
    if args.removals and not args.session:
        parser.error("--removals is a variant of --session: pass both")
    window = args.window or (SESSION_WINDOW if args.session else 128_000)
    settings = MemorySettings()
    if args.bill:
        load = HostLoad.start()
        windows = [int(w) for w in args.windows.split(",")]
        rows = bill_table(windows, args.seed, args.turns, args.backend, settings)
        load.finish()
        print_bill(rows)
        print(
            f"\ntokens: {counter_for(None).name} counter (memory_plugin.tokens), tools "
            "included; bill in full-price input tokens: the agent's model calls and the "
            "summaries (flush notes and profile updates, which LangChain's side does not "
            "make, are not counted)\n" + load.line()
        )
        if args.json:
            table = {"host": load.to_json(), "counter": counter_for(None).name, "rows": rows}
            args.json.write_text(json.dumps(table, indent=1))
        return
    runs = (False, True) if args.removals else (False,)
    reports = {}
    for removals in runs:
        report = replay(
            args.backend,
            args.seed,
            args.tokens,
            window,
            settings,
            args.prompt_tokens,
            session_turns=args.turns if args.session else 0,
            removals=removals,
        )
        if args.removals:
            print(f"\n## {'with' if removals else 'without'} removals\n")
        print_report(report, args.per_turn)
        reports["with_removals" if removals else "without_removals"] = asdict(report)
    if args.removals:
        plain, removed = reports["without_removals"], reports["with_removals"]
        print(
            f"\nbyte prefix calls without / with removals: {plain['byte_prefix_share']:.1%} / "
            f"{removed['byte_prefix_share']:.1%}; cacheable bytes "
            f"{plain['cacheable_bytes_share']:.1%} / {removed['cacheable_bytes_share']:.1%}"
        )
    if args.json:
        body = reports if args.removals else reports["without_removals"]
        args.json.write_text(json.dumps(body, indent=1))


if __name__ == "__main__":
    main()
