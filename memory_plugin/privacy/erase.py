"""Delete a user: every item of their memory on every kind (what each kind of KINDS keeps of
them), in every workspace, and their settings layer; with a checkpointer, their threads too
(checkpoints, journals and summaries: conversation history, which no kind holds as memory).

Team memory and an agent's shared entries stay: they are the workspace's and the agent's.
A user with no memory here is an UnknownUserError, and nothing changes. This process's
background jobs land first (memory_plugin.privacy.settled).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.store.base import BaseStore, Op, PutOp

from memory_plugin.backends.claims import DropCounters
from memory_plugin.context_management.journal import adelete_thread, delete_thread
from memory_plugin.context_management.owners import aowned_thread_ids, disown_plan
from memory_plugin.plans import Plan, arun, run
from memory_plugin.privacy.inventory import (
    Owner,
    UnknownUserError,
    counts,
    derived,
    inventory_plan,
    kind_order,
    namespace_of,
    shelf_of,
)
from memory_plugin.privacy.progress import Progress, quiet
from memory_plugin.privacy.settled import ajobs_landed, jobs_landed

BATCH = 100
THREADS = "threads deleted"


@dataclass
class Erased:
    """What deleting a user removed: items per kind, and threads when asked."""

    owner: Owner
    counts: dict[str, int] = field(default_factory=dict)
    threads: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The counts as JSON (`threads` null when threads were kept)."""
        return {
            "user_id": self.owner.user_id,
            "org_id": self.owner.org_id,
            "deleted": {kind: self.counts.get(kind, 0) for kind in kind_order()},
            "threads": self.threads,
        }

    def summary(self) -> str:
        """The counts as one line of text."""
        parts = ", ".join(f"{self.counts.get(kind, 0)} {kind}" for kind in kind_order())
        line = f"Deleted {self.owner.describe()}: {parts} items"
        if self.threads is not None:
            line += f"; {self.threads} threads with their journals and summaries"
        return line + "."


def erase_plan(owner: Owner, progress: Progress = quiet) -> Plan[Erased]:
    """Delete every item of the owner's memory; UnknownUserError when there is none.
    `progress` hears how many store items were read, then deleted."""
    held = yield from inventory_plan(owner, None, progress)
    if not held:
        raise UnknownUserError(f"{owner.describe()} has no memory in this store; nothing deleted")
    ops: list[Op] = [PutOp(namespace_of(owner, h), h.key, None) for h in held]
    for start in range(0, len(ops), BATCH):
        yield ops[start : start + BATCH]
        progress("items deleted", min(start + BATCH, len(ops)), len(ops))
    counted = {namespace_of(owner, h) for h in held if (shelf := shelf_of(h)) and shelf.counted}
    if counted:
        yield DropCounters(tuple(sorted(counted)))
    return Erased(owner, counts([h for h in held if not derived(h)]))


async def adelete_threads(
    checkpointer: BaseCheckpointSaver[Any],
    store: BaseStore,
    threads: Sequence[str],
    progress: Progress = quiet,
) -> None:
    """Delete threads with every kept incarnation (checkpoints, journals, summaries); a saver
    opened with `connect` has no async methods, so its sync ones run in a worker thread."""
    for done, thread in enumerate(threads, start=1):
        try:
            await adelete_thread(checkpointer, store, thread, keep_journal=False)
        except NotImplementedError:
            await asyncio.to_thread(delete_thread, checkpointer, store, thread, keep_journal=False)
        progress(THREADS, done, len(threads))


def erase_user(
    store: BaseStore,
    owner: Owner,
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    progress: Progress = quiet,
) -> Erased:
    """Delete the owner's memory; with a `checkpointer`, the threads they own too (their
    checkpoints, journals and summaries, every kept incarnation). `progress` hears how many
    store items were read, then deleted, then how many threads."""
    jobs_landed(f"deleting {owner.key}")
    threads = asyncio.run(aowned_thread_ids(checkpointer, store, owner.key)) if checkpointer else []
    try:
        erased = run(store, erase_plan(owner, progress))
    except UnknownUserError:
        if not threads:
            raise
        erased = Erased(owner, dict.fromkeys(kind_order(), 0))
    if checkpointer is not None:
        for done, thread in enumerate(threads, start=1):
            delete_thread(checkpointer, store, thread, keep_journal=False)
            progress(THREADS, done, len(threads))
        run(store, disown_plan(owner.key))
        erased.threads = len(threads)
    return erased


async def aerase_user(
    store: BaseStore,
    owner: Owner,
    *,
    checkpointer: BaseCheckpointSaver[Any] | None = None,
    progress: Progress = quiet,
) -> Erased:
    """Async twin of erase_user."""
    await ajobs_landed(f"deleting {owner.key}")
    threads = await aowned_thread_ids(checkpointer, store, owner.key) if checkpointer else []
    try:
        erased = await arun(store, erase_plan(owner, progress))
    except UnknownUserError:
        if not threads:
            raise
        erased = Erased(owner, dict.fromkeys(kind_order(), 0))
    if checkpointer is not None:
        await adelete_threads(checkpointer, store, threads, progress)
        await arun(store, disown_plan(owner.key))
        erased.threads = len(threads)
    return erased
