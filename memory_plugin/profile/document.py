"""The memory.md profile: YAML frontmatter, `# User Memory`, six fixed sections.

`render` writes the canonical form and `parse` reads it back exactly (render(parse(text)) ==
text for any canonical text). `repair` reads what a model returned: it keeps only the body
(text outside a code fence or before `# User Memory` is commentary), puts known sections in
order, drops unknown sections, keeps missing ones from the stored profile and stamps undated
Recent Topics bullets; a section written as prose instead of bullets, or a reply with no
section at all, is a ProfileFormatError naming what is wrong.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field, replace
from datetime import datetime

from memory_plugin.safety import strip_control

logger = logging.getLogger(__name__)

SECTIONS = (
    "Identity",
    "Communication Preferences",
    "Work Context",
    "Skills & Expertise",
    "Recent Topics",
    "Open Questions / Follow-ups",
)
RECENT = "Recent Topics"
EMPTY = "_(empty)_"
TITLE = "# User Memory"
SCHEMA_VERSION = 1
TRUNCATED = "<!-- truncated to fit memory budget -->"
_STAMP = re.compile(r"^\d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC: ")
_BULLET = re.compile(r"^\s*(?:[-*+•]|\d{1,2}[.)])\s+(.*\S)\s*$")
_FENCE = re.compile(r"^\s*```")
_HEADING = re.compile(r"^##\s+(.+?)\s*#*\s*$")
_SAFE_SCALAR = re.compile(r"^[A-Za-z0-9_.@+-][A-Za-z0-9_.@+\- ]*$")


class ProfileFormatError(ValueError):
    """The text is not a well-formed memory.md profile."""


@dataclass(frozen=True)
class Profile:
    """A parsed profile: frontmatter fields and the bullets of each section, in order."""

    user_id: str
    schema_version: int = SCHEMA_VERSION
    last_updated: str = ""
    turn_count: int = 0
    sections: dict[str, tuple[str, ...]] = field(default_factory=dict)
    truncated: bool = False
    written: dict[str, tuple[str, ...]] = field(default_factory=dict, compare=False, repr=False)
    """For a profile `repair` read from a model's reply: each bullet as the reply wrote it,
    before `clean_bullet`, for the safety screen to judge (never stored)."""

    def bullets(self, section: str) -> tuple[str, ...]:
        """The bullets of one section (without the "- ")."""
        return self.sections.get(section, ())

    def same_content(self, other: Profile) -> bool:
        """Whether both carry the same bullets in every section."""
        return all(self.bullets(s) == other.bullets(s) for s in SECTIONS)

    def with_sections(self, sections: dict[str, tuple[str, ...]]) -> Profile:
        """A copy with other section contents."""
        return replace(self, sections={s: tuple(sections.get(s, ())) for s in SECTIONS})


def _scalar(value: str) -> str:
    return value if _SAFE_SCALAR.match(value) else json.dumps(value, ensure_ascii=False)


def _unscalar(value: str) -> str:
    return str(json.loads(value)) if value.startswith('"') else value


def render(profile: Profile) -> str:
    """The canonical memory.md text."""
    lines = [
        "---",
        f"user_id: {_scalar(profile.user_id)}",
        f"schema_version: {profile.schema_version}",
        f"last_updated: {profile.last_updated}",
        f"turn_count: {profile.turn_count}",
        "---",
        "",
        TITLE,
    ]
    for section in SECTIONS:
        bullets = profile.bullets(section)
        lines += ["", f"## {section}", *([f"- {b}" for b in bullets] or [EMPTY])]
    if profile.truncated:
        lines += ["", TRUNCATED]
    return "\n".join(lines) + "\n"


def _frontmatter(lines: list[str]) -> tuple[dict[str, str], int]:
    if not lines or lines[0] != "---":
        raise ProfileFormatError("a profile starts with a --- frontmatter line")
    try:
        end = lines.index("---", 1)
    except ValueError:
        raise ProfileFormatError("the frontmatter is not closed with ---") from None
    fields: dict[str, str] = {}
    for line in lines[1:end]:
        key, sep, value = line.partition(": ")
        if not sep:
            raise ProfileFormatError(f"frontmatter line {line!r} is not `key: value`")
        fields[key] = value
    return fields, end + 1


def _body(lines: list[str]) -> tuple[dict[str, list[str]], list[str], list[tuple[str, str]]]:
    """Sections found in order, unknown headings, and stray lines with the section they are in
    ("" outside the known sections)."""
    found: dict[str, list[str]] = {}
    unknown: list[str] = []
    stray: list[tuple[str, str]] = []
    current: str | None = None
    for line in lines:
        heading = _HEADING.match(line)
        if heading:
            name = heading.group(1)
            current = next((s for s in SECTIONS if s.lower() == name.lower()), None)
            if current is None:
                unknown.append(name)
            else:
                found.setdefault(current, [])
            continue
        if not line.strip() or line.strip() in (EMPTY, TRUNCATED):
            continue
        bullet = _BULLET.match(line)
        if bullet and current is not None:
            found[current].append(bullet.group(1))
        elif current is not None or line.strip() != TITLE:
            stray.append((current or "", line))
    return found, unknown, stray


def _is_truncated(lines: list[str]) -> bool:
    """Whether the text ends with the truncation marker line (not merely mentions it)."""
    return len(lines) >= 3 and lines[-2:] == [TRUNCATED, ""] and lines[-3] == ""


def parse(text: str) -> Profile:
    """Read a canonical profile; raises ProfileFormatError naming what is wrong."""
    lines = text.split("\n")
    fields, start = _frontmatter(lines)
    for key in ("user_id", "schema_version", "last_updated", "turn_count"):
        if key not in fields:
            raise ProfileFormatError(f"the frontmatter has no {key}")
    found, unknown, stray = _body(lines[start:])
    if unknown or stray or list(found) != list(SECTIONS):
        raise ProfileFormatError("the body must be the six sections in their fixed order")
    try:
        profile = Profile(
            user_id=_unscalar(fields["user_id"]),
            schema_version=int(fields["schema_version"]),
            last_updated=fields["last_updated"],
            turn_count=int(fields["turn_count"]),
            sections={s: tuple(found[s]) for s in SECTIONS},
            truncated=_is_truncated(lines),
        )
    except ValueError as exc:
        raise ProfileFormatError(f"a frontmatter value is malformed: {exc}") from None
    if render(profile) != text:
        raise ProfileFormatError("the profile is not in canonical form")
    return profile


def _unfenced(lines: list[str]) -> list[str]:
    """The lines inside the first code fence when the profile is in it, else all lines."""
    opening = next((i for i, line in enumerate(lines) if _FENCE.match(line)), None)
    if opening is None:
        return lines
    closing = next(
        (i for i in range(opening + 1, len(lines)) if _FENCE.match(lines[i])), len(lines)
    )
    inside = lines[opening + 1 : closing]
    return inside if any(_HEADING.match(line) for line in inside) else lines


def clean_bullet(text: str) -> str:
    """A bullet as stored: one line, no control characters, no truncation marker."""
    return " ".join(strip_control(text.replace(TRUNCATED, " "), keep_newlines=False).split())


def repair(text: str, base: Profile, now: datetime) -> Profile:
    """The sections a model returned, fitted onto `base` (whose frontmatter is kept as is):
    sections in order, unknown ones dropped, missing ones kept from `base`, undated Recent
    Topics bullets stamped with `now`. ProfileFormatError when no section is recognisable or
    a section holds prose instead of bullets."""
    lines = _unfenced(text.strip().split("\n"))
    if TITLE in lines:
        lines = lines[lines.index(TITLE) + 1 :]
    found, unknown, stray = _body(lines)
    if not found:
        raise ProfileFormatError("the reply has none of the profile's sections")
    prose = [(section, line) for section, line in stray if section]
    if prose:
        section, line = prose[0]
        raise ProfileFormatError(
            f"the {section} section is written as prose, not bullets ({line.strip()[:60]!r})"
        )
    if unknown or stray:
        logger.info("profile repair dropped sections %s and %d stray lines", unknown, len(stray))
    missing = [s for s in SECTIONS if s not in found]
    if missing:
        logger.info("profile repair kept sections %s from the stored profile", missing)
    stamp = now.strftime("%Y-%m-%d %H:%M UTC: ")
    written: dict[str, tuple[str, ...]] = {}
    for s in found:
        for raw in found[s]:
            cleaned = clean_bullet(raw)
            written[cleaned] = (*written.get(cleaned, ()), raw)
    sections = {
        s: tuple(b for b in map(clean_bullet, found[s]) if b and b != EMPTY)
        if s in found
        else base.bullets(s)
        for s in SECTIONS
    }
    for b in sections[RECENT]:
        if not _STAMP.match(b) and b in written:
            written[stamp + b] = written[b]
    sections[RECENT] = tuple(b if _STAMP.match(b) else stamp + b for b in sections[RECENT])
    return replace(base, truncated=False, written=written).with_sections(sections)
