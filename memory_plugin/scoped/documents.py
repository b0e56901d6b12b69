"""The curated document: one Markdown document per scope that the agent owns and rewrites.

Every write is validated: past the soft limit it is saved with a warning; past the hard limit
the model first rewrites it shorter and the rewrite is validated again; what still does not
fit is refused and the previous document stays. Writes are versioned compare-and-swap, and
each saved version is kept in the scope's document history, written in the same transaction
as the document (a saved version never lacks its history entry). Restoring a version saves
its text as a new version through the same validated path.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.store.base import GetOp, Item, PutOp

from memory_plugin.backends.conditional import PutIfVersion, next_version
from memory_plugin.errors import ConflictError, MemoryWriteError
from memory_plugin.models.replies import RejectedReply, checked_rewrite
from memory_plugin.plans import ModelCall, Plan, all_items_plan
from memory_plugin.provenance import Provenance, provenance_of, stamped
from memory_plugin.provenance import current as current_provenance
from memory_plugin.safety import Visibility, screen, strip_control, visibility_of
from memory_plugin.scope import Scope
from memory_plugin.scoped.prompts import compression_messages
from memory_plugin.settings import MemorySettings

DOCUMENT = "document"
HISTORY = "document_history"
CURRENT = "current"
PAGE = 500


@dataclass(frozen=True)
class Document:
    """A saved version of a scope's curated document."""

    text: str
    version: int
    updated_at: str
    folded: tuple[str, ...] = ()
    provenance: Provenance | None = None


@dataclass(frozen=True)
class DocumentWrite:
    """The outcome of a saved write."""

    document: Document
    compressed: bool = False
    warnings: list[str] = field(default_factory=list)


def to_document(item: Item | None) -> Document | None:
    """The document stored in an item."""
    if item is None:
        return None
    value = item.value
    return Document(
        value["text"],
        value["version"],
        value["updated_at"],
        tuple(value["folded"]),
        provenance_of(value),
    )


def history_key(version: int) -> str:
    """The key of a version in the scope's document history."""
    return f"{version:08d}"


def read_plan(scope: Scope) -> Plan[Document | None]:
    """The scope's current document, None before the first write."""
    (item,) = yield [GetOp(scope.child(DOCUMENT), CURRENT)]
    return to_document(item)


def size_warning(text: str, settings: MemorySettings) -> str | None:
    """The soft-limit warning for a document of this size, if any."""
    if len(text) <= settings.document_soft_limit_chars:
        return None
    return (
        f"the memory document is {len(text):,} characters, over the soft limit of "
        f"{settings.document_soft_limit_chars:,}: condense it with update_memory soon"
    )


def _clean(text: Any, visibility: Visibility) -> str:
    if not isinstance(text, str):
        raise MemoryWriteError(f"the memory document must be text, got {type(text).__name__}")
    screen(text, "the memory document", visibility=visibility, lines=True)
    return strip_control(text, keep_newlines=True).strip()


def _compress_plan(
    text: str, settings: MemorySettings, model: BaseChatModel, visibility: Visibility
) -> Plan[str]:
    """The model's shorter rewrite of an over-long document, checked before it may be saved."""
    hard, target = settings.document_hard_limit_chars, settings.document_soft_limit_chars
    timeout = settings.compression_timeout_seconds
    try:
        reply = yield ModelCall(model, compression_messages(text, target), timeout=timeout)
    except Exception as exc:
        raise MemoryWriteError(
            f"the memory document is over the hard limit of {hard:,} characters and "
            f"compressing it failed ({type(exc).__name__}: {exc}); the previous document is kept"
        ) from exc
    try:
        rewrite = checked_rewrite(reply, previous=text, what="the compressed memory document")
        return _clean(rewrite, visibility)
    except RejectedReply as exc:
        raise RejectedReply(exc.what, f"{exc.reason}; the previous document is kept") from None


def _conflict(latest: Document | None) -> ConflictError:
    return ConflictError(
        f"the memory document changed since it was read (now version "
        f"{latest.version if latest else 0}); nothing was saved",
    )


