"""Protected system-prompt blocks: memory text assembled at model-call time, never stored as
ordinary messages, so compaction can neither drop nor rewrite it.

Classes, in prompt order (earlier classes change less often, which keeps prompt caches warm):
`frozen` (a snapshot taken when a session starts), `per_turn` (changes only when its content
changes), `recent_notes` (changes when a note is added and at UTC midnight).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, Protocol

from langchain_core.messages import BaseMessage, SystemMessage

if TYPE_CHECKING:
    from memory_plugin.plans import Plan
    from memory_plugin.scope.context import MemoryContext
    from memory_plugin.settings import MemorySettings

BlockClass = Literal["frozen", "per_turn", "recent_notes"]
BLOCK_ORDER: tuple[BlockClass, ...] = ("frozen", "per_turn", "recent_notes")


@dataclass(frozen=True)
class PromptBlock:
    """One protected block of the system prompt; `version` is the version of the stored
    memory it shows, when it has one (the curated document: 0 before its first write).

    `entries` is the memory the block shows, one string per note, bullet or entry (None: each
    non-blank line of its text), so that wording around it (a usage line, a date) can change
    without counting as a removal; `held` the entries its source still holds but left out of
    the text for room (never stored with the state)."""

    name: str
    cls: BlockClass
    text: str
    version: int | None = None
    entries: tuple[str, ...] | None = None
    held: tuple[str, ...] = field(default=(), compare=False)

    def memory(self) -> tuple[str, ...]:
        """The memory the block shows: its entries, else its non-blank lines."""
        if self.entries is not None:
            return self.entries
        return tuple(line for line in self.text.splitlines() if line.strip())


def render_blocks(blocks: list[PromptBlock]) -> str:
    """Join blocks in class order (stable within a class), separated by blank lines."""
    ordered = sorted(blocks, key=lambda block: BLOCK_ORDER.index(block.cls))
    return "\n\n".join(block.text for block in ordered if block.text)


class BlockSource(Protocol):
    """A memory kind that contributes protected blocks (ScopedMemory is one)."""

    def blocks_plan(
        self, ctx: MemoryContext, settings: MemorySettings | None = None
    ) -> Plan[list[PromptBlock]]:
        """The blocks for this run's context (`settings`: already resolved for it)."""
        ...


SUMMARY_TAG = "conversation_summary"


def assemble(
    system_prompt: str | None,
    blocks: Sequence[PromptBlock],
    summary: str,
    messages: Sequence[BaseMessage],
) -> list[BaseMessage]:
    """The model's input: one system message (the app's prompt, the blocks in class order,
    then the running summary) followed by the messages."""
    parts = [system_prompt or "", render_blocks(list(blocks))]
    if summary:
        parts.append(f"<{SUMMARY_TAG}>\n{summary}\n</{SUMMARY_TAG}>")
    text = "\n\n".join(part for part in parts if part)
    return [SystemMessage(text), *messages] if text else list(messages)


def to_dicts(blocks: Sequence[PromptBlock], *, entries: bool = True) -> list[dict[str, Any]]:
    """Blocks as plain dicts, for graph state (`version` and `entries` only where a block has
    them; `entries=False` leaves the entries out)."""
    rows: list[dict[str, Any]] = []
    for b in blocks:
        row: dict[str, Any] = {"name": b.name, "cls": b.cls, "text": b.text}
        if b.version is not None:
            row["version"] = b.version
        if entries and b.entries is not None:
            row["entries"] = list(b.entries)
        rows.append(row)
    return rows


def from_dicts(rows: Sequence[Mapping[str, Any]]) -> list[PromptBlock]:
    """Blocks back from graph state."""
    return [
        PromptBlock(
            r["name"],
            r["cls"],
            r["text"],
            r.get("version"),
            None if r.get("entries") is None else tuple(r["entries"]),
        )
        for r in rows
    ]
