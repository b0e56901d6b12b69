"""The memory.md profile: YAML frontmatter, `# User Memory`, six fixed sections.

`render` writes the canonical form and `parse` reads it back exactly (render(parse(text)) ==
text for any canonical text). `repair` reads what a model returned: it keeps only the body,
puts known sections in order, drops unknown sections and prose, and stamps undated Recent
Topics bullets; it returns None when nothing usable is left.
"""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field, replace
from datetime import datetime

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
_BULLET = re.compile(r"^\s*[-*+•]\s+(.*\S)\s*$")
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


def _body(lines: list[str]) -> tuple[dict[str, list[str]], list[str], list[str]]:
    """Sections found in order, unknown headings, and stray lines."""
    found: dict[str, list[str]] = {}
    unknown: list[str] = []
    stray: list[str] = []
    current: list[str] | None = None
    for line in lines:
        heading = _HEADING.match(line)
        if heading:
            name = heading.group(1)
            known = next((s for s in SECTIONS if s.lower() == name.lower()), None)
            if known is None:
                unknown.append(name)
                current = None
            else:
                current = found.setdefault(known, [])
            continue
        if not line.strip() or line.strip() in (EMPTY, TRUNCATED):
            continue
        bullet = _BULLET.match(line)
        if bullet and current is not None:
            current.append(bullet.group(1))
        elif current is not None or line.strip() != TITLE:
            stray.append(line)
    return found, unknown, stray


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
            truncated=TRUNCATED in text,
        )
    except ValueError as exc:
        raise ProfileFormatError(f"a frontmatter value is malformed: {exc}") from None
    if render(profile) != text:
        raise ProfileFormatError("the profile is not in canonical form")
    return profile


def repair(text: str, base: Profile, now: datetime) -> Profile | None:
    """The sections a model returned, fitted onto `base` (whose frontmatter is kept as is):
    sections in order, unknown ones and prose dropped, missing ones kept from `base`, undated
    Recent Topics bullets stamped with `now`. None when no section is recognisable."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body[: body.rfind("```")] if "```" in body else body
    lines = body.split("\n")
    if TITLE in lines:
        lines = lines[lines.index(TITLE) + 1 :]
    found, unknown, stray = _body(lines)
    if not found:
        return None
    if unknown or stray:
        logger.info("profile repair dropped sections %s and %d stray lines", unknown, len(stray))
    missing = [s for s in SECTIONS if s not in found]
    if missing:
        logger.info("profile repair kept sections %s from the stored profile", missing)
    stamp = now.strftime("%Y-%m-%d %H:%M UTC: ")
    sections = {s: tuple(found[s]) if s in found else base.bullets(s) for s in SECTIONS}
    sections[RECENT] = tuple(b if _STAMP.match(b) else stamp + b for b in sections[RECENT])
    return base.with_sections(sections)
