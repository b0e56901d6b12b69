"""A script that runs one turn and exits without closing its backend (issue 34, point 9).

`python -m tests.unclosed_turn sync|async URL TEXT THREAD DELAY`: one turn of ann's on thread
THREAD through create_memory_graph, opened with connect (invoke) or aconnect (ainvoke under
asyncio.run), never closed. The profile model takes DELAY seconds, so the turn's profile update
is still running when the script ends. On memory:// the profile is printed at exit, after
background work was drained ("profile: ..."): nothing else outlives the process.
"""

from __future__ import annotations

import asyncio
import atexit
import sys
import time
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult

from memory_plugin import Backend, MemoryContext, aconnect, connect, create_memory_graph
from memory_plugin.offline.demo import DemoModel
from memory_plugin.profile.document import Profile
from memory_plugin.profile.memory import ProfileMemory
from tests.fakes import ProfileModel

ANN = MemoryContext(user_id="ann")
FACTS = {
    "Lisbon": {"op": "ADD", "section": "Identity", "bullet": "Lives in Lisbon."},
    "Rust": {"op": "ADD", "section": "Skills & Expertise", "bullet": "Writes Rust."},
    "tea": {"op": "ADD", "section": "Communication Preferences", "bullet": "Likes tea."},
}


class SlowProfileModel(ProfileModel):
    """ProfileModel that takes `delay` seconds to answer, sync or async."""

    delay: float = 0.0

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        time.sleep(self.delay)
        return super()._generate(messages, *args, **kwargs)

    async def _agenerate(
        self, messages: list[BaseMessage], *args: Any, **kwargs: Any
    ) -> ChatResult:
        await asyncio.sleep(self.delay)
        return super()._generate(messages, *args, **kwargs)


def graph_for(backend: Backend, delay: float) -> Any:
    return create_memory_graph(
        DemoModel(script=["Noted."]),
        store=backend.store,
        checkpointer=backend.checkpointer,
        maintenance_model=SlowProfileModel(plan=FACTS, delay=delay),
    )


def bullets(profile: Profile | None) -> list[str]:
    """Every bullet of a profile, sorted (none without a profile)."""
    return [] if profile is None else sorted(b for s in profile.sections.values() for b in s)


def print_profile_at_exit(backend: Backend) -> None:
    def report() -> None:
        print("profile:", bullets(ProfileMemory(backend.store).read(ANN)), flush=True)

    atexit.register(report)


def main(mode: str, url: str, text: str, thread: str, delay: float) -> None:
    turn = ({"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}})
    if mode == "sync":
        backend = connect(url)
        if backend.kind == "memory":
            print_profile_at_exit(backend)
        graph_for(backend, delay).invoke(*turn, context=ANN)
    else:

        async def run() -> None:
            backend = await aconnect(url)
            if backend.kind == "memory":
                print_profile_at_exit(backend)
            await graph_for(backend, delay).ainvoke(*turn, context=ANN)

        asyncio.run(run())
    print("answered", flush=True)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]))
