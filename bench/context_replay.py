"""Replay a long, tool-heavy conversation through the prebuilt graph and report, per model
call, the input tokens sent, the summarization calls and whether the cacheable prefix held.

Run: python bench/context_replay.py [--tokens 400000] [--window 128000] [--seed 12]
     [--backend memory://] [--prompt-tokens 0] [--per-turn] [--json out.json]

The conversation is generated from `--seed`: each turn is a user question (one in seven
pastes 2-12 KB), one to four tool steps (one to three parallel calls each, outputs of 0.3-24
KB: pages, query results, logs) and an answer of a few hundred tokens, until the raw history
(every message the graph ever saw, unmasked and uncompacted) holds `--tokens` tokens. It runs
through `create_memory_graph` built as a user would (the backend from `connect`, every memory
kind on its defaults) with fake models standing for the LLM: `ReplayChat` answers from the
script and records every call it gets; `MaintenanceChat` writes summaries and flush notes and
counts them.

Per model call:
- input tokens sent (the plugin's counter for the model), against the tokens of sending the
  raw history so far (system prompt + every message, unedited);
- "prefix kept": the cacheable prefix (the system message up to its first volatile block:
  the system prompt, the frozen blocks and the per-turn blocks; the recent notes and the
  running summary follow, see memory_plugin/thread/prefix.py and blocks.py) is
  byte-identical to the previous call's;
- "history kept": the previous call's messages after the system message are a byte-identical
  prefix of this call's (a provider cache over the whole previous request would hit; masking
  and compaction break it by design, each clearing a large share at once).

Targets (issue 12, part 7): input never over the compaction trigger share of the window; at
least 95% of calls keep the previous call's prefix; and the total input against the raw
history.
"""

from __future__ import annotations

import argparse
import json
import random
import statistics
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from pydantic import Field

from memory_plugin import MemoryContext, connect, create_memory_graph
from memory_plugin.blocks import SUMMARY_TAG
from memory_plugin.scoped.prompt import NOTES_BLOCK
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import counter_for

SYSTEM_PROMPT = "You are a careful research assistant. Use the tools, then answer briefly."
CONTEXT = MemoryContext(user_id="replay")
VOLATILE_MARKERS = (f"<{NOTES_BLOCK}>", f"<{SUMMARY_TAG}>")
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

# --------------------------------------------------------------------------- the script


@dataclass(frozen=True)
class Call:
    """One scripted tool call and the size of its output."""

    name: str
    arg: str
    out_chars: int


@dataclass(frozen=True)
class ScriptTurn:
    """A user question, its tool steps (parallel calls each) and the answer."""

    question: str
    steps: tuple[tuple[Call, ...], ...]
    answer: str


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


_sizes: dict[str, int] = {}

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
    summaries_before: int


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

    @property
    def _llm_type(self) -> str:
        return "replay-scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ReplayChat:  # type: ignore[override]
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls.append(self.record(messages))
        current = self.turns[self.turn]
        if self.step < len(current.steps):
            calls = [
                {"name": c.name, "args": {"arg": c.arg}, "id": f"{c.arg}-{uuid.uuid4().hex[:6]}"}
                for c in current.steps[self.step]
            ]
            reply = AIMessage("", tool_calls=calls)
            self.raw += [reply] + [
                ToolMessage(output_text(c), tool_call_id=call["id"])
                for c, call in zip(current.steps[self.step], calls, strict=True)
            ]
        else:
            reply = AIMessage(current.answer)
            self.raw.append(reply)
        self.step += 1
        return ChatResult(generations=[ChatGeneration(message=reply)])

    def record(self, messages: list[BaseMessage]) -> CallRecord:
        """The call's input size and its prefix, volatile part and history, as sent."""
        system = messages[0] if messages and isinstance(messages[0], SystemMessage) else None
        text = str(system.content) if system is not None else ""
        cut = min((i for i in (text.find(m) for m in VOLATILE_MARKERS) if i >= 0), default=-1)
        prefix, volatile = (text, "") if cut < 0 else (text[:cut], text[cut:])
        rest = messages[1:] if system is not None else messages
        history = [m.model_dump_json() for m in rest]
        raw = self.counter.count([SystemMessage(self.system_prompt), *self.raw])
        return CallRecord(
            self.turn,
            self.step,
            self.counter.count(messages),
            raw,
            prefix,
            volatile,
            history,
            self.maintenance.summaries,
        )


