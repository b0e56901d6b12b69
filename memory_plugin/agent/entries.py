"""Agent memory entries in the store: validation, writes, reads and forgetting, as plans.

Private entries live in the agent's memory for one user, shared and read_only entries in the
agent's shared memory. The model never changes or forgets a read_only entry.
"""

from __future__ import annotations

import logging
import math
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Literal, get_args

from langgraph.store.base import GetOp, Item, PutOp

from memory_plugin.agent.sensitive import sensitive
from memory_plugin.errors import MemoryWriteError, ScopeError
from memory_plugin.plans import Plan, all_items_plan
from memory_plugin.provenance import Provenance, current, provenance_of, stamped
from memory_plugin.safety import refuse_unstorable, screen, strip_control
from memory_plugin.scope import Scope, agent_scope
from memory_plugin.scope.context import MemoryContext

logger = logging.getLogger(__name__)
Visibility = Literal["private", "shared", "read_only"]
VISIBILITIES: tuple[str, ...] = get_args(Visibility)
ENTRIES = "entries"
PAGE = 200
KEY_MAX, CATEGORY_MAX, CONTENT_MAX = 120, 60, 2_000


@dataclass(frozen=True)
class Entry:
    """One agent memory entry."""

    key: str
    content: str
    category: str
    visibility: Visibility
    importance: float
    updated_at: str
    expires_at: str | None = None
    provenance: Provenance | None = None

    def expired(self, now: datetime) -> bool:
        """Whether the entry's expiry has passed."""
        return self.expires_at is not None and datetime.fromisoformat(self.expires_at) <= now

    def render(self) -> str:
        """One line for the model: key, category, visibility, importance and content."""
        return (
            f"- [{self.key}] ({self.category}, {self.visibility}, "
            f"importance {self.importance:.2f}) {self.content}"
        )


def _text(
    value: Any, what: str, limit: int, *, multiline: bool, screened_as: str | None = None
) -> str:
    """The text stripped of control characters; screened as given first (as `screened_as`)."""
    if not isinstance(value, str):
        raise MemoryWriteError(f"{what} must be text, got {type(value).__name__}")
    refuse_unstorable(value, what)
    if screened_as is not None:
        screen(value, screened_as)
    text = strip_control(value, keep_newlines=multiline).strip()
    if not text:
        raise MemoryWriteError(f"{what} cannot be empty")
    if len(text) > limit:
        raise MemoryWriteError(f"{what} is at most {limit:,} characters (got {len(text):,})")
    return text


