"""An export as a readable Markdown archive: each kind's items under its heading, as the kind
renders them (its holding's `render`), newest state first, with where each memory came from.
The JSON export is the one to import; this one is to read."""

from __future__ import annotations

from collections.abc import Iterable

from memory_plugin.privacy.archive import SCHEMA_VERSION, Archive
from memory_plugin.privacy.inventory import Held, holding_of


def _groups(items: Iterable[Held]) -> dict[tuple[str, str | None, str | None], list[Held]]:
    groups: dict[tuple[str, str | None, str | None], list[Held]] = {}
    for h in items:
        groups.setdefault((h.kind, h.workspace, h.agent), []).append(h)
    return groups


def to_markdown(archive: Archive) -> str:
    """The archive as Markdown (same archive, same text)."""
    owner = archive.owner
    lines = [f"# Memory of {owner.describe()}", ""]
    lines += [
        f"Exported by memory_plugin (schema_version {SCHEMA_VERSION}): {len(archive.items)} items.",
        "",
    ]
    if not archive.items:
        lines += ["Nothing is stored.", ""]
    for (kind, workspace, agent), items in _groups(archive.items).items():
        holding = holding_of(kind)
        if holding is not None:
            lines += holding.render(workspace, agent, items)
    return "\n".join(lines).rstrip("\n") + "\n"
