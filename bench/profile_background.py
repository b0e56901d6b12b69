"""How long a turn takes with the user profile on, against off, when the model is slow.

Run: .venv/bin/python bench/profile_background.py [--turns 10] [--delay 0.3]

Every call of the model (the agent's answer, the profile consolidation) sleeps `--delay`
seconds, then answers as the built-in offline model does. The same `--turns` turns, each
telling something durable about the user, go through `create_memory_graph` on a fresh SQLite
file, once with the profile off and once on; each `invoke` is timed. The profile is
consolidated in the background, so a turn with it on should take about as long as one with it
off (target: at most 1.2x). The background work is drained after the timed turns (not timed),
and the profile it built is checked.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.outputs import ChatResult

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from memory_plugin import MemoryContext, connect, create_memory_graph  # noqa: E402
from memory_plugin.offline import OfflineModel  # noqa: E402
from memory_plugin.profile.memory import ProfileMemory, wait_for_profiles  # noqa: E402
from memory_plugin.settings import MemorySettings  # noqa: E402

USER = MemoryContext(user_id="bench-ann")
TURNS = [
    "Hi, my name is Ann.",
    "I prefer short answers.",
    "I work as a data engineer at Acme.",
    "I'm working on the billing migration.",
    "What is the capital of Peru?",
    "Thanks, that helps!",
    "Actually my name is Anna.",
    "I'm working on the reporting pipeline too.",
    "How are you today?",
    "Please forget that I prefer short answers.",
]


class SlowModel(OfflineModel):
    """The offline model, `delay` seconds slower on every call."""

    delay: float = 0.3
    calls: int = 0

    def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> ChatResult:
        self.calls += 1
        time.sleep(self.delay)
        return super()._generate(messages, *args, **kwargs)


def timed_turns(profile: bool, turns: int, delay: float) -> tuple[list[float], int, Any]:
    """Seconds per turn, model calls, and the profile at the end, for one setting."""
    model = SlowModel(delay=delay)
    settings = MemorySettings(profile=profile)
    with tempfile.TemporaryDirectory() as folder, connect(f"sqlite:///{folder}/b.db") as backend:
        graph = create_memory_graph(
            model, store=backend.store, checkpointer=backend.checkpointer, settings=settings
        )
        config: Any = {"configurable": {"thread_id": f"bench-{profile}"}}
        seconds = []
        for n in range(turns):
            text = TURNS[n % len(TURNS)]
            began = time.perf_counter()
            graph.invoke({"messages": [HumanMessage(text)]}, config, context=USER)
            seconds.append(time.perf_counter() - began)
        if not wait_for_profiles(60 + 2 * delay * turns):
            raise SystemExit("the background profile work did not finish")
        stored = ProfileMemory(backend.store).read(USER)
    return seconds, model.calls, stored


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=10)
    parser.add_argument("--delay", type=float, default=0.3, help="seconds per model call")
    args = parser.parse_args()
    timed_turns(False, 1, 0.0)  # warm-up: imports, first connections
    off, off_calls, _ = timed_turns(False, args.turns, args.delay)
    on, on_calls, profile = timed_turns(True, args.turns, args.delay)
    mean_off, mean_on = statistics.mean(off), statistics.mean(on)
    print(f"turns: {args.turns}, model delay: {args.delay * 1000:.0f} ms a call, SQLite")
    for name, seconds, calls in (("off", off, off_calls), ("on", on, on_calls)):
        print(
            f"profile {name:3}: mean {statistics.mean(seconds) * 1000:7.1f} ms a turn, "
            f"max {max(seconds) * 1000:7.1f} ms, model calls {calls}"
        )
    print(f"ratio on/off (mean turn): {mean_on / mean_off:.3f}  (target <= 1.2)")
    print(f"ratio on/off (slowest turn): {max(on) / max(off):.3f}")
    turn_count = profile.turn_count if profile is not None else 0
    print(f"profile after the run: {turn_count} consolidation(s) saved")


if __name__ == "__main__":
    main()
