"""ScopedMemory: the Python API over curated documents and dated notes, sync and async."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.store.base import PutOp

from memory_plugin.base import MemoryService
from memory_plugin.blocks import PromptBlock
from memory_plugin.errors import MemoryWriteError, ScopeError
from memory_plugin.holdings import Outcome, Owner, Place
from memory_plugin.plans import Plan, arun, run
from memory_plugin.provenance import current
from memory_plugin.scope import Scope, readable_thread_scope, thread_scope
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.identity import Membership
from memory_plugin.scoped import forgetting
from memory_plugin.scoped.blocks import blocks_plan as scope_blocks_plan
from memory_plugin.scoped.blocks import recent_notes_plan
from memory_plugin.scoped.documents import (
    CURRENT,
    Document,
    DocumentWrite,
    history_plan,
    read_plan,
    restore_plan,
    write_plan,
)
from memory_plugin.scoped.naming import NAME
from memory_plugin.scoped.notes import (
    NOTE_INDEX,
    DayLike,
    Note,
    NotesPage,
    all_notes_plan,
    append_plan,
    get_note_plan,
    import_plan,
    key_argument,
    notes_page_plan,
    page_arguments,
    update_note_plan,
)
from memory_plugin.scoped.privacy import HOLDING
from memory_plugin.scoped.recall import Hit, recall_plan
from memory_plugin.scoped.rerank import rerank_plan
from memory_plugin.scoped.toolkit import given, memory_tools
from memory_plugin.settings import LayeredSettings, MemorySettings
from memory_plugin.tooling import clamp_k


class ScopedMemory(MemoryService):
    """Curated documents and dated notes in the scope the run's context selects.

    A private thread uses the caller's personal scope, a shared thread its workspace's team
    scope. `model` (or the `maintenance_model` setting) compresses documents that would cross
    the hard limit. Constructed like every memory kind (memory_plugin.base.MemoryService).
    """

    name = NAME
    place = "per_turn"
    obeys_memory_off = True
    over_mcp = True

    def tools(self, membership: Membership | None) -> list[BaseTool]:
        """remember, update_memory and recall over this scoped memory."""
        return memory_tools(given(self), membership)

    @property
    def model(self) -> BaseChatModel | None:
        """The model that compresses documents when no `maintenance_model` setting names one."""
        return self.maintenance.default

    @model.setter
    def model(self, value: BaseChatModel | None) -> None:
        self.maintenance.default = value

    @property
    def settings(self) -> LayeredSettings:
        """The layered settings over this store."""
        return self.layered

    @property
    def semantic(self) -> bool:
        """Whether notes get a copy in the store's vector index."""
        return getattr(self.store, "index_config", True) is not None

    def _on_plan(self, ctx: MemoryContext) -> Plan[MemorySettings]:
        """The scope's settings; refused when scoped memory is switched off for it."""
        settings = yield from self.settings_plan(ctx)
        if not settings.scoped_memory:
            raise ScopeError("scoped memory is switched off here (setting scoped_memory)")
        return settings

    def remember_plan(self, ctx: MemoryContext, text: Any) -> Plan[Note]:
        """The plan behind remember (and the `remember` tool)."""
        settings = yield from self._on_plan(ctx)
        scope = thread_scope(self.member(ctx))
        limit, origin = settings.note_max_chars, current(actor=ctx.user_id)
        return (yield from append_plan(scope, text, limit, self.clock(), self.semantic, origin))

    def remember(self, ctx: MemoryContext, text: str) -> Note:
        """Append one note to the thread's scope."""
        return run(self.store, self.remember_plan(ctx, text))

    async def aremember(self, ctx: MemoryContext, text: str) -> Note:
        """Async twin of remember."""
        return await arun(self.store, self.remember_plan(ctx, text))

    def _import(self, ctx: MemoryContext, notes: Iterable[tuple[DayLike, str]]) -> Plan[list[Note]]:
        settings = yield from self._on_plan(ctx)
        scope = thread_scope(self.member(ctx))
        origin = current(actor=ctx.user_id)
        plan = import_plan(scope, notes, settings.note_max_chars, self.semantic, origin)
        return (yield from plan)

    def import_notes(self, ctx: MemoryContext, notes: Iterable[tuple[DayLike, str]]) -> list[Note]:
        """Append (day, text) notes, each written on its own day (a date, a datetime or an ISO
        date string), in order; every note is checked as remember checks it before any is
        written."""
        return run(self.store, self._import(ctx, notes))

    async def aimport_notes(
        self, ctx: MemoryContext, notes: Iterable[tuple[DayLike, str]]
    ) -> list[Note]:
        """Async twin of import_notes."""
        return await arun(self.store, self._import(ctx, notes))

    def read_document_plan(self, ctx: MemoryContext) -> Plan[Document | None]:
        """The plan behind read_document."""
        scope = readable_thread_scope(self.member(ctx))
        return (yield from read_plan(scope)) if scope else None

    def read_document(self, ctx: MemoryContext) -> Document | None:
        """The scope's curated document, None before the first write."""
        return run(self.store, self.read_document_plan(ctx))

    async def aread_document(self, ctx: MemoryContext) -> Document | None:
        """Async twin of read_document."""
        return await arun(self.store, self.read_document_plan(ctx))

    def write_document_plan(
        self, ctx: MemoryContext, text: Any, expected: int | str | None
    ) -> Plan[DocumentWrite]:
        """The plan behind write_document (and the `update_memory` tool)."""
        settings = yield from self._on_plan(ctx)
        scope = thread_scope(self.member(ctx))
        model = self.maintenance(settings)
        origin = current(actor=ctx.user_id)
        plan = write_plan(
            scope, text, settings, model, expected=expected, now=self.clock(), provenance=origin
        )
        return (yield from plan)

    def write_document(
        self, ctx: MemoryContext, text: str, *, expected_version: int | str | None = CURRENT
    ) -> DocumentWrite:
        """Replace the document whole; pass the version you read to refuse a lost update."""
        return run(self.store, self.write_document_plan(ctx, text, expected_version))

    async def awrite_document(
        self, ctx: MemoryContext, text: str, *, expected_version: int | str | None = CURRENT
    ) -> DocumentWrite:
        """Async twin of write_document."""
        return await arun(self.store, self.write_document_plan(ctx, text, expected_version))

    def _history(self, ctx: MemoryContext) -> Plan[list[Document]]:
        scope = readable_thread_scope(self.member(ctx))
        return (yield from history_plan(scope)) if scope else []

    def history(self, ctx: MemoryContext) -> list[Document]:
        """Every saved version of the scope's document, newest first."""
        return run(self.store, self._history(ctx))

    async def ahistory(self, ctx: MemoryContext) -> list[Document]:
        """Async twin of history."""
        return await arun(self.store, self._history(ctx))

    def _restore(self, ctx: MemoryContext, version: int) -> Plan[DocumentWrite]:
        effective = yield from self.settings.effective_plan(ctx)
        scope = thread_scope(self.member(ctx))
        model = self.maintenance(effective.values)
        origin = current(actor=ctx.user_id)
        plan = restore_plan(
            scope, version, effective.values, model, now=self.clock(), provenance=origin
        )
        return (yield from plan)

    def restore(self, ctx: MemoryContext, version: int) -> DocumentWrite:
        """Save the text of an earlier version as the new current version."""
        return run(self.store, self._restore(ctx, version))

    async def arestore(self, ctx: MemoryContext, version: int) -> DocumentWrite:
        """Async twin of restore."""
        return await arun(self.store, self._restore(ctx, version))

    def recall_plan(self, ctx: MemoryContext, query: str, k: int | None) -> Plan[list[Hit]]:
        """The plan behind recall (and the `recall` tool)."""
        values = yield from self._on_plan(ctx)
        count = clamp_k(k, values.recall_default_k, values.recall_max_k)
        scope = readable_thread_scope(self.member(ctx))
        if scope is None:
            return []
        wanted = max(count, values.recall_rerank_candidates) if values.recall_rerank else count
        hits = yield from recall_plan(scope, query, wanted, candidates=values.recall_candidates)
        ranked = yield from rerank_plan(query, hits, values, self.maintenance)
        return ranked[:count]

    def recall(self, ctx: MemoryContext, query: str, k: int | None = None) -> list[Hit]:
        """The notes that best match a query (default k from settings, at most recall_max_k),
        reordered by the reranker when the recall_rerank setting is on."""
        return run(self.store, self.recall_plan(ctx, query, k))

    async def arecall(self, ctx: MemoryContext, query: str, k: int | None = None) -> list[Hit]:
        """Async twin of recall."""
        return await arun(self.store, self.recall_plan(ctx, query, k))

    def list_notes_plan(self, ctx: MemoryContext, days: int | None) -> Plan[list[Note]]:
        """The plan behind list_notes."""
        scope = readable_thread_scope(self.member(ctx))
        if scope is None:
            return []
        if days is None:
            return (yield from all_notes_plan(scope))
        return (yield from recent_notes_plan(scope, days, self.clock()))

    def list_notes(self, ctx: MemoryContext, *, days: int | None = None) -> list[Note]:
        """The scope's live notes: all of them, or those of the last `days` UTC days."""
        return run(self.store, self.list_notes_plan(ctx, days))

    async def alist_notes(self, ctx: MemoryContext, *, days: int | None = None) -> list[Note]:
        """Async twin of list_notes."""
        return await arun(self.store, self.list_notes_plan(ctx, days))

    def _page(self, ctx: MemoryContext, before: str | None, days: int) -> Plan[NotesPage]:
        cursor, count = page_arguments(before, days)
        scope = readable_thread_scope(self.member(ctx))
        if scope is None:
            return NotesPage([], None)
        return (yield from notes_page_plan(scope, cursor, count))

    def notes_page(
        self, ctx: MemoryContext, *, before: str | None = None, days: int = 3
    ) -> NotesPage:
        """The live notes of the `days` newest days that have notes (1 to 31), before the
        ISO date `before` (exclusive; None: from the newest); pass the page's `older` as
        `before` for the next page."""
        return run(self.store, self._page(ctx, before, days))

    async def anotes_page(
        self, ctx: MemoryContext, *, before: str | None = None, days: int = 3
    ) -> NotesPage:
        """Async twin of notes_page."""
        return await arun(self.store, self._page(ctx, before, days))

    def _get_note(self, ctx: MemoryContext, key: str) -> Plan[Note | None]:
        checked = key_argument(key)
        scope = readable_thread_scope(self.member(ctx))
        return (yield from get_note_plan(scope, checked)) if scope else None

    def get_note(self, ctx: MemoryContext, key: str) -> Note | None:
        """One live note of the scope by key; None when there is none or it was deleted."""
        return run(self.store, self._get_note(ctx, key))

    async def aget_note(self, ctx: MemoryContext, key: str) -> Note | None:
        """Async twin of get_note."""
        return await arun(self.store, self._get_note(ctx, key))

    def _deletable_scope(self, ctx: MemoryContext) -> Scope:
        scope = thread_scope(self.member(ctx))
        if scope.kind == "team" and not ctx.user_id:
            raise ScopeError("deleting a team note needs the acting user_id in the context")
        return scope

    def delete_note_plan(self, ctx: MemoryContext, key: str) -> Plan[None]:
        """The plan behind delete_note: the tombstone records who deleted the note, when, and
        the delete's provenance."""
        key = key_argument(key)
        scope = self._deletable_scope(ctx)
        change = {
            "deleted": True,
            "text": "",
            "deleted_by": ctx.user_id,
            "deleted_at": self.clock().isoformat(),
            "deletion": current(actor=ctx.user_id).to_json(),
        }
        if (yield from update_note_plan(scope, key, change)) is None:
            raise MemoryWriteError(f"there is no note {key!r} in this memory")
        yield [PutOp(scope.child(NOTE_INDEX), key, None)]

    def delete_note(self, ctx: MemoryContext, key: str) -> None:
        """Delete one note (it stays as a tombstone holding its position)."""
        run(self.store, self.delete_note_plan(ctx, key))

    async def adelete_note(self, ctx: MemoryContext, key: str) -> None:
        """Async twin of delete_note."""
        await arun(self.store, self.delete_note_plan(ctx, key))

    def blocks_plan(
        self, ctx: MemoryContext, settings: MemorySettings | None = None
    ) -> Plan[list[PromptBlock]]:
        """The plan behind prompt_blocks: makes ScopedMemory a BlockSource."""
        if settings is None:
            effective = yield from self.settings.effective_plan(ctx)
            settings = effective.values
        if not settings.scoped_memory:
            return []
        scope = readable_thread_scope(self.member(ctx))
        if scope is None:
            return []
        return (yield from scope_blocks_plan(scope, settings, self.clock()))

    def prompt_blocks(self, ctx: MemoryContext) -> list[PromptBlock]:
        """The document and recent-notes blocks to inject this turn."""
        return run(self.store, self.blocks_plan(ctx))

    async def aprompt_blocks(self, ctx: MemoryContext) -> list[PromptBlock]:
        """Async twin of prompt_blocks."""
        return await arun(self.store, self.blocks_plan(ctx))

    holdings = (HOLDING,)

    def places_plan(self, owner: Owner, needle: str, pattern: re.Pattern[str]) -> Plan[list[Place]]:
        """Where the owner's personal and team memory holds the text (scoped/forgetting.py)."""
        return (yield from forgetting.places_plan(self, owner, needle, pattern))

    def forget_places_plan(
        self, owner: Owner, places: list[Place], pattern: re.Pattern[str]
    ) -> Plan[list[Outcome]]:
        """Delete the notes, remove the document lines, scrub the saved versions."""
        return (yield from forgetting.forget_plan(self, owner, places, pattern))
