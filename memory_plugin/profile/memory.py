"""ProfileMemory: load and inject the user profile, consolidate it after each turn, opt out.

Consolidation runs in the background: the turn ends, and the next one starts, without waiting
for it; each thread's exchanges are consolidated exactly once, from the journal when a job did
not finish (see `start_consolidation` and memory_plugin.profile.cursor).

The profile is a property of the user: one per user, shared by all their threads and every
space where it is enabled; only that user's runs read or write it, and it is never indexed
for search. The model cannot edit it while answering: there is no tool for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Any, Literal, Unpack

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore, GetOp, PutOp

from memory_plugin.backends.conditional import PutIfVersion
from memory_plugin.background import Background, await_every, wait_all
from memory_plugin.base import MemoryService, ServiceOptions
from memory_plugin.blocks import PromptBlock
from memory_plugin.context_management.journal import tail_plan
from memory_plugin.context_management.journaling import SEQ
from memory_plugin.errors import ConflictError, InvalidArgumentError, ScopeError
from memory_plugin.events import emit
from memory_plugin.graphnode import State, plan_node
from memory_plugin.models.maintenance import MaintenanceModel
from memory_plugin.models.replies import RejectedReply, reply_text
from memory_plugin.plans import ModelCall, Plan, all_items_plan, arun, run
from memory_plugin.profile import cursor as cursors
from memory_plugin.profile.budget import body, fit_plan, truncate
from memory_plugin.profile.changes import (
    Op,
    ProfileChange,
    change_record,
    changes,
    diff,
    reapply,
    to_change,
)
from memory_plugin.profile.document import (
    SCHEMA_VERSION,
    SECTIONS,
    Profile,
    ProfileFormatError,
    parse,
    render,
)
from memory_plugin.profile.guard import check_consolidation, proposed
from memory_plugin.profile.prompts import NOOP, consolidation_messages
from memory_plugin.provenance import Provenance, current, origin, turn_of
from memory_plugin.scope import profile_scope
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import UserKey
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import TokenCounter, counter_for

logger = logging.getLogger(__name__)
KEY = "memory.md"
CHANGES = "changes"
KEEP_CHANGES = 100
BLOCK = "user_profile"
MAX_ATTEMPTS = 10
LOG_PAGE = 500
JOBS = "profile"
MAX_FAILURES = 3
"""Attempts at one exchange before it is given up (the cursor moves past it, with a warning):
a failure a retry cures (a model or store hiccup, a timeout) rarely fails three turns running,
while one that does (an exchange the model always chokes on) would block every later exchange
of the thread for good."""
MAX_CATCH_UP = 10
"""Exchanges one job consolidates at most, the newest ones: a thread far behind (a long model
outage) catches up on its recent exchanges instead of making one job ask the model for each."""
MAX_READ = 500
"""Journal entries one job reads at most, the newest ones."""
INSTRUCTION = (
    "## What I know about you\n"
    "Durable context about the user from earlier conversations. Treat it as background: adapt "
    "your tone, examples and depth to it, and let what the user says now take precedence."
)
Status = Literal["updated", "noop", "discarded", "disabled", "conflict", "skipped"]
ThreadCursor = tuple[str, int]
Seen = tuple[Profile | None, int | None, "cursors.Cursor | None"]
"""A profile, its version and a thread's cursor, as read together."""
_UNREAD = object()
"""A thread id and the journal seq its cursor moves to with a consolidation."""


@dataclass(frozen=True)
class Consolidation:
    """What one post-turn consolidation did."""

    status: Status
    profile: Profile | None = None
    operations: tuple[tuple[Op, str | None], ...] = ()
    reason: str | None = None


def enablement(settings: MemorySettings) -> tuple[bool, str]:
    """Whether profile memory is active for a turn with these settings, and why not."""
    if not settings.profile:
        return False, "the operator feature flag is off"
    if not settings.profile_space:
        return False, "context memory is disabled for this space"
    if settings.web_search and not settings.profile_with_web_search:
        return False, "context memory is unavailable while web search is enabled"
    if not settings.profile_user:
        return False, "the user turned context memory off"
    return True, "enabled"


