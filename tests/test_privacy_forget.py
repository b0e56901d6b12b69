"""Forget everywhere (memory_plugin.privacy.forget) on every backend: a fact is found in every
kind the user's memory keeps it, with provenance and whether the user may change it, and on
apply it is gone from each, as a forget by that user; the nightly job does not bring it back,
and through the prebuilt graph a new thread neither answers it nor sees it in its prompt."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage, SystemMessage
from langgraph.store.memory import InMemoryStore
from pydantic import Field

from memory_plugin import Backend, MemoryContext, OfflineModel, create_memory_graph
from memory_plugin.agent import AgentMemory
from memory_plugin.bounded import BoundedMemory
from memory_plugin.errors import InvalidArgumentError, MemoryWriteError
from memory_plugin.privacy.forget import Forgetter
from memory_plugin.privacy.inventory import Owner
from memory_plugin.profile.memory import ProfileMemory, await_profiles, wait_for_profiles
from memory_plugin.scope import team_scope
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.consolidation import aconsolidate, consolidate
from memory_plugin.scoped.notes import NOTES
from memory_plugin.settings import MemorySettings
from tests.embeddings import INDEX

ANN = MemoryContext(user_id="ann", workspace_id="acme")
ANN_HOME = MemoryContext(user_id="ann")
TEAM = MemoryContext(user_id="ann", workspace_id="acme", thread_visibility="shared")
HELPER = MemoryContext(user_id="ann", agent_id="helper")
BOB = MemoryContext(user_id="bob", workspace_id="acme")
SETTINGS = MemorySettings(agent_memory=True, bounded_memory=True)


def seed(store: Any) -> None:
    """The fact "Rex" in every kind of Ann's memory, and things that must stay."""
    scoped = ScopedMemory(store, settings=SETTINGS)
    scoped.remember(ANN, "My dog is called Rex")
    scoped.remember(ANN, "The offsite is in Lisbon")
    scoped.remember(ANN_HOME, "rex sleeps in the kitchen")
    scoped.write_document(ANN, "# Memory\n- The dog is called Rex.\n- Prefers tea.")
    scoped.remember(TEAM, "Rex visits the office on Fridays")
    scoped.remember(BOB, "Bob's cat is called Rex")
    profile = ProfileMemory(store, model=OfflineModel(), settings=SETTINGS)
    profile.consolidate(ANN_HOME, "Hi, my name is Ann. My dog is called Rex.", "Nice!")
    bounded = BoundedMemory(store, settings=SETTINGS)
    bounded.apply(HELPER, "add", "user", "Has a dog called Rex")
    bounded.apply(HELPER, "add", "memory", "Ann deploys on Fridays")
    agent = AgentMemory(store, settings=SETTINGS)
    agent.store_entry(HELPER, "dog", "Ann's dog is Rex")
    agent.store_entry(HELPER, "pets", "Dogs like Rex need walks", visibility="shared")


def where(preview: Any) -> list[tuple[str, str, str, bool]]:
    return sorted((p.kind, p.where, p.workspace or "-", p.editable) for p in preview.places)


