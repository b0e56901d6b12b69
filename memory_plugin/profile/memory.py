"""ProfileMemory: load and inject the user profile, consolidate it after each turn, opt out.

The profile is a property of the user: one per user, shared by all their threads and every
space where it is enabled; only that user's runs read or write it, and it is never indexed
for search. The model cannot edit it while answering: there is no tool for it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, Literal

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_store
from langgraph.store.base import BaseStore, GetOp, PutOp, SearchOp

from memory_plugin.blocks import PromptBlock
from memory_plugin.context import MemoryContext
from memory_plugin.errors import InvalidArgumentError, ScopeError
from memory_plugin.events import emit
from memory_plugin.graphnode import State, plan_node
from memory_plugin.identity import Membership
from memory_plugin.maintenance import MaintenanceModel, maintenance_of
from memory_plugin.plans import ModelCall, Plan, PutIfVersion, arun, run
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
    Profile,
    ProfileFormatError,
    parse,
    render,
)
from memory_plugin.profile.guard import check_consolidation, proposed
from memory_plugin.profile.prompts import NOOP, consolidation_messages
from memory_plugin.provenance import Provenance, current, origin, turn_of
from memory_plugin.replies import RejectedReply, reply_text
from memory_plugin.scope import profile_scope
from memory_plugin.settings import MemorySettings, SettingsCache
from memory_plugin.tokens import TokenCounter, counter_for

logger = logging.getLogger(__name__)
KEY = "memory.md"
CHANGES = "changes"
KEEP_CHANGES = 100
BLOCK = "user_profile"
MAX_ATTEMPTS = 10
LOG_PAGE = 500
INSTRUCTION = (
    "## What I know about you\n"
    "Durable context about the user from earlier conversations. Treat it as background: adapt "
    "your tone, examples and depth to it, and let what the user says now take precedence."
)
Status = Literal["updated", "noop", "discarded", "disabled", "conflict"]


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


def latest_exchange(messages: list[BaseMessage]) -> tuple[str, str] | None:
    """The last user message and the final assistant answer after it."""
    answer = None
    for message in reversed(messages):
        if answer is None and isinstance(message, AIMessage) and not message.tool_calls:
            answer = message.text
        elif answer is not None and isinstance(message, HumanMessage):
            return message.text, answer
    return None


def _stored(item: Any, user_id: str) -> tuple[Profile | None, int | None]:
    if item is None:
        return None, None
    try:
        return parse(item.value["text"]), item.value["version"]
    except ProfileFormatError:
        logger.warning("stored profile of %s is malformed; rebuilding it", user_id)
        return None, item.value["version"]


class ProfileMemory:
    """The user profile as a prompt block source, a post-turn consolidation and an opt-out.

    `model` consolidates (the graph's maintenance model, see memory_plugin.maintenance); the
    `maintenance_model` setting names another. `store` defaults to the running graph's store;
    `defaults` are the platform defaults in code, `settings` a settings source shared with
    the graph's other memory kinds; `membership` checks the workspace a run names. Each saved
    write is recorded in the user's change log, of which the newest `keep_changes` are kept.
    """

    def __init__(
        self,
        store: BaseStore | None = None,
        *,
        model: BaseChatModel | MaintenanceModel | None = None,
        defaults: MemorySettings | None = None,
        settings: SettingsCache | None = None,
        counter: TokenCounter | None = None,
        clock: Callable[[], datetime] = lambda: datetime.now(UTC),
        model_loader: Callable[[str], BaseChatModel] | None = None,
        membership: Membership | None = None,
        keep_changes: int = KEEP_CHANGES,
    ) -> None:
        if isinstance(keep_changes, bool) or not isinstance(keep_changes, int) or keep_changes < 1:
            raise ValueError(f"keep_changes must be a whole number from 1, got {keep_changes!r}")
        self.keep_changes = keep_changes
        self._store = store
        self.maintenance = maintenance_of(model)
        if model_loader is not None:
            self.maintenance = MaintenanceModel(self.maintenance.default, model_loader)
        self.counter = counter or counter_for(self.maintenance.default)
        self.clock = clock
        self._settings = settings or SettingsCache(defaults)
        self.consolidate_profile = plan_node(
            self._consolidate_node, "consolidate_profile", membership=membership
        )

    @property
    def model(self) -> BaseChatModel | None:
        """The model that consolidates when no `maintenance_model` setting names one."""
        return self.maintenance.default

    @model.setter
    def model(self, value: BaseChatModel | None) -> None:
        self.maintenance.default = value

    @property
    def store(self) -> BaseStore:
        """The store given, else the running graph's."""
        return self._store if self._store is not None else get_store()

    def _settings_plan(self, ctx: MemoryContext) -> Plan[MemorySettings]:
        effective = yield from self._settings.for_store(self.store).effective_plan(ctx)
        return effective.values

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
            settings = yield from self._settings_plan(ctx)
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
        return [PromptBlock(BLOCK, "per_turn", text)]

    def prompt_blocks(self, ctx: MemoryContext) -> list[PromptBlock]:
        """The profile block to inject this turn."""
        return run(self.store, self.blocks_plan(ctx))

    async def aprompt_blocks(self, ctx: MemoryContext) -> list[PromptBlock]:
        """Async twin of prompt_blocks."""
        return await arun(self.store, self.blocks_plan(ctx))

    def read(self, ctx: MemoryContext) -> Profile | None:
        """The caller's profile, None if there is none."""
        return run(self.store, self._read_plan(ctx))[0]

    async def aread(self, ctx: MemoryContext) -> Profile | None:
        """Async twin of read."""
        return (await arun(self.store, self._read_plan(ctx)))[0]

    def consolidate_plan(
        self,
        ctx: MemoryContext,
        user: str,
        assistant: str,
        settings: MemorySettings | None = None,
        provenance: Provenance | None = None,
    ) -> Plan[Consolidation]:
        """Ask the model for NOOP or a rewritten profile after one exchange, check the rewrite,
        and save it with compare-and-swap, with its change-log record (`provenance`, by default
        the current one); on a concurrent change this run's changes are applied again to the
        newer profile, without another consolidation call."""
        provenance = provenance or current(job="profile", actor=ctx.user_id)
        if settings is None:
            settings = yield from self._settings_plan(ctx)
        if not enablement(settings)[0] or not ctx.user_id:
            return Consolidation("disabled")
        model = self._model_for(settings)
        timeout = settings.profile_timeout_seconds
        namespace = profile_scope(ctx).namespace
        stored, version = yield from self._read_plan(ctx)
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
            saved = yield PutIfVersion(namespace, KEY, {"text": render(new)}, version, (slot,))
            if saved is not None:
                return Consolidation("updated", new, tuple(changes(stored, new)))
            logger.info("profile of %s changed meanwhile; applying this turn again", ctx.user_id)
            stored, version = yield from self._read_plan(ctx)
            base = stored or Profile(ctx.user_id, SCHEMA_VERSION).with_sections({})
            rewrite = reapply(delta, base)
            if rewrite.same_content(base):
                return Consolidation("noop", stored)
        return Consolidation("conflict", None, reason="the profile kept changing meanwhile")

    def consolidate(self, ctx: MemoryContext, user: str, assistant: str) -> Consolidation:
        """Consolidate one exchange into the caller's profile."""
        return run(self.store, self.consolidate_plan(ctx, user, assistant))

    async def aconsolidate(self, ctx: MemoryContext, user: str, assistant: str) -> Consolidation:
        """Async twin of consolidate."""
        return await arun(self.store, self.consolidate_plan(ctx, user, assistant))

    def _consolidate_node(
        self, state: State, config: RunnableConfig, ctx: MemoryContext
    ) -> Plan[State]:
        """Post-turn node: consolidate the latest exchange; never touches the messages, and a
        failure only logs (the answer is already out). Nothing without a user (load_memory
        said memory is off)."""
        exchange = latest_exchange(state["messages"])
        if exchange is None or not ctx.user_id:
            return {}
        values = (state.get("memory_context") or {}).get("settings")
        settings = MemorySettings.model_construct(**values) if values else None
        turn = turn_of(state["messages"])
        with origin(source="node", job="profile", turn=turn, actor=ctx.user_id):
            provenance = current()
        try:
            result = yield from self.consolidate_plan(ctx, *exchange, settings, provenance)
        except Exception as exc:
            logger.warning("profile consolidation failed; the profile is unchanged", exc_info=True)
            emit("profile", "failed", "profile", reason=f"{type(exc).__name__}: {exc}")
            return {}
        operations = [{"op": op, "section": section} for op, section in result.operations]
        details = {"reason": result.reason} if result.reason else {}
        emit("profile", result.status, "profile", operations=operations, **details)
        return {}

    def _slot(self, seq: int) -> str:
        """The change-log key of the write numbered `seq`: a ring of `keep_changes` slots."""
        return f"{seq % self.keep_changes:06d}"

    def _log_plan(self, ctx: MemoryContext) -> Plan[list[Any]]:
        """Every item of the user's change log (at most `keep_changes`, a few more if it was
        kept longer before)."""
        namespace = (*profile_scope(ctx).namespace, CHANGES)
        items: list[Any] = []
        while True:
            (page,) = yield [SearchOp(namespace, limit=LOG_PAGE, offset=len(items))]
            items.extend(page)
            if len(page) < LOG_PAGE:
                return items

    def _changes_plan(self, ctx: MemoryContext, limit: Any) -> Plan[list[ProfileChange]]:
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
        return run(self.store, self._changes_plan(ctx, limit))

    async def achanges(self, ctx: MemoryContext, limit: int = 50) -> list[ProfileChange]:
        """Async twin of changes."""
        return await arun(self.store, self._changes_plan(ctx, limit))

    def _opt_out_plan(self, ctx: MemoryContext) -> Plan[str]:
        if not ctx.user_id:
            raise ScopeError("opting out needs the user's user_id in the context")
        store = self.store
        layered = self._settings.for_store(store)
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