def _bullets(profile: Profile) -> tuple[str, ...]:
    """Every bullet of the profile as its block shows it."""
    return tuple(f"- {bullet}" for section in SECTIONS for bullet in profile.bullets(section))


def latest_exchange(messages: list[BaseMessage]) -> tuple[str, str] | None:
    """The last user message and the final assistant answer after it."""
    answer = None
    for message in reversed(messages):
        if answer is None and isinstance(message, AIMessage) and not message.tool_calls:
            answer = message.text
        elif answer is not None and isinstance(message, HumanMessage):
            return message.text, answer
    return None


def _quiet_emit(action: str, **details: Any) -> None:
    """A background job's event, on the run's stream while it is still read; a stream that
    is gone (the run over, its loop closed) is no failure."""
    try:
        emit("profile", action, "profile", **details)
    except Exception:
        logger.debug("the profile event %s was not delivered", action, exc_info=True)


def wait_for_profiles(timeout: float | None = 30.0) -> bool:
    """Block until the background consolidations of every ProfileMemory of this process
    started by sync runs finish (at most `timeout` seconds); whether they all did."""
    return wait_all(JOBS, timeout)


async def await_profiles() -> None:
    """Await the background consolidations of every ProfileMemory of this process."""
    await await_every(JOBS)


def _stored(item: Any, user_id: str) -> tuple[Profile | None, int | None]:
    if item is None:
        return None, None
    try:
        return parse(item.value["text"]), item.value["version"]
    except ProfileFormatError:
        logger.warning("stored profile of %s is malformed; rebuilding it", user_id)
        return None, item.value["version"]


def _store_failure(exc: BaseException) -> bool:
    """Whether a failure is the store's (unreachable, restarting, locked) rather than the
    exchange's: it does not count towards giving the exchange up. A timeout is the model's."""
    if isinstance(exc, TimeoutError):
        return False
    names = {cls.__name__ for cls in type(exc).__mro__}
    return isinstance(exc, OSError) or bool(names & {"OperationalError", "InterfaceError"})


