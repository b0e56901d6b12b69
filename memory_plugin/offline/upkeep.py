"""The offline model's answers to memory's own prompts: compaction summaries (from a
transcript, or asked by repeating the agent's request: `summarize_request`), flush notes,
profile consolidation and condensation, document compression and nightly consolidation.

Each answer keeps what it was shown (so `replies.checked_rewrite` and the profile guard accept
it) and adds only what the user said; none invents anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from langchain_core.messages import BaseMessage, SystemMessage

from memory_plugin.blocks import SUMMARY_TAG
from memory_plugin.context_management.cache_share import SUMMARY_REQUEST
from memory_plugin.context_management.prompts import (
    FLUSH_SYSTEM,
    SUMMARY_SYSTEM,
    message_text,
    summary_messages,
)
from memory_plugin.errors import MemoryWriteError
from memory_plugin.offline.text import sentence_case, sentences, shortened
from memory_plugin.profile.budget import body
from memory_plugin.profile.document import RECENT, SECTIONS, Profile, repair
from memory_plugin.profile.guard import takes_back
from memory_plugin.profile.prompts import CONDENSE_SYSTEM, NOOP
from memory_plugin.profile.prompts import CONSOLIDATE_SYSTEM as PROFILE_SYSTEM
from memory_plugin.safety import screen
from memory_plugin.scoped.prompts import COMPRESS_SYSTEM
from memory_plugin.scoped.prompts import CONSOLIDATE_SYSTEM as FOLD_SYSTEM
from memory_plugin.text import tokens

OFFLINE_MARK = "offline model"
SUMMARY_LINES = 40
LINE_CHARS = 160
RECENT_KEPT = 3
_NOTE = re.compile(r"^- \[(\d{4}-\d{2}-\d{2})\] (.*)$")
_KEY_FACT = re.compile(r"^(The user's [\w' -]+? (?:is|are|was|were)) ")
_WORK = frozenset(
    ["project", "deadline", "goal", "focus", "task", "sprint", "release", "product", "client"]
)
_PROFILE_FACTS: tuple[tuple[re.Pattern[str], str, str], ...] = (
    (
        re.compile(r"\bI(?:'m| am) an? ([\w -]+?) (?:at|in|for|with) ([\w &.-]+?)\s*$", re.I),
        "Identity",
        "Works as a {0} at {1}.",
    ),
    (
        re.compile(r"^(?i:hi|hey|hello)?[\s,]*I(?:'m| am) ([A-Z]\w+)\s*$"),
        "Identity",
        "Name is {0}.",
    ),
    (re.compile(r"\bcall me ([A-Z]\w+)", re.I), "Identity", "Goes by {0}."),
    (re.compile(r"\bI live in ([\w ,.-]+?)\s*$", re.I), "Identity", "Lives in {0}."),
    (re.compile(r"\bI work (?:at|for) ([\w &.-]+?)\s*$", re.I), "Identity", "Works at {0}."),
    (re.compile(r"\bI prefer ([^.!?]+)", re.I), "Communication Preferences", "Prefers {0}."),
    (
        re.compile(r"\bI(?:'m| am) working on ([^.!?]+)", re.I),
        "Work Context",
        "Working on {0}.",
    ),
    (re.compile(r"\bI use ([^.!?]+)", re.I), "Skills & Expertise", "Uses {0}."),
    (re.compile(r"\bI speak ([^.!?]+)", re.I), "Skills & Expertise", "Speaks {0}."),
    (re.compile(r"\bI (?:code|program) in ([^.!?]+)", re.I), "Skills & Expertise", "Codes in {0}."),
    (
        re.compile(r"\bremind me (?:to |about )?([^.!?]+)", re.I),
        "Open Questions / Follow-ups",
        "Asked to be reminded: {0}.",
    ),
)
_AND = re.compile(r",?\s+and\s+(?=(?:I|my)\b)|;\s*", re.I)
_MY = re.compile(r"\bmy ([\w -]{1,40}?) (is|are|was|were) ([^.!?]+)", re.I)


def said(prompt: str, tag: str) -> str:
    """The text between `<tag ...>` and `</tag>` lines in a prompt, "" when absent."""
    found = re.search(rf"<{tag}(?: [^>]*)?>\n(.*?)\n</{tag}>", prompt, re.S)
    return found.group(1) if found else ""


def _now(prompt: str) -> datetime:
    found = re.search(r"Current time: (\d{4}-\d{2}-\d{2} \d{2}:\d{2}) UTC", prompt)
    if found:
        return datetime.strptime(found.group(1), "%Y-%m-%d %H:%M").replace(tzinfo=UTC)
    return datetime.now(UTC)


def _facts_about_user(user: str) -> list[tuple[str, str]]:
    """(section, bullet) for each thing the user said about themselves."""
    found: list[tuple[str, str]] = []
    clauses = [c for s in sentences(user) if not s.endswith("?") for c in _AND.split(s)]
    for clause in clauses:
        clause = clause.rstrip(".! ")
        for pattern, section, template in _PROFILE_FACTS:
            match = pattern.search(clause)
            if match:
                parts = [g.strip() for g in match.groups()]
                found.append((section, sentence_case(template.format(*parts))))
        for match in _MY.finditer(clause):
            thing, verb, value = (g.strip() for g in match.groups())
            words = set(tokens(thing))
            if "name" in words and len(words) == 1:
                section = "Identity"
            elif words & _WORK:
                section = "Work Context"
            else:
                section = "Identity"
            found.append((section, sentence_case(f"{thing} {verb} {value}")))
    return found


def _same_subject(old: str, new: str) -> bool:
    """Whether `new` restates what `old` is about ("Name is Ann." / "Name is Bo.")."""
    head = re.match(r"^(.+? (?:is|are|was|were)) ", new)
    return bool(head) and old.lower().startswith(head.group(1).lower() + " ")  # type: ignore[union-attr]


def _forgotten(user: str, bullet: str) -> bool:
    words = [w for w in tokens(bullet) if len(w) > 2]
    wanted = set(tokens(user))
    return bool(words) and sum(w in wanted for w in words) * 2 > len(words)


def consolidate_profile(prompt: str) -> str:
    """NOOP, or the profile shown with the user's new facts added or updated in place (and
    bullets the user asked to forget removed)."""
    user = said(prompt, "user")
    now = _now(prompt)
    shown = repair(said(prompt, "profile"), Profile("offline").with_sections({}), now)
    sections = {name: list(shown.bullets(name)) for name in SECTIONS}
    changed = False
    if takes_back(user) and re.search(r"\bforget\b|\bno longer\b|\bnot true\b", user, re.I):
        for name in SECTIONS:
            kept = [b for b in sections[name] if not _forgotten(user, b)]
            changed = changed or len(kept) != len(sections[name])
            sections[name] = kept
    else:
        for section, bullet in _facts_about_user(user):
            bullets = sections[section]
            if bullet in bullets:
                continue
            same = next((i for i, b in enumerate(bullets) if _same_subject(b, bullet)), None)
            if same is None:
                bullets.append(bullet)
            else:
                bullets[same] = bullet
            changed = True
    if not changed:
        return NOOP
    return body(shown.with_sections({k: tuple(v) for k, v in sections.items()}))


def condense_profile(prompt: str) -> str:
    """The profile with repeated bullets merged and only the newest Recent Topics."""
    shown = repair(said(prompt, "profile"), Profile("offline").with_sections({}), _now(prompt))
    sections: dict[str, tuple[str, ...]] = {}
    for name in SECTIONS:
        unique: list[str] = []
        for bullet in shown.bullets(name):
            if bullet.lower() not in {b.lower() for b in unique}:
                unique.append(bullet)
        sections[name] = tuple(unique[-RECENT_KEPT:] if name == RECENT else unique)
    return body(shown.with_sections(sections))


def _note_bodies(notes: str) -> list[str]:
    bodies = []
    for line in notes.splitlines():
        found = _NOTE.match(line.strip())
        text = found.group(2) if found else line.strip().lstrip("-* ").strip()
        if text:
            bodies.append(text)
    return bodies


def fold_notes(prompt: str) -> str:
    """The document with each note merged in: restated facts replaced, repeats skipped, new
    ones listed under `## Notes`."""
    document = said(prompt, "memory_document")
    lines = [] if document.strip() == "(empty)" else document.splitlines()
    added: list[str] = []
    for note in _note_bodies(said(prompt, "notes")):
        bullet = f"- {note}"
        key = _KEY_FACT.match(note)
        same = next(
            (i for i, line in enumerate(lines) if key and line.startswith(f"- {key.group(1)} ")),
            None,
        )
        if same is not None:
            lines[same] = bullet
        elif bullet not in lines and bullet not in added:
            added.append(bullet)
    if added:
        if "## Notes" not in lines:
            lines += ([""] if lines else ["# Memory", ""]) + ["## Notes"]
        lines += added
    return "\n".join(lines).strip() or "# Memory"


def compress_document(prompt: str) -> str:
    """The document without repeated lines, blank runs and over-long lines."""
    kept: list[str] = []
    for line in said(prompt, "memory_document").splitlines():
        line = line.rstrip()
        if line and line in kept and not line.startswith("#"):
            continue
        if not line and (not kept or not kept[-1]):
            continue
        kept.append(shortened(line, LINE_CHARS) if not line.startswith("#") else line)
    return "\n".join(kept).strip()


def _clean(text: str) -> str:
    """One line of conversation fit for a summary: no tags, no speaker prefix."""
    return shortened(text.replace("<", "(").replace(">", ")"), LINE_CHARS)


def _screened(line: str | None) -> str | None:
    """The line, or a neutral stand-in when it reads like an instruction to the model."""
    if line is None:
        return None
    try:
        screen(line, "the summary line")
    except MemoryWriteError:
        return "- A message that read like an instruction to the model was left out."
    return line


def _summary_line(line: str) -> str | None:
    if line.startswith("User: "):
        text = line[6:]
        if len(text) > LINE_CHARS * 4:
            words = len(text.split())
            return f"- The user pasted a text of {words} words: {_clean(text)}"
        return f"- The user said: {_clean(text)}"
    if line.startswith("Assistant called remember("):
        found = re.search(r'"text": "(.*)"\}\)$', line)
        return f"- Noted to memory: {_clean(found.group(1))}" if found else None
    if line.startswith("Assistant: "):
        answer = line[11:]
        return None if OFFLINE_MARK in answer else f"- The answer was: {_clean(answer)}"
    found = re.match(r"^Result of (\w+): (.*)", line)
    if found and found.group(1) not in ("remember", "recall"):
        return f"- {found.group(1)} returned: {_clean(found.group(2))}"
    return None


def summarize(prompt: str) -> str:
    """The previous summary (its newest lines) followed by one line per message."""
    previous = said(prompt, "previous_summary")
    old = [] if previous.startswith("(none") else previous.splitlines()
    new = [
        line
        for line in (_screened(_summary_line(m)) for m in said(prompt, "messages").splitlines())
        if line is not None
    ]
    keep = max(SUMMARY_LINES - len(new), len(old) - len(old) // 3, 0)
    lines = [*old[len(old) - min(keep, len(old)) :], *new]
    return "\n".join(lines) or "- The conversation had no messages worth keeping."


def summary_requested(messages: Sequence[BaseMessage]) -> bool:
    """Whether these messages are the agent's request repeated to ask for a summary."""
    return bool(messages) and f"<{SUMMARY_REQUEST}>" in message_text(messages[-1])


