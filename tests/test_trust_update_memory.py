"""Issue 9, point 3: update_memory is a compare-and-swap against the document the model saw;
and point 7 for the scoped blocks: the document block and the recent-notes block each fail
alone. The prebuilt graph, on every backend, invoke and ainvoke."""

from __future__ import annotations

import asyncio
import logging
import re
import threading
from collections.abc import Callable
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langgraph.store.base import GetOp, Op, SearchOp
from pydantic import Field

from memory_plugin import Backend, MemoryContext, create_memory_graph
from memory_plugin.plans import run
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.blocks import DOCUMENT_BLOCK, NOTES_BLOCK
from memory_plugin.settings import MemorySettings
from tests.faults import FaultyStore
from tests.scoped_helpers import ANN, ANN_TEAM, BOB_TEAM

SEED = "# Team\n- Release every Tuesday"
_SHOWN = re.compile(r'<memory_document scope="\w+">\n(.*?)\n</memory_document>', re.S)
_CURRENT = re.compile(r'<memory_document version="\d+">\n(.*?)\n</memory_document>', re.S)


class EditingModel(BaseChatModel):
    """Stands in for an LLM that adds facts to the memory document, one update_memory call
    per fact: it rewrites the document its prompt showed, then its own last write; told the
    document changed, it merges the fact into the current document the tool answered with."""

    facts: list[str]
    barrier: Any = None
    before: Callable[[], None] | None = None
    told: list[str] = Field(default_factory=list)
    prompts: list[str] = Field(default_factory=list)
    base: str = ""
    written: str = ""
    pending: list[str] = Field(default_factory=list)
    calls: int = 0

    @property
    def _llm_type(self) -> str:
        return "editing-fake"

    def bind_tools(self, tools: Any, **kwargs: Any) -> EditingModel:
        """The tool calls are decided by the rules above."""
        return self

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        last = messages[-1]
        if isinstance(last, HumanMessage):
            self.prompts.append(str(messages[0].content))
            if self.barrier is not None:
                self.barrier.wait(timeout=30)
            if self.before is not None:
                self.before()
            shown = _SHOWN.search(self.prompts[-1])
            self.base = shown.group(1) if shown else ""
            self.pending = list(self.facts)
        elif isinstance(last, ToolMessage):
            content = str(last.content)
            if "Merge your change" in content:
                self.told.append(content)
                current = _CURRENT.search(content)
                assert current is not None
                self.base = current.group(1)
            else:
                assert content.startswith("Saved the memory document"), content
                self.base = self.written
                self.pending.pop(0)
        if not self.pending:
            return ChatResult(generations=[ChatGeneration(message=AIMessage("Saved."))])
        self.calls += 1
        self.written = f"{self.base}\n- {self.pending[0]}"
        call = {"name": "update_memory", "args": {"content": self.written}, "id": f"u{self.calls}"}
        message = AIMessage("", tool_calls=[call])
        return ChatResult(generations=[ChatGeneration(message=message)])


def graph_for(backend: Backend, model: EditingModel, store: Any = None) -> Any:
    return create_memory_graph(
        model,
        store=store if store is not None else backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(profile=False),
    )


def turn(graph: Any, thread: str, ctx: MemoryContext) -> dict[str, Any]:
    return graph.invoke(  # type: ignore[no-any-return]
        {"messages": [HumanMessage("Please remember this.")]},
        {"configurable": {"thread_id": thread}},
        context=ctx,
    )


async def aturn(graph: Any, thread: str, ctx: MemoryContext) -> dict[str, Any]:
    return await graph.ainvoke(  # type: ignore[no-any-return]
        {"messages": [HumanMessage("Please remember this.")]},
        {"configurable": {"thread_id": thread}},
        context=ctx,
    )


def assert_both_survive(memory: ScopedMemory, ann: EditingModel, bob: EditingModel) -> None:
    """Both facts are in the document; the model that wrote second was shown the first's."""
    doc = memory.read_document(ANN_TEAM)
    assert doc is not None and doc.version == 3
    assert doc.text.startswith(SEED)
    assert "- Ann: demo on Monday" in doc.text and "- Bob: freeze on Friday" in doc.text
    (told,) = ann.told + bob.told
    first = "- Bob: freeze on Friday" if ann.told else "- Ann: demo on Monday"
    assert "changed since you last saw it (now version 2)" in told and first in told