class ProfileMemory(MemoryService):
    """The user profile as a prompt block source, a post-turn consolidation and an opt-out.

    Constructed like every memory kind (memory_plugin.base.MemoryService): `model`
    consolidates (the graph's maintenance model) unless the `maintenance_model` setting names
    another. Each saved write is recorded in the user's change log, of which the newest
    `keep_changes` are kept; `max_failures` failed consolidations in a row give an exchange up.
    """

    def __init__(
        self,
        store: BaseStore | None = None,
        *,
        counter: TokenCounter | None = None,
        model_loader: Callable[[str], BaseChatModel] | None = None,
        keep_changes: int = KEEP_CHANGES,
        max_failures: int = MAX_FAILURES,
        **options: Unpack[ServiceOptions],
    ) -> None:
        for name, value in (("keep_changes", keep_changes), ("max_failures", max_failures)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a whole number from 1, got {value!r}")
        super().__init__(store, **options)
        self.keep_changes = keep_changes
        self.max_failures = max_failures
        self._jobs = Background(JOBS)
        if model_loader is not None:
            self.maintenance = MaintenanceModel(self.maintenance.default, model_loader)
        self.counter = counter or counter_for(self.maintenance.default)
        self.consolidate_profile = plan_node(
            self._consolidate_node, "consolidate_profile", membership=options.get("membership")
        )

    @property
    def model(self) -> BaseChatModel | None:
        """The model that consolidates when no `maintenance_model` setting names one."""
        return self.maintenance.default

    @model.setter
    def model(self, value: BaseChatModel | None) -> None:
        self.maintenance.default = value

    def _model_for(self, settings: MemorySettings) -> BaseChatModel:
        model = self.maintenance(settings)
        if model is None:
            raise ScopeError("profile consolidation needs a model: pass model=...")
        return model

    def _read_plan(self, ctx: MemoryContext) -> Plan[tuple[Profile | None, int | None]]:
        assert ctx.user_id is not None
        (item,) = yield [GetOp(profile_scope(ctx).namespace, KEY)]
        return _stored(item, ctx.user_id)

    def blocks_plan(
        self, ctx: MemoryContext, settings: MemorySettings | None = None
    ) -> Plan[list[PromptBlock]]:
        """The "What I know about you" block, or nothing (memory off, no user, no profile)."""
        if settings is None:
            settings = yield from self.settings_plan(ctx)
        if not enablement(settings)[0] or not ctx.user_id:
            return []
        profile, _ = yield from self._read_plan(ctx)
        if profile is None:
            return []
        fitted = truncate(profile, settings.profile_max_tokens, self.counter)
        emit(
            "profile",
            "loaded",
            "profile",
            turn_count=profile.turn_count,
            truncated=fitted.truncated,
        )
        text = f"{INSTRUCTION}\n\n<user_memory>\n{render(fitted).strip()}\n</user_memory>"
        shown, held = _bullets(fitted), _bullets(profile)
        return [PromptBlock(BLOCK, "per_turn", text, entries=shown, held=held)]

    def prompt_blocks(self, ctx: MemoryContext) -> list[PromptBlock]:
        """The profile block to inject this turn."""
        return run(self.store, self.blocks_plan(ctx))

    async def aprompt_blocks(self, ctx: MemoryContext) -> list[PromptBlock]:
        """Async twin of prompt_blocks."""
        return await arun(self.store, self.blocks_plan(ctx))

    def read_plan(self, ctx: MemoryContext) -> Plan[Profile | None]:
        """The plan behind read."""
        return (yield from self._read_plan(ctx))[0]

    def read(self, ctx: MemoryContext) -> Profile | None:
        """The caller's profile, None if there is none."""
        return run(self.store, self.read_plan(ctx))

    async def aread(self, ctx: MemoryContext) -> Profile | None:
        """Async twin of read."""
        return await arun(self.store, self.read_plan(ctx))

    def consolidate_plan(
        self,
        ctx: MemoryContext,
        user: str,
        assistant: str,
        settings: MemorySettings | None = None,
        provenance: Provenance | None = None,
        cursor: ThreadCursor | None = None,
        seen: Seen | None = None,
    ) -> Plan[Consolidation]:
        """Ask the model for NOOP or a rewritten profile after one exchange, check the rewrite,
        and save it with compare-and-swap, with its change-log record (`provenance`, by default
        the current one); on a concurrent change this run's changes are applied again to the
        newer profile, without another consolidation call.

        With `cursor` (a thread id and the journal seq after the exchange) the thread's cursor
        moves there in the profile write's transaction, and the exchange is "skipped" when the
        cursor, read after the profile, is already there (another worker consolidated it);
        after a NOOP or a discarded reply the caller moves the cursor itself. `seen` is the
        profile, its version and the cursor when the caller has just read them."""
        provenance = provenance or current(job="profile", actor=ctx.user_id)
        if settings is None:
            settings = yield from self.settings_plan(ctx)
        if not enablement(settings)[0] or not ctx.user_id:
            return Consolidation("disabled")
        model = self._model_for(settings)
        timeout = settings.profile_timeout_seconds
        namespace = profile_scope(ctx).namespace
        if seen is None:
            seen = yield from self._profile_and_cursor_plan(ctx, cursor and cursor[0])
        stored, version, read = seen
        if cursor is not None and read is not None and read.seq >= cursor[1]:
            return Consolidation("skipped", stored, reason="already consolidated")
        base = stored or Profile(ctx.user_id, SCHEMA_VERSION).with_sections({})
        now = self.clock()
        stamp = now.strftime("%Y-%m-%d %H:%M UTC")
        messages = consolidation_messages(body(base), user, assistant, stamp)
        reply = yield ModelCall(model, messages, timeout=timeout)
        if reply_text(reply).strip("`\"'. ").upper() == NOOP:
            return Consolidation("noop", stored)
        try:
            rewrite = proposed(reply, base, now)
            if rewrite.same_content(base):
                return Consolidation("noop", stored)
            check_consolidation(base, rewrite, user)
        except RejectedReply as exc:
            logger.warning("profile update of %s discarded: %s", ctx.user_id, exc.reason)
            return Consolidation("discarded", stored, reason=exc.reason)
        delta = diff(base, rewrite)
        for _ in range(MAX_ATTEMPTS):
            budget, ratio = settings.profile_max_tokens, settings.profile_condense_ratio
            fitted = yield from fit_plan(rewrite, budget, ratio, model, self.counter, now, timeout)
            new = replace(
                fitted,
                user_id=base.user_id,
                schema_version=base.schema_version,
                last_updated=now.isoformat(timespec="seconds"),
                turn_count=base.turn_count + 1,
            )
            record = change_record(now.isoformat(), new.turn_count, diff(stored, new), provenance)
            slot = PutOp((*namespace, CHANGES), self._slot(new.turn_count), record, index=False)
            also: tuple[PutOp, ...] = (slot,)
            if cursor is not None:
                also = (slot, cursors.cursor_put(namespace, cursor[0], read, cursor[1]))
            saved = yield PutIfVersion(namespace, KEY, {"text": render(new)}, version, also)
            if saved is not None:
                return Consolidation("updated", new, tuple(changes(stored, new)))
            logger.info("profile of %s changed meanwhile; applying this turn again", ctx.user_id)
            stored, version, read = yield from self._profile_and_cursor_plan(
                ctx, cursor and cursor[0]
            )
            if cursor is not None and read is not None and read.seq >= cursor[1]:
                return Consolidation("skipped", stored, reason="already consolidated")
            base = stored or Profile(ctx.user_id, SCHEMA_VERSION).with_sections({})
            rewrite = reapply(delta, base)
            if rewrite.same_content(base):
                return Consolidation("noop", stored)
        return Consolidation("conflict", None, reason="the profile kept changing meanwhile")

    def _profile_and_cursor_plan(self, ctx: MemoryContext, thread_id: str | None) -> Plan[Seen]:
        """The profile, its version and the thread's cursor, in one batch (the cursor after
        the profile: a profile write moves both at once, so the cursor is never older)."""
        assert ctx.user_id is not None
        namespace = profile_scope(ctx).namespace
        if thread_id is None:
            stored, version = yield from self._read_plan(ctx)
            return stored, version, None
        profile, cursor = yield [
            GetOp(namespace, KEY),
            GetOp(cursors.cursors_namespace(namespace), thread_id),
        ]
        return (*_stored(profile, ctx.user_id), cursors.from_item(cursor))

    @staticmethod
    def _cursor_plan(
        namespace: tuple[str, ...], cursor: ThreadCursor | None
    ) -> Plan[cursors.Cursor | None]:
        """The thread's stored cursor (read after the profile: a profile write moves both at
        once, so a cursor read later is never older than the profile read), None without one."""
        if cursor is None:
            return None
        return (yield from cursors.read_plan(namespace, cursor[0]))

    def consolidate(self, ctx: MemoryContext, user: str, assistant: str) -> Consolidation:
        """Consolidate one exchange into the caller's profile."""
        return run(self.store, self.consolidate_plan(ctx, user, assistant))

    async def aconsolidate(self, ctx: MemoryContext, user: str, assistant: str) -> Consolidation:
        """Async twin of consolidate."""
        return await arun(self.store, self.consolidate_plan(ctx, user, assistant))

    def _consolidate_node(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[State]:
        """Post-turn node: start the turn's consolidation in the background and return at once
        (start_consolidation); it never touches the messages."""
        self.start_consolidation(state, config, ctx)
        return {}
        yield  # a plan that asks for nothing

    def start_consolidation(
        self,
        state: State,
        config: RunnableConfig,
        ctx: MemoryContext,
        store: BaseStore | None = None,
    ) -> None:
        """Consolidate the turn that just ended in the background; returns at once and never
        raises (a sync caller gets a daemon thread, one inside a running event loop a task on
        that loop; jobs of one person (org and user) and thread run in order).

        `state` is the graph state at the end of the turn: its messages and memory_context,
        whose `journal_seq` is the journal's next seq after the final answer was journaled.
        The job consolidates every exchange of the thread from the thread's cursor up to
        `journal_seq` (the journal is read only when the cursor is behind the turn that just
        ended), each exactly once: the cursor moves with the profile write. A job that dies
        (process exit, model error, timeout) leaves the cursor behind (a thread with no cursor
        yet is behind from its start), and the thread's next job consolidates what it missed,
        the newest MAX_CATCH_UP exchanges at most; an exchange that failed `max_failures` times
        is given up. While the profile is off for the user or space the cursor moves on alone:
        those exchanges never reach the profile. A turn that could not be journaled is
        consolidated with a later turn (also when none of the thread's turns is journaled yet:
        no journal_seq while context management is on). Without a journal (no journal_seq,
        context management off) or a thread id, only the turn's latest exchange in the state
        is consolidated, best effort: a job that dies loses it. Nothing without a user
        (memory is off for the run). `store` defaults to the profile's (the running graph's)."""
        try:
            if not ctx.user_id:
                return
            messages = list(state.get("messages") or [])
            info = dict(state.get("memory_context") or {})
            values = info.get("settings")
            settings = MemorySettings.model_construct(**values) if values else None
            turn = turn_of(messages)
            with origin(source="node", job="profile", turn=turn, actor=ctx.user_id):
                provenance = current()
            thread = (config.get("configurable") or {}).get("thread_id")
            thread_id = str(thread) if thread else None
            target = store if store is not None else self.store
            plan = self._job_plan(target, ctx, messages, info, thread_id, settings, provenance)
            self._jobs.start((UserKey(ctx.org_id, ctx.user_id), thread_id), target, plan)
        except Exception:
            logger.warning("the profile consolidation could not start", exc_info=True)

    def wait_for_background(self, timeout: float | None = 30.0) -> bool:
        """Block until this profile's consolidations started by sync runs finish (at most
        `timeout` seconds); whether they all did."""
        return self._jobs.wait(timeout)

    async def await_background(self) -> None:
        """Await this profile's consolidations (tasks on this loop, threads of sync runs)."""
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
    ) -> Plan[None]:
        """One background consolidation: a failure is logged and a "failed" event, never
        raised."""
        try:
            if settings is None:
                settings = yield from self.settings_plan(ctx, store)
            if thread_id is not None and info.get(SEQ) is None and settings.context_management:
                return  # the thread's first turns are not journaled yet: a later job has them
            if thread_id is None or info.get(SEQ) is None:
                exchange = latest_exchange(messages)
                if exchange is not None:
                    result = yield from self.consolidate_plan(ctx, *exchange, settings, provenance)
                    self._report(result)
                return
            yield from self._catch_up_plan(ctx, messages, info, thread_id, settings, provenance)
        except Exception as exc:
            logger.warning("profile consolidation failed; the profile is unchanged", exc_info=True)
            _quiet_emit("failed", reason=f"{type(exc).__name__}: {exc}")

    @staticmethod
    def _report(result: Consolidation) -> None:
        operations = [{"op": op, "section": section} for op, section in result.operations]
        details = {"reason": result.reason} if result.reason else {}
        _quiet_emit(result.status, operations=operations, **details)

    def _catch_up_plan(
        self,
        ctx: MemoryContext,
        messages: list[BaseMessage],
        info: dict[str, Any],
        thread_id: str,
        settings: MemorySettings,
        provenance: Provenance,
    ) -> Plan[None]:
        """Consolidate the thread's exchanges from its cursor to the state's journal_seq."""
        namespace = profile_scope(ctx).namespace
        end = int(info[SEQ])
        seen: Seen | None = yield from self._profile_and_cursor_plan(ctx, thread_id)
        assert seen is not None
        read = seen[2]
        done = read.seq if read is not None else 0
        if not enablement(settings)[0]:
            if read is None or done < end:  # these exchanges stay out once it is back on
                yield from self._move_plan(namespace, thread_id, end, read)
            _quiet_emit("disabled", operations=[])
            return
        if done >= end:
            return  # consolidated already, or the turn is not journaled yet
        turn = cursors.turn_exchange(messages, info)
        if turn is not None and turn.start == done:
            todo = [turn]  # the normal case: the cursor is where this turn began
        else:
            entries = yield from tail_plan(thread_id, end, min(end - done, MAX_READ))
            todo = cursors.exchanges(entries, end)[-MAX_CATCH_UP:]
        for exchange in todo:
            try:
                result = yield from self.consolidate_plan(
                    ctx,
                    exchange.user,
                    exchange.assistant,
                    settings,
                    provenance,
                    (thread_id, exchange.end),
                    seen,
                )
            except Exception as exc:
                logger.warning(
                    "profile consolidation failed; the profile is unchanged", exc_info=True
                )
                _quiet_emit("failed", reason=f"{type(exc).__name__}: {exc}")
                if _store_failure(exc):
                    return  # the store's, not the exchange's: the next job tries again
                if not (yield from self._failed_plan(namespace, thread_id, exchange)):
                    return
                continue
            self._report(result)
            known, seen = (seen[2] if seen is not None else _UNREAD), None
            if result.status == "conflict":
                if not (yield from self._failed_plan(namespace, thread_id, exchange)):
                    return
            elif result.status in ("noop", "discarded"):
                yield from self._move_plan(namespace, thread_id, exchange.end, known)
            elif result.status == "disabled":
                return
        if not todo or todo[-1].end < end:  # what is left has no exchange to consolidate
            yield from self._move_plan(namespace, thread_id, end, _UNREAD)

    @staticmethod
    def _move_plan(
        namespace: tuple[str, ...],
        thread_id: str,
        seq: int,
        known: cursors.Cursor | object | None = _UNREAD,
    ) -> Plan[None]:
        """Move the thread's cursor alone to `seq`, unless it is there already (`known`: the
        cursor as just read, tried first without reading it again)."""
        for _ in range(MAX_ATTEMPTS):
            if isinstance(known, cursors.Cursor) or known is None:
                read, known = known, _UNREAD
            else:
                read = yield from cursors.read_plan(namespace, thread_id)
            if read is not None and read.seq >= seq:
                return
            if (yield from cursors.move_plan(namespace, thread_id, read, seq)):
                return

    def _failed_plan(
        self, namespace: tuple[str, ...], thread_id: str, exchange: cursors.Exchange
    ) -> Plan[bool]:
        """Count a failed attempt at an exchange on the cursor, left at the exchange so the
        next job retries it; after `max_failures` it is given up: the cursor moves past it.
        Whether it was given up (the job goes on with the next exchange); when the count
        cannot be written either (the store is down), the attempt is not counted."""
        try:
            return (yield from self._count_failure_plan(namespace, thread_id, exchange))
        except Exception:
            logger.warning("the failed profile consolidation could not be counted", exc_info=True)
            return False

    def _count_failure_plan(
        self, namespace: tuple[str, ...], thread_id: str, exchange: cursors.Exchange
    ) -> Plan[bool]:
        read = yield from cursors.read_plan(namespace, thread_id)
        if read is not None and read.seq > exchange.start:
            return False  # another worker got further
        failures = (read.failures if read is not None and read.seq == exchange.start else 0) + 1
        if failures < self.max_failures:
            yield from cursors.move_plan(namespace, thread_id, read, exchange.start, failures)
            return False
        logger.warning(
            "profile consolidation of thread %s gave up on the exchange at journal seq %d "
            "after %d failures",
            thread_id,
            exchange.start,
            failures,
        )
        yield from cursors.move_plan(namespace, thread_id, read, exchange.end)
        return True

    def _slot(self, seq: int) -> str:
        """The change-log key of the write numbered `seq`: a ring of `keep_changes` slots."""
        return f"{seq % self.keep_changes:06d}"

    def _log_plan(self, ctx: MemoryContext) -> Plan[list[Any]]:
        """Every item of the user's change log (at most `keep_changes`, a few more if it was
        kept longer before)."""
        namespace = (*profile_scope(ctx).namespace, CHANGES)
        return (yield from all_items_plan(namespace, page=LOG_PAGE))

    def changes_plan(self, ctx: MemoryContext, limit: Any) -> Plan[list[ProfileChange]]:
        """The plan behind changes."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise InvalidArgumentError(f"limit must be a whole number from 1, got {limit!r}")
        if not ctx.user_id:
            raise ScopeError("the profile's change log needs the user's user_id in the context")
        items = yield from self._log_plan(ctx)
        items.sort(key=lambda item: (str(item.value.get("at")), item.value.get("seq", 0)))
        found = [change for item in reversed(items) if (change := to_change(item.value))]
        return found[:limit]

    def changes(self, ctx: MemoryContext, limit: int = 50) -> list[ProfileChange]:
        """The caller's latest profile changes, newest first (at most `limit`)."""
        return run(self.store, self.changes_plan(ctx, limit))

    async def achanges(self, ctx: MemoryContext, limit: int = 50) -> list[ProfileChange]:
        """Async twin of changes."""
        return await arun(self.store, self.changes_plan(ctx, limit))

    def remove_bullets_plan(
        self, ctx: MemoryContext, bullets: Iterable[tuple[str, str]]
    ) -> Plan[Profile | None]:
        """Remove bullets, given as (section, bullet text), from the caller's profile with the
        compare-and-swap write a consolidation uses, recorded in the change log with the
        current provenance (a saved write counts in `turn_count`, which numbers the log);
        bullets no longer there are skipped. The profile as it is after, None without one."""
        if not ctx.user_id:
            raise ScopeError("the profile needs the user's user_id in the context")
        gone = set(bullets)
        namespace = profile_scope(ctx).namespace
        provenance = current(actor=ctx.user_id)
        for _ in range(MAX_ATTEMPTS):
            stored, version = yield from self._read_plan(ctx)
            if stored is None:
                return None
            kept = {s: tuple(b for b in stored.bullets(s) if (s, b) not in gone) for s in SECTIONS}
            new = stored.with_sections(kept)
            if new.same_content(stored):
                return stored
            now = self.clock()
            new = replace(
                new,
                last_updated=now.isoformat(timespec="seconds"),
                turn_count=stored.turn_count + 1,
            )
            record = change_record(now.isoformat(), new.turn_count, diff(stored, new), provenance)
            slot = PutOp((*namespace, CHANGES), self._slot(new.turn_count), record, index=False)
            if (yield PutIfVersion(namespace, KEY, {"text": render(new)}, version, (slot,))):
                return new
        raise ConflictError("the profile kept changing meanwhile; nothing was removed, try again")

    def remove_bullets(
        self, ctx: MemoryContext, bullets: Iterable[tuple[str, str]]
    ) -> Profile | None:
        """Remove (section, bullet text) bullets from the caller's profile, logged as a change."""
        return run(self.store, self.remove_bullets_plan(ctx, bullets))

    async def aremove_bullets(
        self, ctx: MemoryContext, bullets: Iterable[tuple[str, str]]
    ) -> Profile | None:
        """Async twin of remove_bullets."""
        return await arun(self.store, self.remove_bullets_plan(ctx, bullets))

    def _opt_out_plan(self, ctx: MemoryContext) -> Plan[str]:
        if not ctx.user_id:
            raise ScopeError("opting out needs the user's user_id in the context")
        store = self.store
        layered = self.source.for_store(store)
        yield from layered.update_plan("user", ctx, {"profile_user": False}, (), (), ())
        log = yield from self._log_plan(ctx)
        gone = [PutOp(item.namespace, item.key, None) for item in log]
        yield [PutOp(profile_scope(ctx).namespace, KEY, None), *gone]
        return "Context memory is off, and your saved profile has been permanently deleted."

    def opt_out(self, ctx: MemoryContext) -> str:
        """Turn context memory off for the user and permanently delete their profile."""
        return run(self.store, self._opt_out_plan(ctx))

    async def aopt_out(self, ctx: MemoryContext) -> str:
        """Async twin of opt_out."""
        return await arun(self.store, self._opt_out_plan(ctx))
