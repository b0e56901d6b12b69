"""ProfileMemory: load and inject the user profile, consolidate it after each turn, opt out.

Consolidation runs in the background: the turn ends, and the next one starts, without waiting
for it; each thread's exchanges are consolidated exactly once, from the journal when a job did
not finish (see memory_plugin.profile.jobs and memory_plugin.profile.cursor).

The profile is a property of the user: one per user, shared by all their threads and every
space where it is enabled; only that user's runs read or write it, and it is never indexed
for search. The model cannot edit it while answering: there is no tool for it.

ProfileMemory composes its steps, each beside its policy: the rewrite of one exchange
(rewrite.py), the catch-up of a journaled thread from its cursor (catchup.py), the background
jobs (jobs.py) and the change log (log.py).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from dataclasses import replace
from typing import Any, Unpack

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import RunnableConfig
from langgraph.store.base import BaseStore, PutOp

from memory_plugin.base import MemoryService, ServiceOptions
from memory_plugin.blocks import PromptBlock
from memory_plugin.errors import ConflictError, ScopeError
from memory_plugin.events import emit
from memory_plugin.graphnode import State, plan_node
from memory_plugin.holdings import Outcome, Owner
from memory_plugin.holdings import Place as HeldPlace
from memory_plugin.models.maintenance import MaintenanceModel
from memory_plugin.plans import Plan, arun, run
from memory_plugin.profile import privacy
from memory_plugin.profile import stored as profiles
from memory_plugin.profile.budget import truncate
from memory_plugin.profile.catchup import MAX_FAILURES, CatchUp
from memory_plugin.profile.changes import ProfileChange
from memory_plugin.profile.document import SECTIONS, Profile
from memory_plugin.profile.enablement import enablement
from memory_plugin.profile.jobs import ConsolidationJobs, await_profiles, wait_for_profiles
from memory_plugin.profile.known import BLOCK, Known, block_text
from memory_plugin.profile.log import CHANGES, KEEP_CHANGES, ChangeLog
from memory_plugin.profile.naming import NAME
from memory_plugin.profile.privacy import HOLDING
from memory_plugin.profile.rewrite import Consolidation, Rewrite, ThreadCursor
from memory_plugin.profile.stored import KEY, MAX_ATTEMPTS, Seen
from memory_plugin.provenance import Provenance, current
from memory_plugin.scope import profile_scope
from memory_plugin.scope.context import MemoryContext
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import TokenCounter, counter_for

__all__ = [
    "CHANGES",
    "KEY",
    "MAX_FAILURES",
    "Consolidation",
    "ProfileMemory",
    "await_profiles",
    "enablement",
    "wait_for_profiles",
]
logger = logging.getLogger(__name__)


def _bullets(profile: Profile) -> tuple[str, ...]:
    """Every bullet of the profile as its block shows it."""
    return tuple(f"- {bullet}" for section in SECTIONS for bullet in profile.bullets(section))


class ProfileMemory(MemoryService):
    """The user profile as a prompt block source, a post-turn consolidation and an opt-out.

    Constructed like every memory kind (memory_plugin.base.MemoryService): `model`
    consolidates (the graph's maintenance model) unless the `maintenance_model` setting names
    another. Each saved write is recorded in the user's change log, of which the newest
    `keep_changes` are kept; `max_failures` failed consolidations in a row give an exchange up.
    """

    name = NAME
    place = "per_turn"

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
        if model_loader is not None:
            self.maintenance = MaintenanceModel(self.maintenance.default, model_loader)
        self.counter = counter or counter_for(self.maintenance.default)
        self.log = ChangeLog(keep_changes)
        self.rewrite = Rewrite(self.counter, self.clock, self.log)
        self.catch_up = CatchUp(self.consolidate_plan, max_failures)
        self.jobs = ConsolidationJobs(
            self.settings_plan, self.consolidate_plan, self.catch_up, Known(), self.counter
        )
        self.consolidate_profile = plan_node(
            self._consolidate_node, "consolidate_profile", membership=options.get("membership")
        )

    @property
    def keep_changes(self) -> int:
        """How many of the newest writes the change log keeps."""
        return self.log.keep

    @property
    def max_failures(self) -> int:
        """Failed consolidations of one exchange in a row that give it up."""
        return self.catch_up.max_failures

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

    def blocks_plan(
        self, ctx: MemoryContext, settings: MemorySettings | None = None
    ) -> Plan[list[PromptBlock]]:
        """The "What I know about you" block, or nothing (memory off, no user, no profile)."""
        if settings is None:
            settings = yield from self.settings_plan(ctx)
        if not enablement(settings)[0] or not ctx.user_id:
            return []
        profile, _ = yield from profiles.read_plan(ctx)
        if profile is None:
            return []
        fitted = truncate(profile, settings.profile_max_tokens, self.counter)
        emit(
            NAME,
            "loaded",
            "profile",
            turn_count=profile.turn_count,
            truncated=fitted.truncated,
        )
        text = block_text(fitted)
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
        return (yield from profiles.read_plan(ctx))[0]

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
        return (
            yield from self.rewrite.plan(
                ctx, user, assistant, model, settings, provenance, cursor, seen
            )
        )

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
        raises. `state` is the graph state at the end of the turn: its messages and
        memory_context, whose `journal_seq` is the journal's next seq after the final answer
        was journaled. Every exchange of the thread the profile has not seen yet is
        consolidated exactly once (memory_plugin.profile.jobs says how). Nothing without a
        user (memory is off for the run). `store` defaults to the profile's (the running
        graph's)."""
        try:
            if ctx.user_id:
                self.jobs.start(state, config, ctx, store if store is not None else self.store)
        except Exception:
            logger.warning("the profile consolidation could not start", exc_info=True)

    def wait_for_background(self, timeout: float | None = 30.0) -> bool:
        """Block until this profile's consolidations started by sync runs finish (at most
        `timeout` seconds); whether they all did."""
        return self.jobs.wait(timeout)

    async def await_background(self) -> None:
        """Await this profile's consolidations (tasks on this loop, threads of sync runs)."""
        await self.jobs.await_all()

    def changes_plan(self, ctx: MemoryContext, limit: Any) -> Plan[list[ProfileChange]]:
        """The plan behind changes."""
        return (yield from self.log.changes_plan(ctx, limit))

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
            stored, version = yield from profiles.read_plan(ctx)
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
            if (yield self.log.save(namespace, stored, new, version, provenance, now)):
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
        log = yield from self.log.items_plan(ctx)
        gone = [PutOp(item.namespace, item.key, None) for item in log]
        yield [PutOp(profile_scope(ctx).namespace, KEY, None), *gone]
        return "Context memory is off, and your saved profile has been permanently deleted."

    def opt_out(self, ctx: MemoryContext) -> str:
        """Turn context memory off for the user and permanently delete their profile."""
        return run(self.store, self._opt_out_plan(ctx))

    async def aopt_out(self, ctx: MemoryContext) -> str:
        """Async twin of opt_out."""
        return await arun(self.store, self._opt_out_plan(ctx))

    holdings = (HOLDING,)

    def places_plan(
        self, owner: Owner, needle: str, pattern: re.Pattern[str]
    ) -> Plan[list[HeldPlace]]:
        """The profile's bullets and change-log mentions holding the text (profile/privacy.py)."""
        return (yield from privacy.places_plan(self, owner, needle, pattern))

    def forget_places_plan(
        self, owner: Owner, places: list[HeldPlace], pattern: re.Pattern[str]
    ) -> Plan[list[Outcome]]:
        """Remove the bullets, then scrub the change log."""
        return (yield from privacy.forget_plan(self, owner, places, pattern))
