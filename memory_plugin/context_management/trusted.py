"""Memory read once and trusted until something changes it.

A turn's full read (the settings layers and every source's blocks) records which namespaces
it read, their versions taken just before it (memory_plugin.backends.versions) and the
blocks it got, in memory_context (`memory_read`). The next turn, and the recheck after a tool
step, read those versions again, one statement: the same versions, the same day and the same
code settings mean the same blocks, so the read is skipped; any write to one of those
namespaces (by this graph, another door or another app server) changes a version and the
next check reads everything again. A store without versions, a read of anything but gets
and searches, or a partial load is never trusted.

The recheck after a tool step skips its round trip when the same run read these versions
and no store of this process has written a versioned namespace since (the write generation,
memory_plugin.backends.writes_seen): a write by the run's tools, the app's own code or
another door of this process is seen at the next model call; a write by another process
during the run's tool steps is seen at the next turn, whose first check always reads. What
a run checked is kept in this process only (never in the checkpoint): a new run, a resumed
one and a restarted process read the versions.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import replace
from datetime import datetime
from functools import lru_cache
from typing import Any, TypeVar

from langgraph.config import get_config
from langgraph.store.base import GetOp, SearchOp

from memory_plugin.backends.exit_writes import RUNTIME_KEY
from memory_plugin.backends.versions import Reads, ReadVersions, Versions, merged
from memory_plugin.backends.writes_seen import generation
from memory_plugin.blocks import BlockSource, PromptBlock, from_dicts, to_dicts
from memory_plugin.context_management.turn import State
from memory_plugin.plans import Plan, Request
from memory_plugin.settings import MemorySettings

T = TypeVar("T")
MEMORY_READ = "memory_read"
_RUNS = 1024
_lock = threading.Lock()
_checked: OrderedDict[int, tuple[object, int, tuple[str, Any, Versions]]] = OrderedDict()


class Recorder:
    """The namespaces the requests of one plan read (None once one is not recognised)."""

    def __init__(self) -> None:
        self.reads: list[Reads] | None = []

    def note(self, request: Request) -> None:
        """Note what one request reads."""
        if self.reads is None:
            return
        found = _reads(request)
        if found is None:
            self.reads = None
        else:
            self.reads.append(found)

    def run(self, plan: Plan[T]) -> Plan[T]:
        """`plan`, noting what each of its requests reads."""
        try:
            request = next(plan)
            while True:
                self.note(request)
                try:
                    result = yield request
                except Exception as exc:
                    request = plan.throw(exc)
                else:
                    request = plan.send(result)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    def result(self) -> Reads | None:
        """Everything read, or None when some read cannot be versioned."""
        if not self.reads:
            return None
        reads = merged(self.reads)
        return reads if reads.versioned else None


def _reads(request: Request) -> Reads | None:
    if not isinstance(request, list):
        namespace = getattr(request, "namespace", None)
        return Reads(prefixes=(tuple(namespace),)) if isinstance(namespace, tuple) else None
    exact, prefixes = [], []
    for op in request:
        if isinstance(op, GetOp):
            exact.append(op.namespace)
        elif isinstance(op, SearchOp):
            prefixes.append(op.namespace_prefix)
        else:
            return None
    return Reads(tuple(exact), tuple(prefixes))


def fingerprint(sources: Sequence[BlockSource], base: MemorySettings, now: datetime) -> str:
    """What besides the store decides the blocks: the sources, the settings from code and
    environment, and each source's day (recent notes are the day's)."""
    days = {now.date().isoformat()}
    for source in sources:
        clock = getattr(source, "clock", None)
        if callable(clock):
            days.add(clock().date().isoformat())
    names = tuple(f"{type(s).__module__}.{type(s).__qualname__}" for s in sources)
    return _fingerprint(names, base, tuple(sorted(days)))


@lru_cache(maxsize=64)
def _fingerprint(names: tuple[str, ...], base: MemorySettings, days: tuple[str, ...]) -> str:
    parts = [list(names), base.model_dump(mode="json"), list(days)]
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:32]


def _run() -> object | None:
    """The running graph run's control object (one per run, shared by its tasks), if any."""
    try:
        runtime = get_config().get("configurable", {}).get(RUNTIME_KEY)
    except RuntimeError:
        return None
    return getattr(runtime, "control", None)


