"""An export as a readable Markdown archive: each kind under its heading, newest state first,
with where each memory came from. The JSON export is the one to import; this one is to read."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from memory_plugin.privacy.archive import Archive
from memory_plugin.privacy.inventory import Held
from memory_plugin.scoped.documents import HISTORY
from memory_plugin.scoped.notes import NOTES


def _origin(value: Mapping[str, Any]) -> str:
    """Who or what wrote an item, and when, from its provenance."""
    found = value.get("provenance")
    if isinstance(found, list):
        found = found[-1] if found else None
    if not isinstance(found, dict):
        return ""
    parts = [str(found.get("source", "?"))]
    if found.get("actor"):
        parts.append(f"by {found['actor']}")
    if found.get("thread_id"):
        parts.append(f"in thread {found['thread_id']}")
    if found.get("at"):
        parts.append(f"at {found['at']}")
    return f" _({' '.join(parts)})_"


def _quoted(text: str) -> list[str]:
    return [f"> {line}" if line else ">" for line in text.splitlines()] or [">"]


def _personal(items: list[Held]) -> list[str]:
    lines: list[str] = []
    for h in items:
        if h.path == ("document",):
            lines += [f"### Document (version {h.value.get('version', '?')})", ""]
            lines += [*_quoted(str(h.value.get("text", ""))), ""]
    versions = [h for h in items if h.path == (HISTORY,)]
    if versions:
        lines += ["### Saved versions", ""]
        for h in sorted(versions, key=lambda h: h.key, reverse=True):
            chars = len(str(h.value.get("text", "")))
            version = h.value.get("version", h.key)
            lines.append(f"- version {version}: {chars} characters{_origin(h.value)}")
        lines.append("")
    notes = [h for h in items if h.path == (NOTES,)]
    if notes:
        lines += ["### Notes", ""]
        for h in notes:
            if h.value.get("deleted"):
                lines.append(f"- {h.value.get('day', '')}: _(deleted)_")
                continue
            body = str(h.value.get("text", "")).removeprefix("- ")
            lines.append(f"- {h.value.get('day', '')}: {body}{_origin(h.value)}")
        lines.append("")
    return lines


def _profile(items: list[Held]) -> list[str]:
    lines: list[str] = []
    for h in items:
        if h.path == ():
            lines += [*_quoted(str(h.value.get("text", ""))), ""]
    changes = [h for h in items if h.path == ("changes",)]
    if changes:
        lines += ["### Changes", ""]
        for h in changes:
            for op in h.value.get("operations", []):
                before, after = op.get("before"), op.get("after")
                what = f"{before!r} -> {after!r}" if before else repr(after)
                lines.append(
                    f"- {h.value.get('at', '')}: {op.get('op')} {op.get('section')}: {what}"
                )
        lines.append("")
    return lines


def _entries(items: list[Held]) -> list[str]:
    lines = [
        f"- **{h.key}**: _(deleted)_"
        if h.value.get("deleted")
        else f"- **{h.key}**: {h.value.get('content', '')}{_origin(h.value)}"
        for h in items
    ]
    return [*lines, ""]


def _bounded(items: list[Held]) -> list[str]:
    lines: list[str] = []
    for h in items:
        lines.append(f"- **{h.key}**{_origin(h.value)}")
        lines += [f"  - {entry}" for entry in h.value.get("entries", [])]
    return [*lines, ""]


def _settings(items: list[Held]) -> list[str]:
    lines: list[str] = []
    for h in items:
        values = h.value.get("values", {})
        lines += [f"- `{name}` = `{json.dumps(values[name])}`" for name in sorted(values)]
    return [*lines, ""]


def _groups(items: Iterable[Held]) -> dict[tuple[str, str | None, str | None], list[Held]]:
    groups: dict[tuple[str, str | None, str | None], list[Held]] = {}
    for h in items:
        groups.setdefault((h.kind, h.workspace, h.agent), []).append(h)
    return groups


def to_markdown(archive: Archive) -> str:
    """The archive as Markdown (same archive, same text)."""
    owner = archive.owner
    lines = [f"# Memory of {owner.describe()}", ""]
    lines += [f"Exported by memory_plugin (schema_version 1): {len(archive.items)} items.", ""]
    if not archive.items:
        lines += ["Nothing is stored.", ""]
    for (kind, workspace, agent), items in _groups(archive.items).items():
        if kind == "personal":
            where = f"in workspace {workspace}" if workspace else "outside workspaces"
            lines += [f"## Personal memory {where}", "", *_personal(items)]
        elif kind == "profile":
            lines += ["## Profile (what the agent knows about you)", "", *_profile(items)]
        elif kind == "agent":
            lines += [f"## Agent {agent}: your private entries", "", *_entries(items)]
        elif kind == "bounded":
            lines += [f"## Agent {agent}: bounded memory", "", *_bounded(items)]
        else:
            lines += ["## Your settings layer", "", *_settings(items)]
    return "\n".join(lines).rstrip("\n") + "\n"