def test_a_fact_is_found_in_every_kind_and_forgotten_everywhere(backend: Backend) -> None:
    seed(backend.store)
    forgetter = Forgetter.over(backend.store, SETTINGS)
    owner = Owner("ann", workspaces=("acme",))
    preview = forgetter.preview(owner, "  REX ")
    assert preview.text == "REX"
    assert where(preview) == [
        ("agent_memory", "agent_private", "-", True),
        ("agent_memory", "agent_shared", "-", False),
        ("bounded_memory", "bounded_memory", "-", True),
        ("changes", "profile", "-", True),
        ("document", "personal", "acme", True),
        ("history", "personal", "acme", True),
        ("note", "personal", "-", True),
        ("note", "personal", "acme", True),
        ("note", "team", "acme", True),
        ("profile", "profile", "-", True),
    ]
    assert all(p.match == "words" for p in preview.places)
    unattributed = ("document", "history", "changes")
    assert all(p.provenance is not None for p in preview.places if p.kind not in unattributed)
    shared = next(p for p in preview.places if p.where == "agent_shared")
    assert "platform admin" in str(shared.reason)
    note = next(p for p in preview.places if p.kind == "note" and p.where == "team")
    assert (note.text, note.provenance and note.provenance.actor) == (
        "Rex visits the office on Fridays",
        "ann",
    )
    with pytest.raises(MemoryWriteError, match="platform admin"):
        forgetter.apply(preview, [shared.id])

    done = forgetter.apply(preview)
    assert done.removed == 9 and done.summary() == "Forgot 9 place(s)."
    assert forgetter.preview(owner, "rex").places == (shared,)

    scoped = ScopedMemory(backend.store, settings=SETTINGS)
    assert [n.body for n in scoped.list_notes(ANN)] == ["The offsite is in Lisbon"]
    assert scoped.list_notes(ANN_HOME) == [] and scoped.list_notes(TEAM) == []
    assert [n.body for n in scoped.list_notes(BOB)] == ["Bob's cat is called Rex"]
    tombstone = backend.store.get(team_scope(TEAM).child(NOTES), str(note.key))
    assert tombstone is not None and tombstone.value["deleted_by"] == "ann"
    assert tombstone.value["deletion"]["source"] == "forget"
    document = scoped.read_document(ANN)
    assert document is not None and document.text == "# Memory\n- Prefers tea."
    assert document.provenance is not None
    assert (document.provenance.source, document.provenance.actor) == ("forget", "ann")
    versions = scoped.history(ANN)
    assert len(versions) == 2 and not any("Rex" in v.text for v in versions)
    profile = ProfileMemory(backend.store, settings=SETTINGS)
    kept = profile.read(ANN_HOME)
    assert kept is not None and kept.bullets("Identity") == ("Name is Ann.",)
    (change, *_) = profile.changes(ANN_HOME)
    assert [(op.op, op.before) for op in change.operations] == [("DELETE", "[forgotten]")]
    logged = [op.before or op.after or "" for c in profile.changes(ANN_HOME) for op in c.operations]
    assert not any("Rex" in text for text in logged)
    assert change.provenance is not None and change.provenance.source == "forget"
    views = BoundedMemory(backend.store, settings=SETTINGS).read(HELPER)
    assert (views["user"].entries, views["memory"].entries) == ([], ["Ann deploys on Fridays"])
    entries = AgentMemory(backend.store, settings=SETTINGS).entries(HELPER)
    assert [(e.key, e.visibility) for e in entries] == [("pets", "shared")]

    again = forgetter.apply(preview)
    assert again.removed == 0
    rewritten = ("document", "profile", "history", "changes")
    assert {o.detail for o in again.outcomes if o.place.kind in rewritten} == {"already gone"}


def test_a_platform_admin_may_forget_a_shared_agent_entry(backend: Backend) -> None:
    seed(backend.store)
    forgetter = Forgetter.over(backend.store, SETTINGS)
    preview = forgetter.preview(Owner("ann", admin=True), "Rex")
    shared = next(p for p in preview.places if p.where == "agent_shared")
    assert shared.editable
    assert forgetter.apply(preview, [shared.id]).removed == 1
    keys = [e.key for e in AgentMemory(backend.store, settings=SETTINGS).entries(HELPER)]
    assert keys == ["dog"]


def test_only_the_places_named_are_forgotten(backend: Backend) -> None:
    seed(backend.store)
    forgetter = Forgetter.over(backend.store, SETTINGS)
    preview = forgetter.preview(Owner("ann"), "rex")
    assert not any(p.where == "team" for p in preview.places)  # not a member: not searched
    note = next(p for p in preview.places if p.kind == "note" and p.workspace is None)
    assert [o.detail for o in forgetter.apply(preview, [note.id]).outcomes] == ["note deleted"]
    assert len(forgetter.preview(Owner("ann"), "rex").places) == len(preview.places) - 1
    with pytest.raises(InvalidArgumentError, match="no such place"):
        forgetter.apply(preview, ["nope"])