def write_plan(
    scope: Scope,
    text: Any,
    settings: MemorySettings,
    model: BaseChatModel | None,
    *,
    expected: int | str | None = CURRENT,
    folded: tuple[str, ...] | None = None,
    now: datetime | None = None,
    provenance: Provenance | None = None,
) -> Plan[DocumentWrite]:
    """Validate (compressing past the hard limit), then save if the version still matches.

    `expected` is the version the writer read (None: there must be no document yet) or
    CURRENT to replace whatever is there now; a stale `expected` is refused before the text
    is screened or compressed. `folded` lists the notes this version folds in
    (nightly consolidation); other writes carry the previous list forward, so a crash between
    saving and marking those notes can still be finished by the next run. Raises
    MemoryWriteError when the text is refused and ConflictError when someone else saved
    first; nothing is written in either case. The version records `provenance` (by default
    the current one; a compressed write is marked job "compression" when no job is named).
    """
    origin = provenance or current_provenance()
    current = yield from read_plan(scope)
    if isinstance(expected, str):
        expected = current.version if current else None
    elif expected != (current.version if current else None):
        raise _conflict(current)
    visibility = visibility_of(scope.kind)
    cleaned = _clean(text, visibility)
    hard = settings.document_hard_limit_chars
    compressed = False
    if len(cleaned) > hard:
        if model is None:
            raise MemoryWriteError(
                f"the memory document is {len(cleaned):,} characters, over the hard limit of "
                f"{hard:,}, and no model is configured to compress it; shorten it and retry"
            )
        cleaned = yield from _compress_plan(cleaned, settings, model, visibility)
        compressed = True
        if len(cleaned) > hard:
            raise MemoryWriteError(
                f"the memory document is still {len(cleaned):,} characters after compression, "
                f"over the hard limit of {hard:,}; the previous document is kept"
            )
    if folded is None:
        folded = current.folded if current and current.version == expected else ()
    stamp = (now or datetime.now(UTC)).astimezone(UTC).isoformat()
    origin = replace(origin, at=stamp)
    if compressed and origin.job is None:
        origin = replace(origin, job="compression")
    value = stamped({"text": cleaned, "updated_at": stamp, "folded": list(folded)}, origin)
    version = next_version(expected)
    entry = PutOp(scope.child(HISTORY), history_key(version), {**value, "version": version})
    stored = yield PutIfVersion(scope.child(DOCUMENT), CURRENT, value, expected, also=(entry,))
    if stored is None:
        raise _conflict((yield from read_plan(scope)))
    document = Document(cleaned, stored["version"], stamp, folded, origin)
    warning = size_warning(cleaned, settings)
    return DocumentWrite(document, compressed, [warning] if warning else [])


def history_plan(scope: Scope) -> Plan[list[Document]]:
    """Every saved version of the scope's document, newest first."""
    found: dict[int, Document] = {}
    for item in (yield from all_items_plan(scope.child(HISTORY), page=PAGE)):
        if (document := to_document(item)) is not None:
            found[document.version] = document
    current = yield from read_plan(scope)
    if current is not None:
        found.setdefault(current.version, current)
    return sorted(found.values(), key=lambda document: document.version, reverse=True)


def restore_plan(
    scope: Scope,
    version: int,
    settings: MemorySettings,
    model: BaseChatModel | None,
    *,
    now: datetime | None = None,
    provenance: Provenance | None = None,
) -> Plan[DocumentWrite]:
    """Save the text of an earlier version as a new version (validated like any write)."""
    if isinstance(version, bool) or not isinstance(version, int) or version < 1:
        raise MemoryWriteError(f"a document version is a whole number from 1, got {version!r}")
    (item,) = yield [GetOp(scope.child(HISTORY), history_key(version))]
    old = to_document(item)
    if old is None:
        current = yield from read_plan(scope)
        if current is None or current.version != version:
            latest = current.version if current else 0
            raise MemoryWriteError(
                f"there is no version {version} of the memory document (latest: {latest})"
            )
        old = current
    return (yield from write_plan(scope, old.text, settings, model, now=now, provenance=provenance))
