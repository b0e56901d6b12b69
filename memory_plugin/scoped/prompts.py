"""What the model is asked when memory needs rewriting."""

from __future__ import annotations

from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage

from memory_plugin.scoped.notes import Note

COMPRESS_SYSTEM = """You maintain a curated Markdown memory document that is injected into \
an assistant's system prompt. The document is over its size limit. Rewrite it to at most \
{target:,} characters. Keep every durable fact, preference, decision and open thread; merge \
duplicates; drop stale, superseded and trivial entries; keep the existing headings where \
they still fit. Never invent anything. Reply with the complete rewritten document only: no \
preamble, no code fences."""

CONSOLIDATE_SYSTEM = """You maintain a curated Markdown memory document that is injected into \
an assistant's system prompt. Fold the dated notes below into the document. Each note is one \
fact recorded on the day shown. Merge each into the right place, update entries a newer note \
supersedes (the newest statement wins), keep everything in the document that the notes do \
not change, and never invent facts. Keep the document under {target:,} characters. Reply \
with the complete updated document only: no preamble, no code fences."""


def compression_messages(document: str, target: int) -> list[BaseMessage]:
    """Messages asking for a shorter rewrite of an over-long document."""
    return [
        SystemMessage(COMPRESS_SYSTEM.format(target=target)),
        HumanMessage(f"<memory_document>\n{document}\n</memory_document>"),
    ]


def consolidation_messages(document: str, notes: list[Note], target: int) -> list[BaseMessage]:
    """Messages asking for the document with the notes merged in."""
    rendered = "\n".join(note.render() for note in notes)
    return [
        SystemMessage(CONSOLIDATE_SYSTEM.format(target=target)),
        HumanMessage(
            f"<memory_document>\n{document or '(empty)'}\n</memory_document>\n\n"
            f"<notes>\n{rendered}\n</notes>"
        ),
    ]
