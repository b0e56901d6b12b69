"""Forget a fact everywhere a user's memory keeps it.

`Forgetter.preview` asks every kind (memory_plugin.kinds.KINDS) where the user's memory holds
a text (a fact, a name): each kind's `places_plan` (today: personal notes, document lines and
saved versions in and outside workspaces, the team memory of the workspaces they belong to,
profile bullets and change log, bounded entries, private and shared agent entries). Words
match case-insensitively as a phrase on word boundaries (`matcher`); where the store has a
vector index, the notes nearest in meaning are added as candidates (`match="meaning"`) for the
user to confirm. Every place carries its provenance and whether the user may change it: as in
the console, every member edits their workspace's team memory, and only a platform admin
changes an agent's shared or read-only entries.

`Forgetter.apply` hands the places chosen (by default every editable word match) back to the
kind that found each (`forget_places_plan`); every change is made under
`provenance.origin(source="forget", actor=user_id)`. No model is asked: the edits are
deterministic. Places are found again by their text when applied, so a place already gone is
reported as such, never an error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

from langgraph.store.base import BaseStore

from memory_plugin import kinds
from memory_plugin.backends.erasure import Purge
from memory_plugin.base import MemoryService, Parts
from memory_plugin.context_management.journal import entries_plan, kept_incarnations_plan
from memory_plugin.errors import InvalidArgumentError, MemoryWriteError
from memory_plugin.holdings import Outcome, Owner, Place
from memory_plugin.models.maintenance import maintenance_of
from memory_plugin.plans import Plan, arun, run
from memory_plugin.privacy.progress import Progress, quiet
from memory_plugin.privacy.settled import ajobs_landed, jobs_landed
from memory_plugin.provenance import origin
from memory_plugin.settings import MemorySettings, SettingsCache

__all__ = ["Forgetter", "Forgotten", "Outcome", "Owner", "Place", "Preview", "matcher"]
MAX_TEXT = 500


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


def finds(kind: type[MemoryService]) -> bool:
    """Whether the kind looks for places (it offers a forget its own `places_plan`)."""
    return kind.places_plan is not MemoryService.places_plan


class Forgetter:
    """Finds and forgets a text across the memory kinds of one store (see the module): over
    the built `services` of the kinds that look for places."""

    def __init__(self, *services: MemoryService) -> None:
        self.services = [service for service in services if finds(type(service))]
        if not self.services:
            raise InvalidArgumentError("a forget needs at least one kind that finds places")

    @classmethod
    def over(cls, store: BaseStore, settings: MemorySettings | None = None) -> Forgetter:
        """A forgetter over every kind of KINDS that finds places, on `store` with one
        settings source."""
        parts = Parts(store, SettingsCache(settings), maintenance_of(None))
        return cls(*(kind.build(parts) for kind in kinds.KINDS if finds(kind)))

    @property
    def store(self) -> BaseStore:
        """The store the kinds are over."""
        return self.services[0].store

    def preview_plan(self, owner: Owner, text: object, progress: Progress = quiet) -> Plan[Preview]:
        """The plan behind preview."""
        needle = needle_of(text)
        pattern = matcher(needle)
        places: list[Place] = []
        for done, service in enumerate(self.services, start=1):
            found = yield from service.places_plan(owner, needle, pattern)
            places += [replace(place, source=type(service).__name__) for place in found]
            progress("kinds searched", done, len(self.services))
        return Preview(needle, owner, tuple(places))

    def preview(self, owner: Owner, text: str, progress: Progress = quiet) -> Preview:
        """Every place the owner's memory holds `text` (see the module); changes nothing.
        An empty or whitespace text is refused with MemoryWriteError. `progress` hears how
        many kinds were searched. This process's background jobs land first
        (memory_plugin.privacy.settled)."""
        jobs_landed("forgetting")
        return run(self.store, self.preview_plan(owner, text, progress))

    async def apreview(self, owner: Owner, text: str, progress: Progress = quiet) -> Preview:
        """Async twin of preview."""
        await ajobs_landed("forgetting")
        return await arun(self.store, self.preview_plan(owner, text, progress))

    def apply_plan(
        self, preview: Preview, ids: Iterable[str] | None = None, progress: Progress = quiet
    ) -> Plan[Forgotten]:
        """The plan behind apply; run it inside `origin(source="forget", actor=...)` (apply
        and aapply do)."""
        chosen = preview.chosen(ids)
        pattern = matcher(preview.text)
        outcomes: list[Outcome] = []
        for service in self.services:
            mine = [place for place in chosen if place.source == type(service).__name__]
            if mine:
                outcomes += yield from service.forget_places_plan(preview.owner, mine, pattern)
                progress("places forgotten", len(outcomes), len(chosen))
        yield Purge()
        return Forgotten(tuple(outcomes))

    def apply(
        self, preview: Preview, ids: Iterable[str] | None = None, progress: Progress = quiet
    ) -> Forgotten:
        """Remove the places `ids` names (default: every editable word match), each change
        made as a forget by the owner (provenance source "forget"); `progress` hears how many
        places were handled."""
        with origin(source="forget", actor=preview.owner.user_id):
            return run(self.store, self.apply_plan(preview, ids, progress))

    async def aapply(
        self, preview: Preview, ids: Iterable[str] | None = None, progress: Progress = quiet
    ) -> Forgotten:
        """Async twin of apply."""
        with origin(source="forget", actor=preview.owner.user_id):
            return await arun(self.store, self.apply_plan(preview, ids, progress))


def threads_plan(
    thread_ids: Iterable[str], text: object, progress: Progress = quiet
) -> Plan[list[str]]:
    """The threads among `thread_ids` whose journal (the live one or a kept incarnation)
    mentions the text, in the order given; `progress` hears how many threads were read.
    Thread journals are conversation history, not memory: a forget only lists them (deleting
    them is the caller's explicit choice)."""
    pattern = matcher(needle_of(text))
    found = []
    threads = list(dict.fromkeys(thread_ids))
    for done, thread_id in enumerate(threads, start=1):
        kept = yield from kept_incarnations_plan(thread_id)
        for incarnation in [None, *kept]:
            entries = yield from entries_plan(thread_id, incarnation=incarnation)
            if any(pattern.search(entry.text) for entry in entries):
                found.append(thread_id)
                break
        progress("journals read", done, len(threads))
    return found
