"""Protected system-prompt blocks: memory text assembled at model-call time, never stored as
ordinary messages, so compaction can neither drop nor rewrite it.

Classes, in prompt order (earlier classes change less often, which keeps prompt caches warm):
`frozen` (a snapshot taken when a session starts), `per_turn` (changes only when its content
changes), `recent_notes` (changes when a note is added and at UTC midnight).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

BlockClass = Literal["frozen", "per_turn", "recent_notes"]
BLOCK_ORDER: tuple[BlockClass, ...] = ("frozen", "per_turn", "recent_notes")


@dataclass(frozen=True)
class PromptBlock:
    """One protected block of the system prompt."""

    name: str
    cls: BlockClass
    text: str


def render_blocks(blocks: list[PromptBlock]) -> str:
    """Join blocks in class order (stable within a class), separated by blank lines."""
    ordered = sorted(blocks, key=lambda block: BLOCK_ORDER.index(block.cls))
    return "\n\n".join(block.text for block in ordered if block.text)
