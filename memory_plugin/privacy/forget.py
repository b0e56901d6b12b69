"""Forget a fact everywhere a user's memory keeps it.

`Forgetter.preview` finds every place the user's memory holds a text (a fact, a name): their
personal notes and document lines (outside workspaces and in each workspace where they have
personal memory), their profile bullets, their bounded entries (both targets) and private
agent entries of every agent that keeps memory of them, and the team memory of the
workspaces they belong to. Words match case-insensitively as a phrase on word boundaries;
where the store has a vector index, the notes nearest in meaning (its vector search alone)
are added as candidates (`match="meaning"`) for the user to confirm. Every place carries its
provenance and whether the user may change it: as in the console, every member edits their
workspace's team memory, and only a platform admin changes an agent's shared or read-only
entries.

`Forgetter.apply` removes the places chosen (by default every editable word match): a note
deleted (a tombstone), a document line removed in a new version, the lines holding the text
dropped from every saved version (`history`, so a restore cannot bring it back), a profile
bullet removed through the profile's compare-and-swap write and change log, whose texts
holding it become FORGOTTEN (`changes`), a bounded entry removed, an agent entry removed;
every change is made under
`provenance.origin(source="forget", actor=user_id)`. No model is asked: the edits are
deterministic. Places are found again by their text when applied, so a place already gone is
reported as such, never an error.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from langgraph.store.base import BaseStore, GetOp, Item, Op, PutOp

from memory_plugin.agent import AgentMemory
from memory_plugin.agent.entries import ENTRIES, Visibility, forget_plan, to_entry
from memory_plugin.backends.erasure import Purge
from memory_plugin.bounded import BoundedMemory
from memory_plugin.bounded.entries import TARGETS
from memory_plugin.context_management.journal import entries_plan, kept_incarnations_plan
from memory_plugin.errors import (
    ConflictError,
    InvalidArgumentError,
    MemoryPluginError,
    MemoryWriteError,
)
from memory_plugin.plans import Plan, all_items_plan, arun, run
from memory_plugin.privacy.inventory import Owner, agents_plan, workspaces_plan
from memory_plugin.profile.document import SECTIONS, Profile
from memory_plugin.profile.memory import CHANGES, ProfileMemory
from memory_plugin.provenance import Provenance, origin, provenance_of
from memory_plugin.scope import agent_scope, profile_scope, thread_scope
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.documents import HISTORY, Document, to_document
from memory_plugin.scoped.recall import recall_plan as meaning_plan
from memory_plugin.settings import MemorySettings, SettingsCache

PlaceKind = Literal["note", "document", "history", "profile", "changes", "bounded", "agent"]
Where = Literal["personal", "team", "profile", "bounded", "agent_private", "agent_shared"]
Match = Literal["words", "meaning"]
MAX_TEXT = 500
SEMANTIC_CANDIDATES = 5
PAGE = 100
RETRIES = 5
FORGOTTEN = "[forgotten]"
SHARED_ENTRY = "only a platform admin may change the agent's shared or read-only entries"


@dataclass(frozen=True)
class Place:
    """One place that holds the text: what it is, where, its text and provenance, how it
    matched, and whether the owner may change it (`reason` says why not)."""

    id: str
    kind: PlaceKind
    where: Where
    text: str
    match: Match
    editable: bool
    provenance: Provenance | None = None
    workspace: str | None = None
    agent: str | None = None
    key: str | None = None
    """The note key, profile section, bounded target or agent entry key."""
    reason: str | None = None

    @property
    def label(self) -> str:
        """Where the place is, in words."""
        scope = {
            "personal": "personal memory",
            "team": "team memory",
            "profile": "profile",
            "bounded": "bounded memory",
            "agent_private": "private agent memory",
            "agent_shared": "shared agent memory",
        }[self.where]
        if self.workspace is not None:
            scope += f" of workspace {self.workspace}"
        if self.agent is not None:
            scope += f" of agent {self.agent}"
        what = {
            "note": f"note {self.key}",
            "document": "document line",
            "history": f"earlier versions of the document ({self.key})",
            "profile": f"bullet in {self.key}",
            "changes": f"the profile's change log ({self.key})",
            "bounded": f"{self.key} entry",
            "agent": f"entry {self.key}",
        }[self.kind]
        return f"{scope}: {what}"


@dataclass(frozen=True)
class Preview:
    """The places a text was found in, for one owner."""

    text: str
    owner: Owner
    places: tuple[Place, ...]

    def chosen(self, ids: Iterable[str] | None = None) -> list[Place]:
        """The places `ids` names (any the owner may change, semantic candidates included),
        by default every editable word match; an unknown id or one the owner may not change
        is refused."""
        if ids is None:
            return [p for p in self.places if p.editable and p.match == "words"]
        by_id = {place.id: place for place in self.places}
        wanted = list(dict.fromkeys(ids))
        unknown = [i for i in wanted if i not in by_id]
        if unknown:
            raise InvalidArgumentError(f"no such place in this preview: {', '.join(unknown)}")
        refused = [by_id[i] for i in wanted if not by_id[i].editable]
        if refused:
            raise MemoryWriteError(f"you may not change {refused[0].label}: {refused[0].reason}")
        return [by_id[i] for i in wanted]


@dataclass(frozen=True)
class Outcome:
    """What applying a forget did at one place: `done` when it changed it, else why not."""

    place: Place
    done: bool
    detail: str


@dataclass(frozen=True)
class Forgotten:
    """What a forget changed."""

    outcomes: tuple[Outcome, ...] = field(default_factory=tuple)

    @property
    def removed(self) -> int:
        """How many places it changed."""
        return sum(1 for outcome in self.outcomes if outcome.done)

    def summary(self) -> str:
        """One line: how many places were changed, and how many not."""
        left = len(self.outcomes) - self.removed
        return f"Forgot {self.removed} place(s)" + (f"; {left} not changed." if left else ".")


def needle_of(text: object) -> str:
    """The text to forget, whitespace folded; refused when not text, empty or too long."""
    if not isinstance(text, str):
        raise MemoryWriteError(f"the text to forget must be text, got {type(text).__name__}")
    needle = " ".join(text.split())
    if not needle:
        raise MemoryWriteError("the text to forget is empty; name the fact or the word to forget")
    if len(needle) > MAX_TEXT:
        raise MemoryWriteError(f"the text to forget is at most {MAX_TEXT} characters")
    return needle


def matcher(needle: str) -> re.Pattern[str]:
    """Case-insensitive match of the words of `needle` as a phrase, on word boundaries."""
    words = r"\s+".join(re.escape(word) for word in needle.split())
    return re.compile(rf"(?<!\w){words}(?!\w)", re.IGNORECASE)


def _context(owner: Owner, place: Place | None = None) -> MemoryContext:
    """The owner's context at a place (their profile's without one)."""
    if place is None:
        return MemoryContext(user_id=owner.user_id, org_id=owner.org_id)
    return MemoryContext(
        user_id=owner.user_id,
        org_id=owner.org_id,
        workspace_id=place.workspace,
        thread_visibility="shared" if place.where == "team" else "private",
    )


def _without(item: Item, pattern: re.Pattern[str]) -> str:
    """A saved version's text without the lines that hold the text."""
    return "\n".join(line for line in item.value["text"].split("\n") if not pattern.search(line))


