"""Issue 34: what an import refuses, on all three backends, through Python, the CLI and REST.

A merge import of an export taken before a forget or a delete does not bring the forgotten or
deleted note or agent entry back: the key holds its tombstone, and the report names each item
as forgotten (or deleted) on its date; `include_forgotten` puts them back (point 4). Every
imported value is checked against its kind's schema before anything is written, so an import
cannot plant what the kinds' own reads cannot serve, and JSON nested too deeply is a 4xx,
never a 500 (point 6)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient

from memory_plugin import AgentMemory, Backend, MemoryContext, connect
from memory_plugin.cli import main
from memory_plugin.plans import run
from memory_plugin.privacy.archive import (
    FORMAT,
    ArchiveError,
    ImportReport,
    export_plan,
    import_plan,
    parse,
)
from memory_plugin.privacy.forget import Forgetter
from memory_plugin.privacy.inventory import Owner
from memory_plugin.privacy.readable import to_markdown
from memory_plugin.privacy.values import MAX_DEPTH
from memory_plugin.scope.namespaces import ROOT
from memory_plugin.scoped import ScopedMemory
from memory_plugin.settings import MemorySettings
from tests.console_seed import ANN, ANN_CTX, SECRETS, Seeded

ANN_OWNER = Owner("ann", "o1")
ANN_AGENT = MemoryContext(user_id="ann", org_id="o1", agent_id="helper")
ENTRY_KEY = "ann-secret"


def today() -> str:
    return datetime.now(UTC).date().isoformat()


def export_json(store: Any) -> str:
    return run(store, export_plan(ANN_OWNER)).dumps()


def merge(store: Any, text: str, *, include_forgotten: bool = False) -> ImportReport:
    plan = import_plan(parse(text), merge=True, semantic=False, include_forgotten=include_forgotten)
    return run(store, plan)


def everything(store: Any) -> list[Any]:
    return sorted(
        (item.namespace, item.key, json.dumps(item.value, sort_keys=True))
        for item in store.search((ROOT,), limit=10_000)
    )


def note_texts(store: Any) -> list[str]:
    return [note.body for note in ScopedMemory(store).list_notes(ANN_CTX)]


def entry_keys(client: TestClient) -> list[str]:
    answer = client.get("/api/entries/agent", headers=ANN)
    assert answer.status_code == 200, answer.text
    return [entry["key"] for entry in answer.json()["entries"]]


def skipped(report: ImportReport) -> dict[str, str]:
    return {"/".join((*h.path, h.key)): why for h, why in report.skipped}


# Point 4: what was forgotten or deleted here does not come back by import


@pytest.mark.slow
def test_a_forgotten_note_and_entry_stay_forgotten_unless_asked(
    seeded: tuple[TestClient, Seeded], backend: Backend
) -> None:
    client, keys = seeded
    before = export_json(backend.store)
    forgetter = Forgetter.over(backend.store)
    for secret in (SECRETS["note"], SECRETS["entry"]):
        done = forgetter.apply(forgetter.preview(ANN_OWNER, secret))
        assert done.removed >= 1, secret
    forgotten = everything(backend.store)
    archive = parse(export_json(backend.store))  # its tombstones import, and read as deleted
    assert f"- **{ENTRY_KEY}**: _(deleted)_" in to_markdown(archive)
    assert SECRETS["entry"] not in archive.dumps()

    report = merge(backend.store, before)
    reasons = skipped(report)
    assert reasons[f"notes/{keys.note_key}"] == f"forgotten on {today()}, not imported"
    assert reasons[f"entries/{ENTRY_KEY}"] == f"forgotten on {today()}, not imported"
    summary = report.summary()
    assert f"scoped_memory notes/{keys.note_key}: forgotten on {today()}, not imported" in summary
    assert f"agent_memory entries/{ENTRY_KEY}: forgotten on {today()}, not imported" in summary
    assert "--include-forgotten" in summary
    assert report.appended == []
    assert everything(backend.store) == forgotten
    assert not any(SECRETS["note"] in text for text in note_texts(backend.store))
    assert ENTRY_KEY not in entry_keys(client)

    back = merge(backend.store, before, include_forgotten=True)
    assert {f"{h.kind} {h.key}": was for h, was in back.reimported} == {
        f"scoped_memory {keys.note_key}": f"forgotten on {today()}",
        f"agent_memory {ENTRY_KEY}": f"forgotten on {today()}",
    }
    assert f"Ann's locker code word is {SECRETS['note']}" in note_texts(backend.store)
    assert ENTRY_KEY in entry_keys(client)
    assert sum(merge(backend.store, before).imported.values()) == 0


@pytest.mark.slow
def test_a_note_and_entry_deleted_through_rest_stay_deleted_unless_asked(
    seeded: tuple[TestClient, Seeded], backend: Backend
) -> None:
    client, keys = seeded
    before = export_json(backend.store)
    assert (
        client.delete(f"/api/personal/notes/{quote(keys.note_key)}", headers=ANN).status_code == 200
    )
    assert client.delete(f"/api/entries/agent/{ENTRY_KEY}", headers=ANN).status_code == 200
    deleted = everything(backend.store)
    assert SECRETS["entry"] not in json.dumps(deleted)  # the tombstone keeps no content

    answer = client.post("/api/import?merge=true", headers=ANN, content=before)
    assert answer.status_code == 200, answer.text
    reasons = {f"{s['kind']} {s['key']}": s["reason"] for s in answer.json()["skipped"]}
    assert reasons[f"scoped_memory {keys.note_key}"] == f"deleted on {today()}, not imported"
    assert reasons[f"agent_memory {ENTRY_KEY}"] == f"deleted on {today()}, not imported"
    assert everything(backend.store) == deleted
    assert ENTRY_KEY not in entry_keys(client)

    url = "/api/import?merge=true&include_forgotten=true"
    again = client.post(url, headers=ANN, content=before)
    assert again.status_code == 200, again.text
    assert {r["key"] for r in again.json()["reimported"]} == {keys.note_key, ENTRY_KEY}
    assert ENTRY_KEY in entry_keys(client)
    assert f"Ann's locker code word is {SECRETS['note']}" in note_texts(backend.store)


@pytest.mark.slow
def test_a_profile_deleted_by_opting_out_stays_deleted_unless_asked(
    seeded: tuple[TestClient, Seeded], backend: Backend
) -> None:
    client, _ = seeded
    before = export_json(backend.store)
    assert client.delete("/api/profile", headers=ANN).status_code == 200
    answer = client.post("/api/import?merge=true", headers=ANN, content=before)
    assert answer.status_code == 200, answer.text
    reasons = {
        s["reason"]
        for s in answer.json()["skipped"]
        if s["kind"] == "profile" and s["path"] != ["cursors"]
    }
    assert reasons == {
        "deleted when the user turned context memory off (the profile is off here), not imported"
    }
    assert client.get("/api/profile", headers=ANN).json()["profile"] is None
    assert SECRETS["profile"] not in export_json(backend.store)
    url = "/api/import?merge=true&include_forgotten=true"
    assert client.post(url, headers=ANN, content=before).status_code == 200
    assert SECRETS["profile"] in client.get("/api/profile", headers=ANN).text


@pytest.mark.slow
def test_the_cli_names_what_it_did_not_bring_back_and_brings_it_back_when_asked(
    backend_url: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if backend_url == "memory://":
        pytest.skip("a memory:// store lives in one process's connection; the CLI opens its own")
    settings = MemorySettings(agent_memory=True)
    with connect(backend_url) as opened:
        note = ScopedMemory(opened.store).remember(ANN_CTX, "Ann's locker code word is Emu4417")
        agent = AgentMemory(opened.store, defaults=settings)
        agent.store_entry(ANN_AGENT, ENTRY_KEY, "Ann's deploy key is Emu5528")
    path = tmp_path / "ann.json"
    assert main(["export", "--user", "ann", "--org", "o1", "--url", backend_url]) == 0
    path.write_text(capsys.readouterr().out, encoding="utf-8")
    with connect(backend_url) as opened:
        ScopedMemory(opened.store).delete_note(ANN_CTX, note.key)
        AgentMemory(opened.store, defaults=settings).forget(ANN_AGENT, ENTRY_KEY)

    assert main(["import", str(path), "--merge", "--url", backend_url]) == 0
    out = capsys.readouterr().out
    assert f"scoped_memory notes/{note.key}: deleted on {today()}, not imported" in out
    assert f"agent_memory entries/{ENTRY_KEY}: deleted on {today()}, not imported" in out
    with connect(backend_url) as opened:
        assert note_texts(opened.store) == []
        assert AgentMemory(opened.store, defaults=settings).entries(ANN_AGENT) == []

    argv = ["import", str(path), "--merge", "--include-forgotten", "--url", backend_url]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert f"Re-imported scoped_memory notes/{note.key}, deleted on {today()}." in out
    assert f"Re-imported agent_memory entries/{ENTRY_KEY}, deleted on {today()}." in out
    with connect(backend_url) as opened:
        assert note_texts(opened.store) == ["Ann's locker code word is Emu4417"]
        entries = AgentMemory(opened.store, defaults=settings).entries(ANN_AGENT)
        assert [entry.content for entry in entries] == ["Ann's deploy key is Emu5528"]


# Point 6: an import cannot plant what the kinds' reads cannot serve


WRONG: dict[tuple[str, tuple[str, ...]], tuple[str, Any, str]] = {
    ("scoped_memory", ("document",)): ("text", 7, "text: Input should be a valid string"),
    ("scoped_memory", ("document_history",)): ("version", "1", "version: Input should be a valid"),
    ("scoped_memory", ("notes",)): ("position", "1", "position: Input should be a valid integer"),
    ("profile", ()): ("version", None, "version: Input should be a valid integer"),
    ("profile", ("changes",)): ("operations", ["ADD"], "operations.0: Input should be"),
    ("profile", ("cursors",)): ("seq", "8", "seq: Input should be a valid integer"),
    ("agent_memory", ("entries",)): ("content", 7, "content: Input should be a valid string"),
    ("bounded_memory", ("bounded",)): ("entries", [7], "entries.0: Input should be a valid string"),
    ("settings", ()): ("values", {"note_max_chars": "many"}, "note_max_chars"),
}
"""For each kind and place: a field, a value of the wrong type for it, what the error says."""


@pytest.mark.slow
def test_a_wrong_typed_value_of_every_kind_is_refused_naming_it_and_nothing_is_written(
    seeded: tuple[TestClient, Seeded], backend: Backend
) -> None:
    client, _ = seeded
    good = json.loads(export_json(backend.store))
    places = {(item["kind"], tuple(item["path"])) for item in good["items"]}
    assert places == set(WRONG)  # every kind and place of the export is tried
    before = everything(backend.store)
    for (kind, path), (name, value, says) in WRONG.items():
        at = next(
            n
            for n, item in enumerate(good["items"])
            if (item["kind"], tuple(item["path"])) == (kind, path)
        )
        items = [dict(item) for item in good["items"]]
        item = items[at]
        items[at] = {**item, "value": {**item["value"], name: value}}
        with pytest.raises(ArchiveError) as refused:
            merge(backend.store, json.dumps({**good, "items": items}))
        message = str(refused.value)
        where = "/".join((*path, item["key"]))
        assert message.startswith(f"items[{at}] ({kind} {where}): "), message
        assert says in message, message
        assert message.endswith("nothing was imported"), message
    assert everything(backend.store) == before
    assert ENTRY_KEY in entry_keys(client)


@pytest.mark.slow
def test_an_agent_entry_the_console_could_not_serve_is_refused_over_rest(
    seeded: tuple[TestClient, Seeded], backend: Backend
) -> None:
    client, _ = seeded
    good = json.loads(export_json(backend.store))
    items = [
        {**item, "key": "planted", "value": {"content": 7}}
        if item["kind"] == "agent_memory"
        else item
        for item in good["items"]
    ]
    before = everything(backend.store)
    answer = client.post(
        "/api/import?merge=true", headers=ANN, content=json.dumps({**good, "items": items})
    )
    assert answer.status_code == 400, answer.text
    detail = answer.json()["detail"]
    assert "(agent_memory entries/planted): content: Input should be a valid string" in detail
    assert everything(backend.store) == before
    assert "planted" not in entry_keys(client)


def nested(levels: int) -> str:
    return "[" * levels + "]" * levels


def document_with(value: str) -> str:
    item = (
        '{"kind": "agent_memory", "workspace": null, "agent": "helper", "path": ["entries"], '
        f'"key": "deep", "value": {{"content": {value}}}}}'
    )
    return (
        f'{{"format": "{FORMAT}", "schema_version": 2, "user_id": "ann", "org_id": "o1", '
        f'"workspaces": [], "items": [{item}]}}'
    )


def test_a_path_that_is_not_text_is_refused_naming_the_item() -> None:
    document = json.loads(document_with('"Ann"'))
    document["items"][0]["path"] = [["entries"]]
    with pytest.raises(ArchiveError, match=r"^items\[0\]: agent_memory holds no items at path"):
        parse(json.dumps(document))


def test_json_nested_too_deeply_is_refused_with_a_message() -> None:
    with pytest.raises(ArchiveError, match="the file nests JSON too deeply"):
        parse(document_with(nested(10_000)))
    with pytest.raises(ArchiveError) as refused:
        parse(document_with(nested(MAX_DEPTH + 5)))
    assert str(refused.value).startswith(
        "items[0] (agent_memory entries/deep): the value nests lists and objects more than "
        f"{MAX_DEPTH}"
    )


@pytest.mark.slow
def test_deep_json_is_a_4xx_over_rest_and_an_error_in_the_cli(
    seeded: tuple[TestClient, Seeded],
    backend: Backend,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    client, _ = seeded
    before = everything(backend.store)
    for levels in (10_000, MAX_DEPTH + 5):
        answer = client.post(
            "/api/import?merge=true", headers=ANN, content=document_with(nested(levels))
        )
        assert answer.status_code == 400, answer.text
        assert "nest" in answer.json()["detail"]
    assert everything(backend.store) == before
    path = tmp_path / "deep.json"
    path.write_text(document_with(nested(10_000)), encoding="utf-8")
    url = f"sqlite:///{tmp_path / 'cli.db'}"
    assert main(["import", str(path), "--url", url]) == 2
    assert "the file nests JSON too deeply" in capsys.readouterr().err
