"""One app-server process of the load test (bench/load_test.py): M concurrent conversations.

Run by load_test.py as `python bench/load_worker.py SPEC.json OUT.json`. The process opens one
backend with `aconnect` (one pool shared by store and checkpointer), builds the prebuilt graph
(`create_memory_graph`) over a scripted model, and runs its conversations concurrently under
one event loop, each turn after the other. It records every acknowledged write (each note the
`remember` tool said it stored, each document version `update_memory` said it saved), every
turn's latency, and every error a user would have seen.
"""

from __future__ import annotations

import asyncio
import json
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolCall,
    ToolMessage,
)
from langchain_core.tools import tool

from memory_plugin import aconnect, create_memory_graph
from memory_plugin.offline import OfflineModel
from memory_plugin.offline.upkeep import said, upkeep_answer
from memory_plugin.settings import MemorySettings

NOTED = re.compile(r"^Noted for (\d{4}-\d{2}-\d{2}) \(note #(\d+)\)\.")
SAVED = re.compile(r"^Saved the memory document \(version (\d+),")
TURN = re.compile(r"^Turn (\d+) of (\S+) \(attempt (\d+)\)")
OUTPUT_LINES = 60
KEEP_RATIO = MemorySettings().summarization_keep_ratio


def fact(conversation: str, turn: int) -> tuple[str, str]:
    """What the user says in a turn, and the profile bullet it must leave."""
    code = f"{conversation}x{turn}"
    return f"my code {code} is K{code}", f"Code {code} is K{code}"


def note_text(conversation: str, turn: int, attempt: int) -> str:
    """The note the model stores in a turn (the attempt keeps a retried turn's note apart)."""
    return f"load note {conversation} turn {turn} attempt {attempt}"


def user_message(conversation: str, turn: int, attempt: int) -> str:
    """The user's message of a turn."""
    said_fact = fact(conversation, turn)[0]
    return f"Turn {turn} of {conversation} (attempt {attempt}). By the way, {said_fact}."


@tool
def lookup(query: str) -> str:
    """Look something up (returns a long report)."""
    return "\n".join(f"{query}: row {i} " + "lorem ipsum dolor " * 6 for i in range(OUTPUT_LINES))


UPDATE_END = "</memory_update>\n\n"


def newest_document(system: str, messages: Sequence[BaseMessage]) -> str:
    """The curated document as the model last saw it: told again in a user message's memory
    update when it changed during the session, else in the system prompt."""
    told = [
        str(m.content).rpartition(UPDATE_END)[0] for m in messages if isinstance(m, HumanMessage)
    ]
    documents = [said(text, "memory_document") for text in told if "<memory_document" in text]
    return documents[-1] if documents else said(system, "memory_document")


class LoadModel(OfflineModel):
    """Answers instantly and deterministically: on a user turn it calls `remember`,
    `update_memory` (the document shown plus one line, so the version it was shown is the
    compare-and-swap base) and `lookup`; after the tools it answers; memory's own prompts
    (profile rewrite, summaries, flush notes) are answered like OfflineModel does."""

    @property
    def _llm_type(self) -> str:
        return "load-test-scripted"

    def respond(self, messages: Sequence[BaseMessage], **kwargs: Any) -> AIMessage:
        """The scripted reply to `messages`."""
        system = str(messages[0].content) if isinstance(messages[0], SystemMessage) else ""
        upkeep = upkeep_answer(system, str(messages[-1].content)) if len(messages) > 1 else None
        if upkeep is not None:
            return AIMessage(upkeep)
        last = messages[-1]
        if not isinstance(last, HumanMessage):
            return AIMessage("Done: noted, saved and looked up.")
        found = TURN.match(str(last.content).rpartition(UPDATE_END)[2])
        if found is None:
            return AIMessage("Hello.")
        turn, conversation, attempt = int(found[1]), found[2], int(found[3])
        shown = [line for line in newest_document(system, messages).splitlines() if line.strip()]
        kept = [line for line in shown if line.startswith("- ")][-5:]
        document = "\n".join([*kept, f"- {conversation} turn {turn} attempt {attempt}"])
        calls = [
            ToolCall(
                name="remember",
                args={"text": note_text(conversation, turn, attempt)},
                id=f"r-{conversation}-{turn}-{attempt}",
            ),
            ToolCall(
                name="update_memory",
                args={"content": document},
                id=f"u-{conversation}-{turn}-{attempt}",
            ),
            ToolCall(
                name="lookup",
                args={"query": f"{conversation} {turn}"},
                id=f"l-{conversation}-{turn}-{attempt}",
            ),
        ]
        return AIMessage("", tool_calls=calls)


def context_of(conv: dict[str, Any]) -> dict[str, Any]:
    """The run context of a conversation spec."""
    context = {"user_id": conv["user"]}
    if conv.get("workspace"):
        context |= {"workspace_id": conv["workspace"], "thread_visibility": "shared"}
    return context