def _scrubbed(operation: Any, pattern: re.Pattern[str]) -> Any:
    """A change-log operation with each before or after holding the text as FORGOTTEN."""
    if not isinstance(operation, dict):
        return operation
    return {
        key: FORGOTTEN
        if key in ("before", "after") and isinstance(value, str) and pattern.search(value)
        else value
        for key, value in operation.items()
    }


def _rewritten(place: Place, count: int, what: str) -> Outcome:
    """The outcome of rewriting `count` records at a place (none: already gone)."""
    return Outcome(place, bool(count), f"{count} {what} rewritten" if count else "already gone")


def _place_id(*parts: str | None) -> str:
    digest = hashlib.sha256("\x1f".join(part or "" for part in parts).encode()).hexdigest()
    return digest[:12]


def _place(
    kind: PlaceKind,
    where: Where,
    text: str,
    match: Match,
    *,
    provenance: Provenance | None = None,
    workspace: str | None = None,
    agent: str | None = None,
    key: str | None = None,
    editable: bool = True,
    reason: str | None = None,
) -> Place:
    place_id = _place_id(kind, where, workspace, agent, key, text)
    return Place(
        place_id, kind, where, text, match, editable, provenance, workspace, agent, key, reason
    )


class Forgetter:
    """Finds and forgets a text across the memory kinds of one store (see the module)."""

    def __init__(
        self,
        scoped: ScopedMemory,
        profile: ProfileMemory,
        bounded: BoundedMemory,
        agent: AgentMemory,
    ) -> None:
        self.scoped, self.profile, self.bounded, self.agent = scoped, profile, bounded, agent

    @classmethod
    def over(cls, store: BaseStore, settings: MemorySettings | None = None) -> Forgetter:
        """A forgetter over the kinds of `store` with one settings source."""
        shared = SettingsCache(settings)
        return cls(
            ScopedMemory(store, settings=shared),
            ProfileMemory(store, settings=shared),
            BoundedMemory(store, settings=shared),
            AgentMemory(store, settings=shared),
        )

    @property
    def _indexed(self) -> bool:
        return getattr(self.scoped.store, "index_config", None) is not None

    # --- finding -------------------------------------------------------------------------

    def preview_plan(self, owner: Owner, text: object) -> Plan[Preview]:
        """The plan behind preview."""
        needle = needle_of(text)
        pattern = matcher(needle)
        personal = yield from workspaces_plan(owner)
        places: list[Place] = []
        for workspace in [None, *sorted({*personal, *owner.workspaces})]:
            ctx = MemoryContext(user_id=owner.user_id, org_id=owner.org_id, workspace_id=workspace)
            places += yield from self._scope_plan(ctx, "personal", needle, pattern)
        for workspace in owner.workspaces:
            ctx = MemoryContext(
                user_id=owner.user_id,
                org_id=owner.org_id,
                workspace_id=workspace,
                thread_visibility="shared",
            )
            places += yield from self._scope_plan(ctx, "team", needle, pattern)
        places += yield from self._profile_plan(owner, pattern)
        agents = yield from agents_plan(owner)
        for agent in sorted({*agents, *owner.agents}):
            ctx = MemoryContext(user_id=owner.user_id, org_id=owner.org_id, agent_id=agent)
            places += yield from self._bounded_plan(ctx, pattern)
            places += yield from self._agent_plan(ctx, owner, pattern)
        return Preview(needle, owner, tuple(places))

    def _scope_plan(
        self, ctx: MemoryContext, where: Where, needle: str, pattern: re.Pattern[str]
    ) -> Plan[list[Place]]:
        """The notes and document lines of one personal or team scope that hold the text,
        and (with a vector index) the notes nearest in meaning, found by the vector search
        alone (no reranking model is asked)."""
        workspace = ctx.workspace_id
        notes = yield from self.scoped.list_notes_plan(ctx, None)
        found = [
            _place(
                "note",
                where,
                note.body,
                "words",
                provenance=note.provenance,
                workspace=workspace,
                key=note.key,
            )
            for note in notes
            if pattern.search(note.body)
        ]
        if self._indexed and notes:
            matched = {place.key for place in found}
            scope = thread_scope(self.scoped.member(ctx))
            hits = yield from meaning_plan(scope, needle, SEMANTIC_CANDIDATES, signals={"semantic"})
            found += [
                _place(
                    "note",
                    where,
                    hit.note.body,
                    "meaning",
                    provenance=hit.note.provenance,
                    workspace=workspace,
                    key=hit.note.key,
                )
                for hit in hits
                if hit.note.key not in matched
            ]
        document = yield from self.scoped.read_document_plan(ctx)
        if document is not None:
            lines = dict.fromkeys(
                line.strip() for line in document.text.splitlines() if pattern.search(line)
            )
            found += [
                _place(
                    "document",
                    where,
                    line,
                    "words",
                    provenance=document.provenance,
                    workspace=workspace,
                )
                for line in lines
            ]
        found += yield from self._history_places_plan(ctx, where, pattern)
        return found

    def _history_places_plan(
        self, ctx: MemoryContext, where: Where, pattern: re.Pattern[str]
    ) -> Plan[list[Place]]:
        """The scope's saved document versions holding the text, as one place (a restore
        would bring it back)."""
        held = yield from self._history_plan(ctx, pattern, scrub=False)
        if not held:
            return []
        first = next(line.strip() for line in held[0].text.split("\n") if pattern.search(line))
        versions = f"{len(held)} version{'s' if len(held) > 1 else ''}"
        made = held[0].provenance
        place = _place(
            "history",
            where,
            first,
            "words",
            provenance=made,
            workspace=ctx.workspace_id,
            key=versions,
        )
        return [place]

    def _history_plan(
        self, ctx: MemoryContext, pattern: re.Pattern[str], *, scrub: bool
    ) -> Plan[list[Document]]:
        """The saved versions of the scope's document holding the text; with `scrub`, each
        rewritten without the lines that hold it."""
        namespace = thread_scope(self.scoped.member(ctx)).child(HISTORY)
        items = yield from all_items_plan(namespace, page=PAGE)
        held = [item for item in items if pattern.search(str(item.value.get("text", "")))]
        if scrub and held:
            yield [
                PutOp(namespace, item.key, {**item.value, "text": _without(item, pattern)})
                for item in held
            ]
        return [document for item in held if (document := to_document(item)) is not None]

    def _changes_plan(
        self, owner: Owner, pattern: re.Pattern[str], *, scrub: bool
    ) -> Plan[list[tuple[str, Provenance | None]]]:
        """The befores and afters of the profile's change log that hold the text, with the
        provenance of their change; with `scrub`, each becomes FORGOTTEN."""
        namespace = (*profile_scope(_context(owner)).namespace, CHANGES)
        items = yield from all_items_plan(namespace, page=PAGE)
        found: list[tuple[str, Provenance | None]] = []
        puts: list[Op] = []
        for item in items:
            operations = item.value.get("operations") or []
            texts = [
                op[key]
                for op in operations
                if isinstance(op, dict)
                for key in ("before", "after")
                if isinstance(op.get(key), str) and pattern.search(op[key])
            ]
            if texts:
                found += [(text, provenance_of(item.value)) for text in texts]
                value = {**item.value, "operations": [_scrubbed(op, pattern) for op in operations]}
                puts.append(PutOp(namespace, item.key, value, index=False))
        if scrub and puts:
            yield puts
        return found

    def _profile_plan(self, owner: Owner, pattern: re.Pattern[str]) -> Plan[list[Place]]:
        ctx = _context(owner)
        profile = yield from self.profile.read_plan(ctx)
        if profile is None:
            return []
        changes = yield from self.profile.changes_plan(ctx, self.profile.keep_changes)
        places = []
        for section in SECTIONS:
            for bullet in profile.bullets(section):
                if pattern.search(bullet):
                    made = next(
                        (
                            change.provenance
                            for change in changes
                            if any(op.after == bullet for op in change.operations)
                        ),
                        None,
                    )
                    places.append(
                        _place("profile", "profile", bullet, "words", provenance=made, key=section)
                    )
        logged = yield from self._changes_plan(owner, pattern, scrub=False)
        if logged:
            count = f"{len(logged)} mention{'s' if len(logged) > 1 else ''}"
            text, made = logged[0]
            places.append(_place("changes", "profile", text, "words", provenance=made, key=count))
        return places

    def _bounded_plan(self, ctx: MemoryContext, pattern: re.Pattern[str]) -> Plan[list[Place]]:
        settings = yield from self.bounded.settings_plan(ctx)
        views = yield from self.bounded.read_plan(ctx, settings)
        places = []
        for target in TARGETS:
            view = views[target]
            origins = list(view.provenance) + [None] * len(view.entries)
            for entry, made in zip(view.entries, origins, strict=False):
                if pattern.search(entry):
                    places.append(
                        _place(
                            "bounded",
                            "bounded",
                            entry,
                            "words",
                            provenance=made,
                            agent=ctx.agent_id,
                            key=target,
                        )
                    )
        return places

    def _agent_plan(
        self, ctx: MemoryContext, owner: Owner, pattern: re.Pattern[str]
    ) -> Plan[list[Place]]:
        places = []
        for private in (True, False):
            scope = agent_scope(ctx, private=private)
            items = yield from all_items_plan(scope.child(ENTRIES), page=PAGE)
            for item in items:
                entry = to_entry(item)
                if entry is None or not pattern.search(f"{entry.key}\n{entry.content}"):
                    continue
                editable = private or owner.admin
                places.append(
                    _place(
                        "agent",
                        "agent_private" if private else "agent_shared",
                        entry.content,
                        "words",
                        provenance=entry.provenance,
                        agent=ctx.agent_id,
                        key=entry.key,
                        editable=editable,
                        reason=None if editable else SHARED_ENTRY,
                    )
                )
        return places

    def preview(self, owner: Owner, text: str) -> Preview:
        """Every place the owner's memory holds `text` (see the module); changes nothing.
        An empty or whitespace text is refused with MemoryWriteError."""
        return run(self.scoped.store, self.preview_plan(owner, text))

    async def apreview(self, owner: Owner, text: str) -> Preview:
        """Async twin of preview."""
        return await arun(self.scoped.store, self.preview_plan(owner, text))

    # --- forgetting ----------------------------------------------------------------------

    def apply_plan(self, preview: Preview, ids: Iterable[str] | None = None) -> Plan[Forgotten]:
        """The plan behind apply; run it inside `origin(source="forget", actor=...)` (apply
        and aapply do)."""
        chosen = preview.chosen(ids)
        owner = preview.owner
        outcomes: list[Outcome] = []
        documents: dict[tuple[Where, str | None], list[Place]] = {}
        bullets: list[Place] = []
        later: list[Place] = []
        for place in chosen:
            if place.kind == "document":
                documents.setdefault((place.where, place.workspace), []).append(place)
            elif place.kind == "profile":
                bullets.append(place)
            elif place.kind in ("history", "changes"):
                later.append(place)
            else:
                outcomes.append((yield from self._one_plan(owner, place)))
        for lines in documents.values():
            outcomes += yield from self._lines_plan(_context(owner, lines[0]), lines)
        if bullets:
            outcomes += yield from self._bullets_plan(owner, bullets)
        pattern = matcher(preview.text)
        for place in later:
            if place.kind == "history":
                scrubbed = yield from self._history_plan(
                    _context(owner, place), pattern, scrub=True
                )
                outcomes.append(_rewritten(place, len(scrubbed), "versions"))
        log = [place for place in later if place.kind == "changes"]
        if bullets or log:
            logged = yield from self._changes_plan(owner, pattern, scrub=True)
            outcomes += [_rewritten(place, len(logged), "mentions") for place in log]
        yield Purge()
        return Forgotten(tuple(outcomes))

    def _one_plan(self, owner: Owner, place: Place) -> Plan[Outcome]:
        assert place.key is not None
        try:
            if place.kind == "note":
                yield from self.scoped.delete_note_plan(_context(owner, place), place.key)
                return Outcome(place, True, "note deleted")
            ctx = MemoryContext(user_id=owner.user_id, org_id=owner.org_id, agent_id=place.agent)
            if place.kind == "bounded":
                yield from self.bounded.apply_plan(ctx, "remove", place.key, None, place.text)
                return Outcome(place, True, "entry removed")
            visibility: Visibility = "private"
            if place.where == "agent_shared":
                shared = agent_scope(ctx, private=False).child(ENTRIES)
                (item,) = yield [GetOp(shared, place.key)]
                entry = to_entry(item)
                visibility = entry.visibility if entry is not None else "shared"
            yield from forget_plan(ctx, place.key, model=False, visibility=visibility)
            return Outcome(place, True, "entry removed")
        except MemoryPluginError as exc:
            return Outcome(place, False, str(exc))

    def _lines_plan(self, ctx: MemoryContext, lines: list[Place]) -> Plan[list[Outcome]]:
        """Remove the lines from the scope's document in one new version."""
        gone = {place.text for place in lines}
        for _ in range(RETRIES):
            document = yield from self.scoped.read_document_plan(ctx)
            if document is None:
                return [Outcome(place, False, "already gone") for place in lines]
            kept, removed = [], set()
            for line in document.text.splitlines():
                if line.strip() in gone:
                    removed.add(line.strip())
                else:
                    kept.append(line)
            if not removed:
                return [Outcome(place, False, "already gone") for place in lines]
            try:
                written = yield from self.scoped.write_document_plan(
                    ctx, "\n".join(kept), document.version
                )
            except ConflictError:
                continue
            except MemoryPluginError as exc:
                return [Outcome(place, False, str(exc)) for place in lines]
            version = written.document.version
            return [
                Outcome(place, True, f"line removed (document version {version})")
                if place.text in removed
                else Outcome(place, False, "already gone")
                for place in lines
            ]
        return [Outcome(place, False, "the document kept changing; try again") for place in lines]

    def _bullets_plan(self, owner: Owner, bullets: list[Place]) -> Plan[list[Outcome]]:
        ctx = _context(owner)
        pairs = [(str(place.key), place.text) for place in bullets]
        before = yield from self.profile.read_plan(ctx)
        try:
            after = yield from self.profile.remove_bullets_plan(ctx, pairs)
        except MemoryPluginError as exc:
            return [Outcome(place, False, str(exc)) for place in bullets]

        def held(profile: Profile | None, place: Place) -> bool:
            return profile is not None and place.text in profile.bullets(str(place.key))

        return [
            Outcome(place, True, "bullet removed")
            if held(before, place) and not held(after, place)
            else Outcome(place, False, "already gone")
            for place in bullets
        ]

    def apply(self, preview: Preview, ids: Iterable[str] | None = None) -> Forgotten:
        """Remove the places `ids` names (default: every editable word match), each change
        made as a forget by the owner (provenance source "forget")."""
        with origin(source="forget", actor=preview.owner.user_id):
            return run(self.scoped.store, self.apply_plan(preview, ids))

    async def aapply(self, preview: Preview, ids: Iterable[str] | None = None) -> Forgotten:
        """Async twin of apply."""
        with origin(source="forget", actor=preview.owner.user_id):
            return await arun(self.scoped.store, self.apply_plan(preview, ids))


def threads_plan(thread_ids: Iterable[str], text: object) -> Plan[list[str]]:
    """The threads among `thread_ids` whose journal (the live one or a kept incarnation)
    mentions the text, in the order given. Thread journals are conversation history, not
    memory: a forget only lists them (deleting them is the caller's explicit choice)."""
    pattern = matcher(needle_of(text))
    found = []
    for thread_id in dict.fromkeys(thread_ids):
        kept = yield from kept_incarnations_plan(thread_id)
        for incarnation in [None, *kept]:
            entries = yield from entries_plan(thread_id, incarnation=incarnation)
            if any(pattern.search(entry.text) for entry in entries):
                found.append(thread_id)
                break
    return found