def _seen(run: object | None, mark: tuple[str, Any, Versions]) -> bool:
    """Whether this run read versions `mark` and no store of this process wrote since."""
    if run is None:
        return False
    with _lock:
        kept = _checked.get(id(run))
    return kept is not None and kept[0] is run and kept[1:] == (generation(), mark)


def _note(run: object | None, seen: int, mark: tuple[str, Any, Versions]) -> None:
    if run is None:
        return
    with _lock:
        _checked[id(run)] = (run, seen, mark)
        _checked.move_to_end(id(run))
        while len(_checked) > _RUNS:
            _checked.popitem(last=False)


def unchanged_plan(
    info: State, key: str, *, again: bool = False
) -> Plan[tuple[bool, Versions | None, Reads | None]]:
    """Whether the last full read still holds (its versions read again now), the versions
    read, and the namespaces that read touched. `again`: a later check of the same run,
    answered without a read while this run read these versions and nothing was written since
    by a store of this process."""
    record = info.get(MEMORY_READ)
    if not record or record.get("key") != key:
        return False, None, None
    reads = Reads.from_json(record["reads"])
    kept = record.get("versions")
    run = _run()
    if again and kept is not None and _seen(run, (key, record["reads"], kept)):
        return True, kept, reads
    seen = generation()
    try:
        now = yield ReadVersions(reads)
    except Exception:
        return False, None, reads
    if now is not None:
        _note(run, seen, (key, record["reads"], now))
    return now is not None and kept is not None and now == kept, now, reads


def _dicts(blocks: list[PromptBlock]) -> list[dict[str, Any]]:
    return [{**row, "held": list(b.held)} for row, b in zip(to_dicts(blocks), blocks, strict=True)]


def _blocks(rows: list[dict[str, Any]]) -> list[PromptBlock]:
    return [
        replace(block, held=tuple(row.get("held") or ()))
        for block, row in zip(from_dicts(rows), rows, strict=True)
    ]


def recalled(info: State) -> tuple[list[PromptBlock], list[PromptBlock]]:
    """The per-turn and frozen blocks of the last full read."""
    record = info[MEMORY_READ]
    return _blocks(record["blocks"]), _blocks(record["frozen"])


def refreshed(
    info: State,
    now: Versions | None,
    reads: Reads | None,
    blocks: list[PromptBlock],
    frozen: list[PromptBlock],
) -> dict[str, Any] | None:
    """The record after a complete re-read of the sources (`reads`, with the versions `now`
    read just before it), when every namespace whose version moved is one it re-read and it
    read nothing the record does not watch; None otherwise (the next turn reads in full)."""
    kept = info.get(MEMORY_READ)
    if not kept or now is None or reads is None or kept.get("versions") is None:
        return None
    watched = Reads.from_json(kept["reads"])
    if merged([watched, reads]) != watched:
        return None
    before, after = dict(map(tuple, kept["versions"])), dict(map(tuple, now))
    moved = {
        scope for scope in before.keys() | after.keys() if before.get(scope) != after.get(scope)
    }
    if not all(reads.covers(scope) for scope in moved):
        return None
    return {**kept, "versions": now, "blocks": _dicts(blocks), "frozen": _dicts(frozen)}


def record(
    key: str,
    reads: Reads | None,
    versions: Versions | None,
    blocks: list[PromptBlock],
    frozen: list[PromptBlock],
) -> dict[str, Any] | None:
    """The memory_context record of a complete full read (None: nothing to trust)."""
    if reads is None:
        return None
    return {
        "key": key,
        "reads": reads.to_json(),
        "versions": versions,
        "blocks": _dicts(blocks),
        "frozen": _dicts(frozen),
    }
