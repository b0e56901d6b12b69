"""The curated document: one Markdown document per scope that the agent owns and rewrites.

Every write is validated: past the soft limit it is saved with a warning; past the hard limit
the model first rewrites it shorter and the rewrite is validated again; what still does not
fit is refused and the previous document stays. Writes are versioned compare-and-swap, and
each saved version is kept in the scope's document history.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from langchain_core.language_models import BaseChatModel
from langgraph.store.base import GetOp, Item, PutOp

from memory_plugin.errors import ConflictError, MemoryWriteError
from memory_plugin.plans import ModelCall, Plan, PutIfVersion
from memory_plugin.replies import reply_text
from memory_plugin.safety import screen, strip_control
from memory_plugin.scope import Scope
from memory_plugin.scoped.prompts import compression_messages
from memory_plugin.settings import MemorySettings

DOCUMENT = "document"
HISTORY = "document_history"
CURRENT = "current"


@dataclass(frozen=True)
class Document:
    """A saved version of a scope's curated document."""

    text: str
    version: int
    updated_at: str
    folded: tuple[str, ...] = ()


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
    return Document(value["text"], value["version"], value["updated_at"], tuple(value["folded"]))


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


def _clean(text: Any) -> str:
    if not isinstance(text, str):
        raise MemoryWriteError(f"the memory document must be text, got {type(text).__name__}")
    cleaned = strip_control(text, keep_newlines=True).strip()
    screen(cleaned, "the memory document")
    return cleaned


def write_plan(
    scope: Scope,
    text: Any,
    settings: MemorySettings,
    model: BaseChatModel | None,
    *,
    expected: int | str | None = CURRENT,
    folded: tuple[str, ...] | None = None,
    now: datetime | None = None,
) -> Plan[DocumentWrite]:
    """Validate (compressing past the hard limit), then save if the version still matches.

    `expected` is the version the writer read (None: there must be no document yet) or
    CURRENT to replace whatever is there now. `folded` lists the notes this version folds in
    (nightly consolidation); other writes carry the previous list forward, so a crash between
    saving and marking those notes can still be finished by the next run. Raises
    MemoryWriteError when the text is refused and ConflictError when someone else saved
    first; nothing is written in either case.
    """
    cleaned = _clean(text)
    hard = settings.document_hard_limit_chars
    compressed = False
    if len(cleaned) > hard:
        if model is None:
            raise MemoryWriteError(
                f"the memory document is {len(cleaned):,} characters, over the hard limit of "
                f"{hard:,}, and no model is configured to compress it; shorten it and retry"
            )
        target = settings.document_soft_limit_chars
        try:
            reply = yield ModelCall(model, compression_messages(cleaned, target))
        except Exception as exc:
            raise MemoryWriteError(
                f"the memory document is over the hard limit of {hard:,} characters and "
                f"compressing it failed ({type(exc).__name__}); the previous document is kept"
            ) from exc
        cleaned = _clean(reply_text(reply))
        compressed = True
        if len(cleaned) > hard:
            raise MemoryWriteError(
                f"the memory document is still {len(cleaned):,} characters after compression, "
                f"over the hard limit of {hard:,}; the previous document is kept"
            )
    current = yield from read_plan(scope)
    if isinstance(expected, str):
        expected = current.version if current else None
    if folded is None:
        folded = current.folded if current and current.version == expected else ()
    stamp = (now or datetime.now(UTC)).astimezone(UTC).isoformat()
    value = {"text": cleaned, "updated_at": stamp, "folded": list(folded)}
    stored = yield PutIfVersion(scope.child(DOCUMENT), CURRENT, value, expected)
    if stored is None:
        latest = yield from read_plan(scope)
        raise ConflictError(
            f"the memory document changed since it was read (now version "
            f"{latest.version if latest else 0}); nothing was saved",
        )
    document = Document(cleaned, stored["version"], stamp, folded)
    yield [PutOp(scope.child(HISTORY), f"{document.version:08d}", stored, index=False)]
    warning = size_warning(cleaned, settings)
    return DocumentWrite(document, compressed, [warning] if warning else [])