@pytest.mark.parametrize("text", ["", "   ", "\n\t"])
def test_an_empty_text_is_refused_and_changes_nothing(backend: Backend, text: str) -> None:
    seed(backend.store)
    forgetter = Forgetter.over(backend.store, SETTINGS)
    with pytest.raises(MemoryWriteError, match="empty"):
        forgetter.preview(Owner("ann"), text)
    assert len(forgetter.preview(Owner("ann"), "Rex").places) == 9


def test_words_match_whole_words_and_phrases_case_insensitively() -> None:
    store = InMemoryStore()
    scoped = ScopedMemory(store)
    for text in ("Rex is a good dog", "Rexford is a town", "T-REX toy", "a good   dog, Rex"):
        scoped.remember(ANN_HOME, text)
    forgetter = Forgetter.over(store)
    found = [p.text for p in forgetter.preview(Owner("ann"), "rex").places]
    assert found == ["Rex is a good dog", "T-REX toy", "a good dog, Rex"]
    found = [p.text for p in forgetter.preview(Owner("ann"), "GOOD dog").places]
    assert found == ["Rex is a good dog", "a good dog, Rex"]


def test_with_a_vector_index_notes_by_meaning_are_candidates_to_confirm() -> None:
    store = InMemoryStore(index=INDEX)  # type: ignore[arg-type]
    scoped = ScopedMemory(store)
    scoped.remember(ANN_HOME, "Files the taxes in April")
    scoped.remember(ANN_HOME, "Pays the tax advisor")
    forgetter = Forgetter.over(store)
    preview = forgetter.preview(Owner("ann"), "taxes")
    by_match = {p.text: p.match for p in preview.places}
    assert by_match["Files the taxes in April"] == "words"
    assert by_match["Pays the tax advisor"] == "meaning"
    assert [p.text for p in preview.chosen()] == ["Files the taxes in April"]
    candidate = next(p for p in preview.places if p.match == "meaning")
    forgetter.apply(preview, [p.id for p in preview.places])
    assert scoped.list_notes(ANN_HOME) == []
    assert candidate.provenance is not None


async def test_preview_and_apply_under_async(abackend: Backend) -> None:
    scoped = ScopedMemory(abackend.store)
    await scoped.aremember(ANN, "My dog is called Rex")
    await scoped.awrite_document(ANN, "# Memory\n- The dog is called Rex.\n- Likes tea.")
    forgetter = Forgetter.over(abackend.store)
    preview = await forgetter.apreview(Owner("ann"), "rex")
    assert sorted(p.kind for p in preview.places) == ["document", "history", "note"]
    assert (await forgetter.aapply(preview)).removed == 3
    versions = await scoped.ahistory(ANN)
    assert len(versions) == 2 and not any("Rex" in version.text for version in versions)
    assert await scoped.alist_notes(ANN) == []
    document = await scoped.aread_document(ANN)
    assert document is not None and document.text == "# Memory\n- Likes tea."


def say(graph: Any, text: str, thread: str) -> str:
    out = graph.invoke(
        {"messages": [HumanMessage(text)]}, {"configurable": {"thread_id": thread}}, context=ANN
    )
    assert wait_for_profiles()
    return str(out["messages"][-1].text)