def summarize_request(messages: Sequence[BaseMessage]) -> str:
    """`summarize` of the messages before the one the instruction quotes, the system
    message's conversation summary as the previous one."""
    system = message_text(messages[0]) if isinstance(messages[0], SystemMessage) else ""
    shown = list(messages[1 if system else 0 : -1])
    quote = re.search(r"«(.*?)(?: …)?»", message_text(messages[-1]), re.S)
    wanted = quote.group(1) if quote is not None else None
    cut = len(shown)
    for i in range(len(shown) - 1, -1, -1):
        if wanted is not None and " ".join(message_text(shown[i]).split()).startswith(wanted):
            cut = i
            break
    prompt = summary_messages(said(system, SUMMARY_TAG), shown[:cut])[-1]
    return summarize(message_text(prompt))


def flush_note(prompt: str, system: str) -> str:
    """One line: what the conversation was about and the last thing the user asked."""
    found = re.search(r"at most (\d+) characters", system)
    limit = int(found.group(1)) if found else 300
    users = [line[6:] for line in said(prompt, "messages").splitlines() if line.startswith("User:")]
    topics = "; ".join(shortened(u, 60) for u in users[-3:]) or "a few questions"
    return shortened(
        f"Conversation with the offline model about: {topics}".replace("<", "(").replace(">", ")"),
        limit,
    )


def _opening(template: str) -> str:
    """The fixed start of a prompt template, up to its first placeholder."""
    return template.split("{", 1)[0]


_ANSWERS: tuple[tuple[str, Callable[[str, str], str]], ...] = (
    (_opening(PROFILE_SYSTEM), lambda prompt, _: consolidate_profile(prompt)),
    (_opening(CONDENSE_SYSTEM), lambda prompt, _: condense_profile(prompt)),
    (_opening(FOLD_SYSTEM), lambda prompt, _: fold_notes(prompt)),
    (_opening(COMPRESS_SYSTEM), lambda prompt, _: compress_document(prompt)),
    (_opening(SUMMARY_SYSTEM), lambda prompt, _: summarize(prompt)),
    (_opening(FLUSH_SYSTEM), lambda prompt, system: flush_note(prompt, system)),
)


def upkeep_answer(system: str, prompt: str) -> str | None:
    """The answer to one of memory's own prompts, None when `system` is none of them."""
    for opening, answer in _ANSWERS:
        if system.startswith(opening):
            return answer(prompt, system)
    return None
