"""The background step: each turn's consolidation runs as a job after the turn has returned
(memory_plugin.background): a sync caller gets a daemon thread, one inside a running event
loop a task on that loop; jobs of one person (org and user) and thread run in order. In a
graph that reports its runs' ends (the shipped graph) the job starts its work once the run
ended (memory_plugin.context_management.turn_end), so invoke or ainvoke returns first.

A job consolidates every exchange of the thread from the thread's cursor up to the state's
`journal_seq` (the journal is read only when the cursor is behind the turn that just ended),
each exactly once: the cursor moves with the profile write (memory_plugin.profile.catchup). A
job that dies (process exit, model error, timeout) leaves the cursor behind (a thread with no
cursor yet is behind from its start), and the thread's next job consolidates what it missed,
the newest MAX_CATCH_UP exchanges at most; an exchange that failed `max_failures` times is
given up. While the profile is off for the user or space the cursor moves on alone: those
exchanges never reach the profile. A turn that could not be journaled is consolidated with a
later turn (also when none of the thread's turns is journaled yet: no journal_seq while
context management is on). Without a journal (no journal_seq, context management off) or a
thread id, only the turn's latest exchange in the state is consolidated, best effort: a job
that dies loses it. A failure is logged and a "failed" event, never raised.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore

from memory_plugin.background import await_every, wait_all
from memory_plugin.context_management.journaling import SEQ
from memory_plugin.context_management.turn_end import TurnJobs, reports_end
from memory_plugin.graphnode import State
from memory_plugin.plans import Plan
from memory_plugin.profile.catchup import CatchUp, Consolidate
from memory_plugin.profile.known import Known, Memo, shown_text
from memory_plugin.profile.rewrite import quiet_emit, report
from memory_plugin.provenance import Provenance, current, origin, turn_of
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import UserKey
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import TokenCounter

logger = logging.getLogger(__name__)
JOBS = "profile"
SettingsPlan = Callable[[MemoryContext, BaseStore | None], Plan[MemorySettings]]


def wait_for_profiles(timeout: float | None = 30.0) -> bool:
    """Block until the background consolidations of every ProfileMemory of this process
    started by sync runs finish (at most `timeout` seconds); whether they all did."""
    return wait_all(JOBS, timeout)


async def await_profiles() -> None:
    """Await the background consolidations of every ProfileMemory of this process."""
    await await_every(JOBS)


def latest_exchange(messages: list[BaseMessage]) -> tuple[str, str] | None:
    """The last user message and the final assistant answer after it."""
    answer = None
    for message in reversed(messages):
        if answer is None and isinstance(message, AIMessage) and not message.tool_calls:
            answer = message.text
        elif answer is not None and isinstance(message, HumanMessage):
            return message.text, answer
    return None


class ConsolidationJobs:
    """A profile's background consolidations: `settings` resolves a job's settings when the
    turn did not, `consolidate` takes one exchange, `catch_up` a journaled thread, with what
    `known` holds of the profiles and cursors (`counter` fits a profile to its block)."""

    def __init__(
        self,
        settings: SettingsPlan,
        consolidate: Consolidate,
        catch_up: CatchUp,
        known: Known,
        counter: TokenCounter,
    ) -> None:
        self.settings = settings
        self.consolidate = consolidate
        self.catch_up = catch_up
        self.known = known
        self.counter = counter
        self._jobs = TurnJobs(JOBS)

    def start(
        self, state: State, config: RunnableConfig, ctx: MemoryContext, store: BaseStore
    ) -> None:
        """Start the job consolidating the turn that ended with `state`, against `store`
        (see ProfileMemory.start_consolidation); returns at once."""
        assert ctx.user_id is not None
        messages = list(state.get("messages") or [])
        info = dict(state.get("memory_context") or {})
        values = info.get("settings")
        settings = MemorySettings.model_construct(**values) if values else None
        turn = turn_of(messages)
        with origin(source="node", job="profile", turn=turn, actor=ctx.user_id):
            provenance = current()
        thread = (config.get("configurable") or {}).get("thread_id")
        thread_id = str(thread) if thread else None
        memo = Memo(self.known, store, shown_text(state.get("memory_blocks")), self.counter)
        plan = self._job_plan(store, ctx, messages, info, thread_id, settings, provenance, memo)
        key = (UserKey(ctx.org_id, ctx.user_id), thread_id)
        if reports_end(thread_id):
            self._jobs.start_after_turn(key, store, plan, thread_id)
        else:
            self._jobs.start(key, store, plan)

    def wait(self, timeout: float | None = 30.0) -> bool:
        """Block until the jobs started by sync runs finish (at most `timeout` seconds);
        whether they all did."""
        return self._jobs.wait(timeout)

    async def await_all(self) -> None:
        """Await the jobs (tasks on this loop, threads of sync runs)."""
        await self._jobs.await_all()

    def _job_plan(
        self,
        store: BaseStore,
        ctx: MemoryContext,
        messages: list[BaseMessage],
        info: dict[str, Any],
        thread_id: str | None,
        settings: MemorySettings | None,
        provenance: Provenance,
        memo: Memo,
    ) -> Plan[None]:
        """One background consolidation: a failure is logged and a "failed" event, never
        raised."""
        try:
            if settings is None:
                settings = yield from self.settings(ctx, store)
            if thread_id is not None and info.get(SEQ) is None and settings.context_management:
                return  # the thread's first turns are not journaled yet: a later job has them
            if thread_id is None or info.get(SEQ) is None:
                exchange = latest_exchange(messages)
                if exchange is not None:
                    result = yield from self.consolidate(ctx, *exchange, settings, provenance)
                    report(result)
                return
            yield from self.catch_up.plan(
                ctx, messages, info, thread_id, settings, provenance, memo
            )
        except Exception as exc:
            logger.warning("profile consolidation failed; the profile is unchanged", exc_info=True)
            quiet_emit("failed", reason=f"{type(exc).__name__}: {exc}")