class MaintenanceChat(BaseChatModel):
    """Writes summaries and flush notes; counts each kind (and any other maintenance call)."""

    summaries: int = 0
    flushes: int = 0
    others: int = 0

    @property
    def _llm_type(self) -> str:
        return "replay-maintenance"

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        system = str(messages[0].content) if messages else ""
        if "long-term memory" in system:
            self.flushes += 1
            text = f"Working on turn-by-turn diagnostics; flush {self.flushes}."
        elif "summar" in system.lower():
            self.summaries += 1
            text = f"Summary {self.summaries}: the user asked about many issues; all resolved."
        else:
            self.others += 1
            text = "NOOP"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(text))])


# --------------------------------------------------------------------------- the replay


@dataclass
class Report:
    """The replay's figures (per call rows in `calls`)."""

    backend: str
    seed: int
    window: int
    trigger_tokens: int
    turns: int
    raw_history_tokens: int
    model_calls: int
    summaries: int
    flush_notes: int
    max_input_tokens: int
    over_trigger_calls: int
    prefix_kept_share: float
    history_kept_share: float
    total_input_tokens: int
    total_full_history_tokens: int
    seconds: float
    median_turn_ms: float
    calls: list[dict[str, Any]] = field(default_factory=list)


def system_prompt(tokens: int) -> str:
    """The app's system prompt, padded with style rules to about `tokens` tokens."""
    rules = " Follow the house style guide closely."
    return SYSTEM_PROMPT + rules * max(0, (tokens * 4 - len(SYSTEM_PROMPT)) // len(rules))


def replay(
    backend_url: str,
    seed: int,
    raw_tokens: int,
    window: int,
    settings: MemorySettings,
    prompt_tokens: int = 0,
) -> Report:
    """Run the whole script through the prebuilt graph; the report."""
    counter = counter_for(None)
    prompt = system_prompt(prompt_tokens)
    turns = script(seed, raw_tokens, counter)
    _sizes.clear()
    _sizes.update({c.arg: c.out_chars for t in turns for step in t.steps for c in step})
    maintenance = MaintenanceChat()
    model = ReplayChat(
        turns=turns,
        counter=counter,
        maintenance=maintenance,
        system_prompt=prompt,
        profile={"max_input_tokens": window},
    )
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
            maintenance_model=maintenance,
        )
        config = {"configurable": {"thread_id": f"replay-{seed}"}, "recursion_limit": 200}
        for n, turn in enumerate(turns):
            model.turn, model.step = n, 0
            question = HumanMessage(turn.question)
            model.raw.append(question)
            begin = time.perf_counter()
            graph.invoke({"messages": [question]}, config, context=CONTEXT)
            turn_ms.append((time.perf_counter() - begin) * 1000)
    seconds = time.perf_counter() - started
    return summarize(
        model, maintenance, backend_url, seed, window, settings, turns, seconds, turn_ms
    )


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
    """Per call rows and the totals."""
    trigger = int(settings.summarization_trigger_ratio * window)
    rows: list[dict[str, Any]] = []
    previous: CallRecord | None = None
    for i, call in enumerate(model.calls):
        prefix_kept = previous is not None and call.prefix == previous.prefix
        history_kept = previous is not None and call.history[: len(previous.history)] == (
            previous.history
        )
        summaries = call.summaries_before - (previous.summaries_before if previous else 0)
        rows.append(
            {
                "call": i,
                "turn": call.turn,
                "step": call.step,
                "input_tokens": call.input_tokens,
                "full_history_tokens": call.raw_tokens,
                "summaries_since_last_call": summaries,
                "prefix_kept": prefix_kept,
                "history_kept": history_kept,
                "volatile_changed": previous is not None and call.volatile != previous.volatile,
            }
        )
        previous = call
    later = rows[1:]
    return Report(
        backend=backend_url.split(":", 1)[0],
        seed=seed,
        window=window,
        trigger_tokens=trigger,
        turns=len(turns),
        raw_history_tokens=model.calls[-1].raw_tokens if model.calls else 0,
        model_calls=len(rows),
        summaries=maintenance.summaries,
        flush_notes=maintenance.flushes,
        max_input_tokens=max((r["input_tokens"] for r in rows), default=0),
        over_trigger_calls=sum(r["input_tokens"] > trigger for r in rows),
        prefix_kept_share=sum(r["prefix_kept"] for r in later) / max(len(later), 1),
        history_kept_share=sum(r["history_kept"] for r in later) / max(len(later), 1),
        total_input_tokens=sum(r["input_tokens"] for r in rows),
        total_full_history_tokens=sum(r["full_history_tokens"] for r in rows),
        seconds=seconds,
        median_turn_ms=statistics.median(turn_ms) if turn_ms else 0.0,
        calls=rows,
    )