def test_the_nightly_job_does_not_bring_a_forgotten_fact_back(backend: Backend) -> None:
    graph = create_memory_graph(
        OfflineModel(), [], store=backend.store, checkpointer=backend.checkpointer
    )
    say(graph, "remember that my dog is called Rex", "t1")
    say(graph, "remember that the offsite is in Lisbon", "t1")
    later = datetime.now(UTC) + timedelta(days=9)
    consolidate(backend.store, OfflineModel(), now=later)
    scoped = ScopedMemory(backend.store)
    document = scoped.read_document(ANN)
    assert document is not None and "Rex" in document.text
    forgetter = Forgetter.over(backend.store)
    kinds = sorted(p.kind for p in forgetter.preview(Owner("ann"), "Rex").places)
    assert kinds == ["changes", "document", "history", "note", "profile"]
    forgetter.apply(forgetter.preview(Owner("ann"), "Rex"))
    say(graph, "remember that the train leaves at nine", "t1")
    consolidate(backend.store, OfflineModel(), now=later + timedelta(days=9))
    document = scoped.read_document(ANN)
    assert document is not None
    assert "Rex" not in document.text and "Lisbon" in document.text and "nine" in document.text
    assert forgetter.preview(Owner("ann"), "Rex").places == ()


async def test_a_fact_forgotten_before_the_nightly_job_is_never_folded(abackend: Backend) -> None:
    scoped = ScopedMemory(abackend.store)
    await scoped.aremember(ANN, "My dog is called Rex")
    await scoped.aremember(ANN, "The offsite is in Lisbon")
    forgetter = Forgetter.over(abackend.store)
    await forgetter.aapply(await forgetter.apreview(Owner("ann"), "rex"))
    await aconsolidate(abackend.store, OfflineModel(), now=datetime.now(UTC) + timedelta(days=9))
    document = await scoped.aread_document(ANN)
    assert document is not None
    assert "Lisbon" in document.text and "Rex" not in document.text


class Recording(OfflineModel):
    """The offline model, keeping the system message of every turn's prompt (the calls with
    the memory tools bound; maintenance prompts come without)."""

    systems: list[str] = Field(default_factory=list)

    def respond(self, messages: Any, **kwargs: Any) -> Any:
        first: BaseMessage | None = messages[0] if messages else None
        if isinstance(first, SystemMessage) and kwargs.get("tools"):
            self.systems.append(first.text)
        return super().respond(messages, **kwargs)


def test_after_a_forget_a_new_thread_neither_answers_nor_sees_the_fact(backend: Backend) -> None:
    model = Recording()
    graph = create_memory_graph(model, [], store=backend.store, checkpointer=backend.checkpointer)
    assert say(graph, "Remember that my dog is called Rex.", "first") == (
        "Noted: your dog is called Rex."
    )
    say(graph, "I have a dog called Rex.", "first")
    assert "Rex" in say(graph, "What is my dog called?", "second")
    assert "Rex" in model.systems[-1]
    forgetter = Forgetter.over(backend.store)
    preview = forgetter.preview(Owner("ann"), "Rex")
    assert {p.kind for p in preview.places} == {"note", "profile", "changes"}
    forgetter.apply(preview)
    model.systems.clear()
    answer = say(graph, "What is my dog called?", "third")
    assert "Rex" not in answer
    assert model.systems and not any("Rex" in system for system in model.systems)


async def test_after_a_forget_a_new_thread_does_not_know_under_ainvoke(
    abackend: Backend,
) -> None:
    model = Recording()
    graph = create_memory_graph(model, [], store=abackend.store, checkpointer=abackend.checkpointer)

    async def asay(text: str, thread: str) -> str:
        config = {"configurable": {"thread_id": thread}}
        out = await graph.ainvoke({"messages": [HumanMessage(text)]}, config, context=ANN)
        await await_profiles()
        return str(out["messages"][-1].text)

    await asay("Remember that my dog is called Rex.", "first")
    forgetter = Forgetter.over(abackend.store)
    await forgetter.aapply(await forgetter.apreview(Owner("ann"), "rex"))
    model.systems.clear()
    assert "Rex" not in await asay("What is my dog called?", "second")
    assert model.systems and not any("Rex" in system for system in model.systems)
