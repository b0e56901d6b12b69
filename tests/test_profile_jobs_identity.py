"""Background profile jobs are queued per person (issue 34, point 1): the consolidation of `ann`
of org o1 never waits behind one of `ann` of org o2 on a thread of the same id, on every
backend (jobs of one person and thread still run one after another)."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import RunnableConfig

from memory_plugin import Backend, MemoryContext, MemorySettings
from memory_plugin.profile.memory import ProfileMemory
from tests.fakes import ProfileModel

pytestmark = pytest.mark.slow

O1_ANN = MemoryContext(user_id="ann", org_id="o1")
O2_ANN = MemoryContext(user_id="ann", org_id="o2")
FACTS = {
    "Lisbon": {"op": "ADD", "section": "Identity", "bullet": "Lives in Lisbon."},
    "Rust": {"op": "ADD", "section": "Skills & Expertise", "bullet": "Writes Rust."},
}
UNJOURNALED = MemorySettings(context_management=False)
"""Each job consolidates the exchange it is given (no journal to catch up from)."""
CONFIG: RunnableConfig = {"configurable": {"thread_id": "t"}}


class HeldOn(ProfileModel):
    """ProfileModel that holds every call about `held` until `gate` is set."""

    held: str = ""

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        if self.held in str(messages[-1].content):
            self.gate.wait(timeout=30)
        return ProfileModel(plan=self.plan)._generate(messages, *args, **kwargs)


def turn(text: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(text), AIMessage("Noted.")]}


def test_one_persons_job_never_waits_behind_anothers(backend: Backend) -> None:
    gate = threading.Event()
    model = HeldOn(plan=FACTS, gate=gate, held="Lisbon")
    memory = ProfileMemory(backend.store, model=model, defaults=UNJOURNALED)
    try:
        memory.start_consolidation(turn("I just moved to Lisbon"), CONFIG, O2_ANN)
        memory.start_consolidation(turn("I write Rust at work"), CONFIG, O1_ANN)
        deadline = time.monotonic() + 15
        while memory.read(O1_ANN) is None and time.monotonic() < deadline:
            time.sleep(0.05)
        written = memory.read(O1_ANN)
        assert written is not None and written.bullets("Skills & Expertise") == ("Writes Rust.",)
        assert memory.read(O2_ANN) is None
    finally:
        gate.set()
    assert memory.wait_for_background()
    theirs = memory.read(O2_ANN)
    assert theirs is not None and theirs.bullets("Identity") == ("Lives in Lisbon.",)