def _importance(value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise MemoryWriteError(f"importance must be a number from 0 to 1, got {value!r}")
    if not 0.0 <= value <= 1.0:
        raise MemoryWriteError(f"importance must be from 0 to 1, got {value}")
    return float(value)


def new_entry(
    ctx: MemoryContext,
    key: Any,
    content: Any,
    category: Any,
    visibility: Any,
    importance: Any,
    expires_at: datetime | None,
    now: datetime,
) -> Entry:
    """A validated, screened entry; credentials and personal data force private visibility
    and are refused when there is no user to keep them private for."""
    if visibility not in VISIBILITIES:
        raise MemoryWriteError(f"visibility must be one of {', '.join(VISIBILITIES)}")
    entry = Entry(
        _text(key, "the key", KEY_MAX, multiline=False, screened_as="the entry key"),
        _text(content, "the content", CONTENT_MAX, multiline=True, screened_as="the entry"),
        _text(category, "the category", CATEGORY_MAX, multiline=False),
        visibility,
        _importance(importance),
        now.isoformat(),
        None if expires_at is None else expires_at.isoformat(),
    )
    if expires_at is not None and expires_at <= now:
        raise MemoryWriteError("expires_at must be in the future")
    found = sensitive(f"{entry.key}\n{entry.content}")
    if found and visibility != "private":
        if not ctx.user_id:
            raise MemoryWriteError(
                f"the entry holds {found}, which can only be kept private to a user, "
                "and this run has no user_id"
            )
        entry = Entry(**{**entry.__dict__, "visibility": "private"})
    return entry


def expiry(days: Any, now: datetime) -> datetime | None:
    """The expiry `days` from now (None: never); refused unless a positive number."""
    if days is None:
        return None
    if isinstance(days, bool) or not isinstance(days, int | float) or not 0 < days <= 36_500:
        raise MemoryWriteError(f"expires_in_days must be a positive number of days, got {days!r}")
    return now + timedelta(days=days)


def scope_for(ctx: MemoryContext, visibility: Visibility) -> Scope:
    """The scope an entry of this visibility lives in."""
    return agent_scope(ctx, private=visibility == "private")


def readable_scopes(ctx: MemoryContext) -> list[Scope]:
    """The agent's shared scope, and the caller's private one when there is a user."""
    if not ctx.agent_id:
        return []
    scopes = [agent_scope(ctx, private=False)]
    if ctx.user_id:
        try:
            scopes.insert(0, agent_scope(ctx, private=True))
        except ScopeError:
            logger.info("private agent memory not readable from another user's thread")
    return scopes


def to_entry(item: Item | None) -> Entry | None:
    """The entry stored in an item, None for a missing one or a tombstone."""
    if item is None or not item.value or item.value.get("deleted"):
        return None
    v = item.value
    return Entry(
        item.key,
        v["content"],
        v["category"],
        v["visibility"],
        float(v["importance"]),
        v["updated_at"],
        v.get("expires_at"),
        provenance_of(v),
    )


def list_plan(scopes: list[Scope], now: datetime) -> Plan[list[Entry]]:
    """Every live, unexpired entry of the scopes (the first scope wins a shared key)."""
    found: dict[str, Entry] = {}
    for scope in scopes:
        items = yield from all_items_plan(scope.child(ENTRIES), page=PAGE)
        for item in items:
            entry = to_entry(item)
            if entry is not None and not entry.expired(now) and entry.key not in found:
                found[entry.key] = entry
    return list(found.values())


def _read_only(ctx: MemoryContext, key: str) -> Plan[bool]:
    (item,) = yield [GetOp(agent_scope(ctx, private=False).child(ENTRIES), key)]
    entry = to_entry(item)
    return entry is not None and entry.visibility == "read_only"


def put_plan(
    ctx: MemoryContext,
    entry: Entry,
    semantic: bool,
    *,
    model: bool,
    provenance: Provenance | None = None,
) -> Plan[Entry]:
    """Store the entry under its key (replacing the previous one) with its provenance (by
    default the current one); the model (`model`) can neither create nor overwrite a
    read_only entry."""
    origin = provenance or current(actor=ctx.user_id)
    if model and (entry.visibility == "read_only" or (yield from _read_only(ctx, entry.key))):
        raise MemoryWriteError(f"entry {entry.key!r} is read-only; it cannot be changed")
    fields = {k: v for k, v in entry.__dict__.items() if k not in ("key", "provenance")}
    value = stamped({**fields, "text": f"{entry.key}: {entry.content}"}, origin)
    ns = scope_for(ctx, entry.visibility).child(ENTRIES)
    yield [PutOp(ns, entry.key, value, index=["text"] if semantic else False)]
    return replace(entry, provenance=origin)


def forget_plan(
    ctx: MemoryContext, key: Any, *, model: bool, visibility: Any = None
) -> Plan[Visibility]:
    """Forget exactly one entry: the one under `key` with `visibility`, by default the one the
    caller sees (their private entry before the agent's shared one); its visibility. It
    leaves a tombstone at its key (who deleted it, when, the delete's provenance; no content),
    which keeps an import from bringing it back. A read_only entry is refused to the model; an
    unknown key or visibility is an error."""
    name = _text(key, "the key", KEY_MAX, multiline=False)
    if visibility is not None and visibility not in VISIBILITIES:
        raise MemoryWriteError(f"visibility must be one of {', '.join(VISIBILITIES)}")
    scopes = readable_scopes(ctx)
    if not scopes:
        raise ScopeError("agent memory needs agent_id in the run context, and there is none")
    items = yield [GetOp(scope.child(ENTRIES), name) for scope in scopes]
    hits = [
        (scope, entry)
        for scope, item in zip(scopes, items, strict=True)
        if (entry := to_entry(item)) is not None
        and (visibility is None or entry.visibility == visibility)
    ]
    if not hits:
        which = "" if visibility is None else f"{visibility} "
        raise MemoryWriteError(f"there is no {which}entry {name!r} in agent memory")
    scope, entry = hits[0]
    if model and entry.visibility == "read_only":
        raise MemoryWriteError(f"entry {name!r} is read-only; it cannot be forgotten")
    deletion = current(actor=ctx.user_id)
    tombstone = {
        "deleted": True,
        "deleted_by": ctx.user_id,
        "deleted_at": deletion.at,
        "deletion": deletion.to_json(),
    }
    yield [PutOp(scope.child(ENTRIES), name, None)]
    yield [PutOp(scope.child(ENTRIES), name, tombstone, index=False)]
    return entry.visibility
