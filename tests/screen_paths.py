"""The write paths the safety screen guards, each fed one line the way that path receives it.

Shared by tests/test_screen_corpora.py and bench/screen.py. Every path is the real code: a
note (`validate_note` in a team scope), a curated team document (`ScopedMemory.write_document`),
a profile rewrite (the profile guard), a pre-compaction flush note (`append_plan`, which
context_management/flush.py calls), consolidation output (`checked_rewrite`, which nightly
consolidation calls), a bounded `user` entry (`BoundedMemory.apply`, the `memory` tool's and
the REST surface's path) and an agent entry asked for shared visibility
(`AgentMemory.store_entry`). Each returns the refusal message, or None when the line is
stored.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from langchain_core.messages import AIMessage
from langgraph.store.memory import InMemoryStore

from memory_plugin import MemoryContext, MemorySettings
from memory_plugin.agent.api import AgentMemory
from memory_plugin.bounded.api import BoundedMemory
from memory_plugin.errors import MemoryWriteError
from memory_plugin.models.replies import checked_rewrite
from memory_plugin.plans import run
from memory_plugin.profile.document import parse
from memory_plugin.profile.guard import check_condensation
from memory_plugin.scope import team_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.notes import append_plan, validate_note

DATA = Path(__file__).parent / "data"
TEAM = MemoryContext(user_id="ann", workspace_id="acme", thread_visibility="shared")
AGENT = MemoryContext(user_id="ann", agent_id="helper")
NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
ON = MemorySettings(bounded_memory=True, agent_memory=True)
PROFILE = parse((DATA / "profile_base.md").read_text())
PREVIOUS = "# Team memory\n- The team deploys on Tuesdays.\n- CI runs on GitHub Actions."


def load(name: str) -> list[tuple[str, str]]:
    """The (category, text) cases of a corpus file in tests/data."""
    rows = []
    for line in (DATA / name).read_text(encoding="utf-8").splitlines():
        if line.strip() and not line.startswith("#"):
            category, text = line.split("\t", 1)
            rows.append((category, text.replace("\\n", "\n")))
    return rows


def _refusal(write: Callable[[], object]) -> str | None:
    try:
        write()
    except MemoryWriteError as exc:
        return str(exc)
    return None


def note(text: str) -> str | None:
    return _refusal(lambda: validate_note(text, 10_000, visibility="shared"))


def document(text: str) -> str | None:
    memory = ScopedMemory(InMemoryStore())
    return _refusal(lambda: memory.write_document(TEAM, f"{PREVIOUS}\n- {text}"))


def profile(text: str) -> str | None:
    identity = (*PROFILE.bullets("Identity"), text)
    new = PROFILE.with_sections({**PROFILE.sections, "Identity": identity})
    return _refusal(lambda: check_condensation(PROFILE, new))


def flush(text: str) -> str | None:
    plan = append_plan(team_scope(TEAM), text, 10_000, NOW, semantic=False)
    return _refusal(lambda: run(InMemoryStore(), plan))


def consolidation(text: str) -> str | None:
    reply = AIMessage(f"{PREVIOUS}\n- {text}")
    return _refusal(lambda: checked_rewrite(reply, previous=PREVIOUS, what="consolidation"))


def bounded(text: str) -> str | None:
    memory = BoundedMemory(InMemoryStore(), settings=ON)
    return _refusal(lambda: memory.apply(AGENT, "add", "user", text))


def agent(text: str) -> str | None:
    memory = AgentMemory(InMemoryStore(), defaults=ON)
    return _refusal(lambda: memory.store_entry(AGENT, "fact", text, visibility="shared"))


PRIVATE = frozenset({"profile", "consolidation", "bounded", "agent"})
"""Paths that write private memory here, where credentials are allowed (the user's own; an
agent entry holding one is made private instead of shared)."""

PATHS: dict[str, Callable[[str], str | None]] = {
    "note": note,
    "document": document,
    "profile": profile,
    "flush": flush,
    "consolidation": consolidation,
    "bounded": bounded,
    "agent": agent,
}