def test_two_turns_rewriting_one_team_document_both_survive(backend: Backend) -> None:
    memory = ScopedMemory(backend.store)
    memory.write_document(ANN_TEAM, SEED)
    barrier = threading.Barrier(2)
    ann = EditingModel(facts=["Ann: demo on Monday"], barrier=barrier)
    bob = EditingModel(facts=["Bob: freeze on Friday"], barrier=barrier)
    threads = [
        threading.Thread(target=turn, args=(graph_for(backend, ann), "ann-t", ANN_TEAM)),
        threading.Thread(target=turn, args=(graph_for(backend, bob), "bob-t", BOB_TEAM)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert_both_survive(memory, ann, bob)


async def test_two_turns_under_ainvoke_both_survive(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store)
    await memory.awrite_document(ANN_TEAM, SEED)
    barrier = threading.Barrier(2)
    ann = EditingModel(facts=["Ann: demo on Monday"], barrier=barrier)
    bob = EditingModel(facts=["Bob: freeze on Friday"], barrier=barrier)
    await asyncio.gather(
        aturn(graph_for(abackend, ann), "ann-t", ANN_TEAM),
        aturn(graph_for(abackend, bob), "bob-t", BOB_TEAM),
    )
    doc = await memory.aread_document(ANN_TEAM)
    assert doc is not None and doc.version == 3
    assert "- Ann: demo on Monday" in doc.text and "- Bob: freeze on Friday" in doc.text
    assert len(ann.told + bob.told) == 1


def test_a_change_after_the_turn_loaded_is_shown_not_overwritten(backend: Backend) -> None:
    memory = ScopedMemory(backend.store)
    memory.write_document(ANN_TEAM, SEED)

    def bob_saves() -> None:
        memory.write_document(BOB_TEAM, f"{SEED}\n- Bob: freeze on Friday")

    ann = EditingModel(facts=["Ann: demo on Monday"], before=bob_saves)
    out = turn(graph_for(backend, ann), "ann-t", ANN_TEAM)
    first, second = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert str(first.content).startswith("Memory not changed: the memory document changed")
    assert "- Bob: freeze on Friday" in str(first.content)
    assert str(second.content).startswith("Saved the memory document (version 3")
    doc = memory.read_document(ANN_TEAM)
    assert doc is not None
    assert doc.text == f"{SEED}\n- Bob: freeze on Friday\n- Ann: demo on Monday"
    assert [d.version for d in memory.history(ANN_TEAM)] == [3, 2, 1]


async def test_a_change_after_the_turn_loaded_under_ainvoke(abackend: Backend) -> None:
    memory = ScopedMemory(abackend.store)
    await memory.awrite_document(ANN_TEAM, SEED)
    other = ScopedMemory(abackend.store)

    def bob_saves() -> None:
        asyncio.run_coroutine_threadsafe(
            other.awrite_document(BOB_TEAM, f"{SEED}\n- Bob: freeze on Friday"), loop
        ).result(timeout=30)

    loop = asyncio.get_running_loop()
    ann = EditingModel(facts=["Ann: demo on Monday"], before=bob_saves)
    await aturn(graph_for(abackend, ann), "ann-t", ANN_TEAM)
    assert len(ann.told) == 1 and "- Bob: freeze on Friday" in ann.told[0]
    doc = await memory.aread_document(ANN_TEAM)
    assert doc is not None and doc.version == 3
    assert doc.text == f"{SEED}\n- Bob: freeze on Friday\n- Ann: demo on Monday"


@pytest.mark.parametrize("ctx", [ANN, ANN_TEAM], ids=["personal", "team"])
def test_two_updates_in_one_turn_both_save(backend: Backend, ctx: MemoryContext) -> None:
    model = EditingModel(facts=["Likes tea", "Moved to Berlin"])
    out = turn(graph_for(backend, model), "t1", ctx)
    answers = [str(m.content) for m in out["messages"] if isinstance(m, ToolMessage)]
    saved = "Saved the memory document (version"
    assert [a[: len(saved) + 2] for a in answers] == [f"{saved} 1", f"{saved} 2"]
    assert model.told == []
    doc = ScopedMemory(backend.store).read_document(ctx)
    assert doc is not None and doc.text == "(empty)\n- Likes tea\n- Moved to Berlin"
    again = EditingModel(facts=["Plays the cello"])
    turn(graph_for(backend, again), "t1", ctx)
    doc = ScopedMemory(backend.store).read_document(ctx)
    assert doc is not None and doc.version == 3 and doc.text.endswith("- Plays the cello")


# Point 7 for the scoped blocks: the document block and the notes block fail alone.


class DocumentReadsFail(FaultyStore):
    """Reads of the curated document fail (the store is down for them) while `armed`."""

    armed: bool = True

    def _hits(self, ops: Any) -> bool:
        return self.armed and any(
            isinstance(op, GetOp) and op.namespace[-1] == "document" for op in ops
        )


@pytest.mark.parametrize("failing", [GetOp, SearchOp], ids=["document", "notes"])
def test_each_scoped_block_fails_alone(
    backend: Backend, failing: type[Op], caplog: pytest.LogCaptureFixture
) -> None:
    memory = ScopedMemory(backend.store)
    memory.write_document(ANN, "# Ann\n- Prefers tea")
    memory.remember(ANN, "Moved to Berlin")
    faulty = FaultyStore(backend.store)
    faulty.set("down", only=[failing])
    with caplog.at_level(logging.WARNING, logger="memory_plugin.scoped.blocks"):
        blocks = run(faulty, ScopedMemory(faulty).blocks_plan(ANN, MemorySettings()))
    by_name = {block.name: block for block in blocks}
    assert any("could not be loaded" in r.getMessage() for r in caplog.records)
    if failing is GetOp:
        assert "Moved to Berlin" in by_name[NOTES_BLOCK].text
        assert "could not be loaded" in by_name[DOCUMENT_BLOCK].text
        assert by_name[DOCUMENT_BLOCK].version is None
    else:
        assert NOTES_BLOCK not in by_name
        assert "- Prefers tea" in by_name[DOCUMENT_BLOCK].text
        assert by_name[DOCUMENT_BLOCK].version == 1


def test_an_unloaded_document_is_shown_before_any_write(backend: Backend) -> None:
    memory = ScopedMemory(backend.store)
    memory.write_document(ANN_TEAM, SEED)
    memory.remember(ANN_TEAM, "Offsite in May")
    store = DocumentReadsFail(backend.store)
    store.set("down")

    def store_back_up() -> None:
        store.armed = False

    model = EditingModel(facts=["Ann: demo on Monday"], before=store_back_up)
    out = turn(graph_for(backend, model, store), "ann-t", ANN_TEAM)
    assert "could not be loaded this turn" in model.prompts[0]
    assert "Offsite in May" in model.prompts[0]
    first, second = [m for m in out["messages"] if isinstance(m, ToolMessage)]
    assert "could not be loaded when this turn started" in str(first.content)
    assert SEED in str(first.content)
    assert str(second.content).startswith("Saved the memory document (version 2")
    doc = memory.read_document(ANN_TEAM)
    assert doc is not None and doc.text == f"{SEED}\n- Ann: demo on Monday"


def test_a_create_agent_agent_is_shown_the_change_too(backend: Backend) -> None:
    from langchain.agents import create_agent

    from memory_plugin.prebuilt.middleware import MemoryMiddleware

    memory = ScopedMemory(backend.store)
    memory.write_document(ANN_TEAM, SEED)

    def bob_saves() -> None:
        memory.write_document(BOB_TEAM, f"{SEED}\n- Bob: freeze on Friday")

    model = EditingModel(facts=["Ann: demo on Monday"], before=bob_saves)
    middleware = MemoryMiddleware(model, settings=MemorySettings(profile=False))
    agent = create_agent(
        model,
        tools=middleware.tools,
        middleware=[middleware],
        store=backend.store,
        checkpointer=backend.checkpointer,
    )
    turn(agent, "ann-t", ANN_TEAM)
    assert len(model.told) == 1 and "- Bob: freeze on Friday" in model.told[0]
    doc = memory.read_document(ANN_TEAM)
    assert doc is not None and doc.version == 3
    assert doc.text == f"{SEED}\n- Bob: freeze on Friday\n- Ann: demo on Monday"