def build_graph(backend: Any, keep_ratio: float = KEEP_RATIO) -> Any:
    """The prebuilt graph every process serves; masking passes as small as the floor allows
    (`masking_batch_ratio` at `masking_min_clear_ratio`), so short runs mask under load too."""
    floor = MemorySettings().masking_min_clear_ratio
    return create_memory_graph(
        LoadModel(),
        [lookup],
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(summarization_keep_ratio=keep_ratio, masking_batch_ratio=floor),
        membership=lambda user, workspace: True,
    )


def _acks(messages: list[BaseMessage], conv: dict[str, Any], turn: int, attempt: int) -> dict:
    ids = {f"{kind}-{conv['name']}-{turn}-{attempt}" for kind in "rul"}
    acked: dict[str, Any] = {"notes": [], "versions": [], "errors": []}
    for message in messages:
        if not isinstance(message, ToolMessage) or message.tool_call_id not in ids:
            continue
        text = str(message.content)
        if message.status == "error" or "unavailable" in text:
            acked["errors"].append(text[:200])
        elif match := NOTED.match(text):
            acked["notes"].append([match[1], int(match[2]), note_text(conv["name"], turn, attempt)])
        elif match := SAVED.match(text):
            acked["versions"].append(int(match[1]))
    return acked


async def _turn(
    graph: Any, text: str, config: dict[str, Any], context: dict[str, Any]
) -> tuple[dict[str, Any], str | None]:
    """One turn: the final state and the post-turn profile update's status (from the memory
    events on the custom stream; None when it emitted none)."""
    result: dict[str, Any] = {}
    profile = None
    stream = graph.astream(
        {"messages": [HumanMessage(text)]},
        config,
        context=context,
        stream_mode=["values", "custom"],
    )
    async for mode, chunk in stream:
        if mode == "values":
            result = chunk
        elif chunk.get("type") == "memory_event" and chunk.get("kind") == "profile":
            profile = chunk.get("action")
    return result, profile


async def _conversation(graph: Any, conv: dict[str, Any], turns: int, out: dict) -> None:
    config = {"configurable": {"thread_id": conv["thread"]}}
    context = context_of(conv)
    for turn in range(1, turns + 1):
        attempt = 0
        while True:
            attempt += 1
            text = user_message(conv["name"], turn, attempt)
            started = time.monotonic()
            try:
                result, profile = await _turn(graph, text, config, context)
            except Exception as exc:
                out["failed_turns"].append(
                    {
                        "conversation": conv["name"],
                        "turn": turn,
                        "attempt": attempt,
                        "seconds": time.monotonic() - started,
                        "error": f"{type(exc).__name__}: {str(exc)[:200]}",
                        "at": time.time(),
                    }
                )
                if attempt >= out["max_attempts"]:
                    break
                await asyncio.sleep(0.5)
                continue
            elapsed = time.monotonic() - started
            out["latencies"].append(elapsed)
            out["turn_ends"].append(time.time())
            acked = _acks(result["messages"], conv, turn, attempt)
            answer = result["messages"][-1]
            if not isinstance(answer, AIMessage) or not str(answer.content).startswith("Done"):
                acked["errors"].append(f"answer: {str(answer.content)[:200]}")
            for note in acked["notes"]:
                out["notes"].append([conv["name"], *note])
            for version in acked["versions"]:
                out["versions"].append([conv["name"], version, turn, attempt])
            for error in acked["errors"]:
                out["user_errors"].append(
                    {"conversation": conv["name"], "turn": turn, "error": error, "at": time.time()}
                )
            out["completed"].append([conv["name"], turn, attempt])
            if profile not in ("updated", "noop"):
                out["profile_failed"].append([conv["name"], turn, profile])
            break


async def serve(spec: dict[str, Any]) -> dict[str, Any]:
    """Run this process's conversations; the record of what happened."""
    out: dict[str, Any] = {
        "latencies": [],
        "turn_ends": [],
        "notes": [],
        "versions": [],
        "user_errors": [],
        "failed_turns": [],
        "completed": [],
        "profile_failed": [],
        "max_attempts": spec.get("max_attempts", 1),
    }
    async with aconnect(spec["url"]) as backend:
        graph = build_graph(backend, spec.get("keep_ratio", KEEP_RATIO))
        if spec.get("ready"):
            Path(spec["ready"]).touch()
        delay = spec["start_at"] - time.time()
        if delay > 0:
            await asyncio.sleep(delay)
        out["started"] = time.time()
        await asyncio.gather(
            *(_conversation(graph, conv, spec["turns"], out) for conv in spec["conversations"])
        )
        out["ended"] = time.time()
    return out


def main(argv: list[str]) -> None:
    """Read the spec, serve, write the record."""
    spec = json.loads(Path(argv[0]).read_text())
    Path(argv[1]).write_text(json.dumps(asyncio.run(serve(spec))))


if __name__ == "__main__":
    main(sys.argv[1:])
