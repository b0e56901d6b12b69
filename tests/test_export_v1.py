"""Issue 35 (point 1): an export names each item's kind by the kind's one name (schema_version
2), and an export written before that (schema_version 1: personal, agent, bounded) still
imports, into the same memory, on all three backends."""

from __future__ import annotations

import json

from memory_plugin import AgentMemory, Backend, MemoryContext
from memory_plugin.plans import run
from memory_plugin.privacy.archive import SCHEMA_VERSION, export_plan, import_plan, parse
from memory_plugin.privacy.inventory import Owner
from memory_plugin.privacy.readable import to_markdown

V1 = """{
  "format": "memory_plugin.export",
  "schema_version": 1,
  "user_id": "ann",
  "org_id": null,
  "workspaces": [],
  "counts": {"agent": 1, "bounded": 1, "personal": 1, "profile": 0, "settings": 1},
  "items": [
    {"kind": "personal", "workspace": null, "agent": null, "path": ["notes"],
     "key": "2026-10-24#000001",
     "value": {"text": "- Ann's dog is called Rex", "day": "2026-10-24", "position": 1,
               "created_at": "2026-10-24T09:00:00+00:00", "version": 1}},
    {"kind": "agent", "workspace": null, "agent": "helper", "path": ["entries"], "key": "tea",
     "value": {"content": "Ann likes green tea", "category": "preference",
               "visibility": "private", "importance": 0.5,
               "updated_at": "2026-10-24T09:00:00+00:00", "text": "tea: Ann likes green tea"}},
    {"kind": "bounded", "workspace": null, "agent": "helper", "path": ["bounded"], "key": "user",
     "value": {"entries": ["Ann cycles to work"]}},
    {"kind": "settings", "workspace": null, "agent": null, "path": [], "key": "settings",
     "value": {"values": {"note_max_chars": 300}, "locked": []}}
  ]
}
"""


def test_a_version_1_export_imports_under_the_kinds_names(backend: Backend) -> None:
    store = backend.store
    report = run(store, import_plan(parse(V1), merge=False, semantic=False))
    assert report.to_json()["imported"] == {
        "scoped_memory": 1,
        "profile": 0,
        "agent_memory": 1,
        "bounded_memory": 1,
        "settings": 1,
    }
    ctx = MemoryContext(user_id="ann", agent_id="helper")
    assert [entry.content for entry in AgentMemory(store).entries(ctx)] == ["Ann likes green tea"]
    archive = run(store, export_plan(Owner("ann")))
    document = archive.to_json()
    assert document["schema_version"] == SCHEMA_VERSION == 2
    assert [item["kind"] for item in document["items"]] == [
        "scoped_memory",
        "agent_memory",
        "bounded_memory",
        "settings",
    ]
    assert "Ann's dog is called Rex" in json.dumps(document)
    markdown = to_markdown(archive)
    assert "## Agent helper: your private entries" in markdown
    assert "## Agent helper: bounded memory" in markdown
    assert parse(archive.dumps()).items == archive.items