def print_report(report: Report, per_turn: bool) -> None:
    """The totals against the targets, and optionally one row per turn."""
    r = report
    ratio = r.total_input_tokens / max(r.total_full_history_tokens, 1)
    print(f"backend {r.backend}, seed {r.seed}, window {r.window:,}, trigger {r.trigger_tokens:,}")
    print(f"turns {r.turns}, model calls {r.model_calls}, raw history {r.raw_history_tokens:,} tok")
    print(f"summarization calls {r.summaries}, flush notes {r.flush_notes}")
    print(
        f"max input {r.max_input_tokens:,} tokens ({r.max_input_tokens / r.window:.1%} of the "
        f"window); calls over the trigger: {r.over_trigger_calls}"
    )
    print(f"calls keeping the previous call's cacheable prefix: {r.prefix_kept_share:.1%}")
    print(f"calls extending the previous call's whole history: {r.history_kept_share:.1%}")
    print(
        f"total input {r.total_input_tokens:,} tokens against {r.total_full_history_tokens:,} "
        f"for the full history ({ratio:.1%}, {1 / max(ratio, 1e-9):.1f}x fewer)"
    )
    print(f"wall {r.seconds:.1f} s, median turn {r.median_turn_ms:.1f} ms")
    if per_turn:
        print(
            "\n| turn | calls | input tokens (max) | full history (max) | summaries | prefix "
            "kept | history kept |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- |")
        by_turn: dict[int, list[dict[str, Any]]] = {}
        for row in r.calls:
            by_turn.setdefault(row["turn"], []).append(row)
        for turn, rows in by_turn.items():
            print(
                f"| {turn} | {len(rows)} | {max(x['input_tokens'] for x in rows):,} "
                f"| {max(x['full_history_tokens'] for x in rows):,} "
                f"| {sum(x['summaries_since_last_call'] for x in rows)} "
                f"| {sum(x['prefix_kept'] for x in rows)}/{len(rows)} "
                f"| {sum(x['history_kept'] for x in rows)}/{len(rows)} |"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=400_000, help="raw history to replay")
    parser.add_argument("--window", type=int, default=128_000, help="the model's input window")
    parser.add_argument("--seed", type=int, default=12)
    parser.add_argument("--backend", default="memory://", help="a connect() URL")
    parser.add_argument(
        "--prompt-tokens", type=int, default=0, help="pad the system prompt to about this size"
    )
    parser.add_argument("--per-turn", action="store_true", help="one row per turn")
    parser.add_argument("--json", type=Path, help="write the report (with per call rows)")
    args = parser.parse_args()
    settings = MemorySettings()
    report = replay(args.backend, args.seed, args.tokens, args.window, settings, args.prompt_tokens)
    print_report(report, args.per_turn)
    if args.json:
        args.json.write_text(json.dumps(asdict(report), indent=1))


if __name__ == "__main__":
    main()
