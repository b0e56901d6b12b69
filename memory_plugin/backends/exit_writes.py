"""Exit-mode DeltaChannel writes, held for the checkpoint that follows them.

Under durability="exit" LangGraph stores a run's DeltaChannel writes at the run's end, one
put_writes per task group on the checkpoint the run started from, and puts the run's final
checkpoint once they are stored. Our savers hold those writes and store them with that
checkpoint, in its transaction: one round trip instead of one per task group, and a put that
fails keeps none of the turn. Every other write takes the saver's own path.

The fence: what this relies on in LangGraph (langgraph.pregel._loop and _checkpoint, 1.2),
each checked by tests/test_exit_writes.py:
- the loop puts "__pregel_durability" and the run's Runtime ("__pregel_runtime", one object per
  run) in the config of every put_writes and put it makes; the Runtime is the token that keeps
  one run's held writes off any other run's put;
- exit_delta_task_id gives a write of the run's first step the id "{step:08d}-..." (its task's
  own path), one of a later step "ffffffff-{step>>16:04x}-{step&0xffff:04x}-..." with the path
  "~~{step:010d}..." (or "" where the saver is wrapped so that LangGraph passes no path), and
  input writes "{step:08d}-0000-0000-0000-000000000000" (path "");
- _checkpointer_put_after_previous waits for these put_writes before it calls put, with the
  config whose checkpoint_id is the checkpoint they were stored on.
A real task id can look like a first step's ("{digits}-..."): only ids of a step below 65,536
are taken for one (one real id in 65,536 of 2**32 has that form), and a run's write held on
the checkpoint the put creates goes with the put too (an interrupted run's pending writes).
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from langchain_core.runnables import RunnableConfig

T = TypeVar("T")
log = logging.getLogger(__name__)

DURABILITY_KEY = "__pregel_durability"
RUNTIME_KEY = "__pregel_runtime"
NULL_TASK_ID = "00000000-0000-0000-0000-000000000000"
HELD_LIMIT = 256
"""Checkpoints with held writes at most; past it a run's writes are stored at once, unheld."""
STALE_AFTER = 600.0
"""Seconds after which writes whose put never came (their run failed before it) are let go."""

_FIRST = re.compile(r"(\d{8})-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}")
_LATE = re.compile(r"ffffffff-([0-9a-f]{4})-([0-9a-f]{4})-[0-9a-f]{4}-[0-9a-f]{12}")


def is_exit_delta_id(task_id: str, task_path: str) -> bool:
    """Whether a task id and path have the form LangGraph gives exit-mode DeltaChannel writes."""
    if late := _LATE.fullmatch(task_id):
        step = int(late[1], 16) << 16 | int(late[2], 16)
        return task_path.startswith(f"~~{step:010d}") or (not task_path and step < 1 << 16)
    first = _FIRST.fullmatch(task_id)
    return (
        first is not None
        and task_id != NULL_TASK_ID
        and int(first[1]) < 1 << 16
        and not task_path.startswith("~~")
    )


@dataclass
class _Held(Generic[T]):
    runtime: object
    since: float
    items: list[T] = field(default_factory=list)


Key = tuple[int, str, str, str]


class ExitWrites(Generic[T]):
    """Exit-mode DeltaChannel writes of runs in flight, by run and checkpoint."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: OrderedDict[Key, _Held[T]] = OrderedDict()

    def hold(self, config: RunnableConfig, task_id: str, task_path: str, item: T) -> bool:
        """Keep an exit-mode DeltaChannel write for its checkpoint's put; False for any other."""
        conf = config.get("configurable", {})
        runtime = conf.get(RUNTIME_KEY)
        if (
            runtime is None
            or conf.get(DURABILITY_KEY) != "exit"
            or not is_exit_delta_id(str(task_id), task_path)
        ):
            return False
        key = _key(runtime, conf, conf["checkpoint_id"])
        now = time.monotonic()
        with self._lock:
            self._let_go_stale(now)
            held = self._held.get(key)
            if held is None or held.runtime is not runtime:
                if len(self._held) >= HELD_LIMIT:
                    return False
                held = self._held[key] = _Held(runtime, now)
            held.items.append(item)
        return True

    def _let_go_stale(self, now: float) -> None:
        oldest = now - STALE_AFTER
        while self._held and next(iter(self._held.values())).since < oldest:
            stale, _ = self._held.popitem(last=False)
            log.warning("let go exit writes whose checkpoint never came: %s", stale[1:])

    def take(self, config: RunnableConfig, checkpoint_id: str) -> list[T]:
        """The writes the run held for the put of `checkpoint_id` after `config`'s checkpoint."""
        conf = config.get("configurable", {})
        runtime = conf.get(RUNTIME_KEY)
        if runtime is None or not conf.get("checkpoint_id") or not self._held:
            return []
        taken: list[T] = []
        with self._lock:
            for anchor in (conf["checkpoint_id"], checkpoint_id):
                key = _key(runtime, conf, anchor)
                held = self._held.get(key)
                if held is not None and held.runtime is runtime:
                    del self._held[key]
                    taken.extend(held.items)
        return taken

    def __len__(self) -> int:
        return len(self._held)


def _key(runtime: object, conf: dict[str, Any], checkpoint_id: str) -> Key:
    return (id(runtime), str(conf["thread_id"]), str(conf.get("checkpoint_ns", "")), checkpoint_id)
