"""Privacy loops over the kinds (issue 35 points 1 and 4): a kind registered in
memory_plugin.kinds.KINDS whose privacy hooks say what it keeps of a user and where a text
occurs in it is exported (JSON and Markdown), imported back, found and forgotten by forget
everywhere, and deleted with the user, on every backend, without a line of privacy/ naming
it; a kind offering no hooks adds nothing to any of them."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from langgraph.store.base import BaseStore, PutOp

from memory_plugin import Backend, MemoryContext, kinds
from memory_plugin.base import MemoryService
from memory_plugin.holdings import (
    Held,
    Holding,
    Outcome,
    Owner,
    Place,
    Shelf,
    held_plan,
    nowhere_else,
    place,
)
from memory_plugin.plans import Plan, run
from memory_plugin.privacy.archive import ArchiveError, export_plan, import_plan, parse
from memory_plugin.privacy.erase import erase_user
from memory_plugin.privacy.forget import Forgetter
from memory_plugin.privacy.readable import to_markdown
from memory_plugin.scope.namespaces import ROOT
from memory_plugin.scoped import ScopedMemory

ANN = Owner("ann")
PAGES = "pages"


def diary_root(owner: Owner, workspace: str | None, agent: str | None) -> tuple[str, ...]:
    return (ROOT, "diary", owner.label())


def page_problem(key: str, value: dict[str, Any]) -> str | None:
    return None if isinstance(value.get("text"), str) else "a page has a text"


def render(workspace: str | None, agent: str | None, items: list[Held]) -> list[str]:
    return ["## Diary", "", *(f"- {h.key}: {h.value['text']}" for h in items), ""]


class Diary(MemoryService):
    """A sixth kind: pages of a diary, one namespace per user."""

    name = "diary"
    holdings = (
        Holding("diary", diary_root, (Shelf((PAGES,), page_problem),), nowhere_else, render),
    )

    def places_plan(self, owner: Owner, needle: str, pattern: re.Pattern[str]) -> Plan[list[Place]]:
        found = yield from held_plan(self.holdings[0], owner, None)
        return [
            place("page", "diary", h.value["text"], "words", scope="diary", what=h.key, key=h.key)
            for h in found
            if pattern.search(h.value["text"])
        ]

    def forget_places_plan(
        self, owner: Owner, places: list[Place], pattern: re.Pattern[str]
    ) -> Plan[list[Outcome]]:
        namespace = (*diary_root(owner, None, None), PAGES)
        yield [PutOp(namespace, str(each.key), None) for each in places]
        return [Outcome(each, True, "page torn out") for each in places]


class Silent(MemoryService):
    """A kind that keeps nothing of a user: it offers no privacy hooks."""

    name = "silent"


@pytest.fixture
def registry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(kinds, "KINDS", (*kinds.KINDS, Diary, Silent))


def write_page(store: BaseStore, key: str, text: str) -> None:
    store.put((*diary_root(ANN, None, None), PAGES), key, {"text": text})


def page(store: BaseStore, key: str) -> Any:
    return store.get((*diary_root(ANN, None, None), PAGES), key)


def seed(store: BaseStore) -> None:
    ScopedMemory(store).remember(MemoryContext(user_id="ann"), "My dog is called Rex")
    write_page(store, "monday", "Walked Rex in the rain")
    write_page(store, "tuesday", "Tea with Bea")


@pytest.mark.slow
def test_a_new_kind_is_exported_imported_and_deleted_with_the_user(
    registry: None, backend: Backend
) -> None:
    store = backend.store
    seed(store)
    archive = run(store, export_plan(ANN))
    diary = [(h.key, h.value["text"]) for h in archive.items if h.kind == "diary"]
    assert diary == [("monday", "Walked Rex in the rain"), ("tuesday", "Tea with Bea")]
    document = archive.to_json()
    assert document["counts"] == {
        "scoped_memory": 1,
        "profile": 0,
        "agent_memory": 0,
        "bounded_memory": 0,
        "diary": 2,
        "settings": 0,
    }
    assert "## Diary\n\n- monday: Walked Rex in the rain\n- tuesday: Tea with Bea" in (
        to_markdown(archive)
    )

    erased = erase_user(store, ANN)
    assert erased.counts["diary"] == 2
    assert "silent" not in erased.to_json()["deleted"]
    assert page(store, "monday") is None
    assert run(store, export_plan(ANN)).items == ()

    report = run(store, import_plan(parse(archive.dumps()), merge=False, semantic=False))
    assert report.imported["diary"] == 2
    assert page(store, "monday").value == {"text": "Walked Rex in the rain"}
    assert run(store, export_plan(ANN)).dumps() == archive.dumps()


@pytest.mark.slow
def test_forget_everywhere_finds_and_forgets_in_a_new_kind(
    registry: None, backend: Backend
) -> None:
    store = backend.store
    seed(store)
    forgetter = Forgetter.over(store)
    assert {type(service) for service in forgetter.services} >= {Diary, ScopedMemory}
    assert not any(isinstance(service, Silent) for service in forgetter.services)
    preview = forgetter.preview(ANN, "rex")
    found = sorted((p.kind, p.label, p.text) for p in preview.places)
    assert found == [
        ("note", f"personal memory: note {preview.places[0].key}", "My dog is called Rex"),
        ("page", "diary: monday", "Walked Rex in the rain"),
    ]
    done = forgetter.apply(preview)
    assert sorted(o.detail for o in done.outcomes) == ["note deleted", "page torn out"]
    assert page(store, "monday") is None
    assert page(store, "tuesday").value == {"text": "Tea with Bea"}
    assert forgetter.preview(ANN, "rex").places == ()


def test_an_import_refuses_a_bad_item_of_a_new_kind(registry: None, backend: Backend) -> None:
    document = {
        "format": "memory_plugin.export",
        "schema_version": 2,
        "user_id": "ann",
        "org_id": None,
        "workspaces": [],
        "items": [
            {
                "kind": "diary",
                "workspace": None,
                "agent": None,
                "path": [PAGES],
                "key": "monday",
                "value": {"text": 7},
            }
        ],
    }
    with pytest.raises(ArchiveError, match=r"\(diary pages/monday\): a page has a text"):
        parse(json.dumps(document))
    silent = {**document, "items": [{**document["items"][0], "kind": "silent"}]}
    with pytest.raises(ArchiveError, match="unknown kind 'silent'"):
        parse(json.dumps(silent))
