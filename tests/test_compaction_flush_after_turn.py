"""The pre-compaction flush note on the shipped graph is asked for once the compaction turn has
its answer (the turn never waits for the note's model call, screen and write), and it still
lands: one screened note per compaction, sync and async, on all three backends."""

from __future__ import annotations

import time
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult

from memory_plugin import (
    Backend,
    MemoryContext,
    MemorySettings,
    ScopedMemory,
    create_memory_graph,
)
from memory_plugin.background import await_every, wait_all
from memory_plugin.context_management.prompts import FLUSH_SYSTEM, SUMMARY_SYSTEM
from memory_plugin.offline.demo import DemoModel
from memory_plugin.offline.model import OfflineModel

ANN = MemoryContext(user_id="ann")
WINDOW = 4_000
WORDS = "lorem ipsum dolor sit amet " * 60
CONFIG: dict[str, Any] = {"configurable": {"thread_id": "t"}}


class Maintenance(OfflineModel):
    """The offline maintenance model, logging the summaries and flush notes it is asked for."""

    log: Any = None

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        system = str(messages[0].content)
        if system == SUMMARY_SYSTEM:
            self.log.append("summary")
        elif system.startswith(FLUSH_SYSTEM.split("{")[0]):
            self.log.append("flush")
        return super()._generate(messages, *args, **kwargs)


class Agent(DemoModel):
    """Scripted answers, logged; once a summary was asked for, the answer takes a moment, so a
    flush started beside the turn would be asked for before it."""

    log: Any = None

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if "summary" in self.log and "answer after summary" not in self.log:
            time.sleep(0.2)
            self.log.append("answer after summary")
        return super()._generate(messages, *args, **kwargs)


def graph_and_log(backend: Backend) -> tuple[Any, list[str]]:
    log: list[str] = []
    agent = Agent(
        script=[AIMessage(f"answer {n}") for n in range(12)],
        profile={"max_input_tokens": WINDOW},
        log=log,
    )
    graph = create_memory_graph(
        agent,
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(masking=False),
        maintenance_model=Maintenance(log=log),
    )
    return graph, log


def question(n: int) -> dict[str, Any]:
    return {"messages": [HumanMessage(f"question {n} {WORDS}", id=f"q{n}")]}


def check(log: list[str], notes: list[Any]) -> None:
    assert log.count("summary") == 1
    assert log.count("flush") == 1
    assert log.index("answer after summary") < log.index("flush")
    assert len(notes) == 1 and notes[0].body


def test_the_flush_note_is_asked_for_after_the_turn_and_lands(backend: Backend) -> None:
    graph, log = graph_and_log(backend)
    for n in range(12):
        graph.invoke(question(n), CONFIG, context=ANN)
        if "summary" in log:
            break
    assert graph.get_state(CONFIG).values["messages"][-1].content.startswith("answer")
    assert wait_all()
    check(log, ScopedMemory(backend.store).list_notes(ANN))


async def test_the_flush_note_is_asked_for_after_the_turn_and_lands_async(
    abackend: Backend,
) -> None:
    graph, log = graph_and_log(abackend)
    for n in range(12):
        await graph.ainvoke(question(n), CONFIG, context=ANN)
        if "summary" in log:
            break
    assert (await graph.aget_state(CONFIG)).values["messages"][-1].content.startswith("answer")
    await await_every()
    check(log, await ScopedMemory(abackend.store).alist_notes(ANN))
