"""The nightly graph with no model setting: with MEMORY_MODEL and MEMORY_MAINTENANCE_MODEL
unset it folds the notes with the built-in offline model and logs a warning naming both
settings, as the Studio agent and the console fall back (one function,
memory_plugin.offline.default.default_model), under invoke and ainvoke on every backend and under
`langgraph dev`."""

from __future__ import annotations

import importlib.util
import json
import logging
from datetime import UTC, datetime
from pathlib import Path

import pytest
from langgraph.store.base import BaseStore

from memory_plugin import Backend, MemoryContext, connect
from memory_plugin.models import MAINTENANCE_ENV, MODEL_ENV
from memory_plugin.offline import OfflineModel
from memory_plugin.prebuilt.consolidation_graph import build_consolidation_graph
from memory_plugin.scoped import ScopedMemory
from memory_plugin.scoped.documents import Document
from memory_plugin.scoped.notes import Note
from memory_plugin.server.console import default_model as console_model
from tests.conftest import url_for
from tests.langgraph_server import ROOT, client_for, langgraph_dev
from tests.scoped_helpers import Clock

ANN = MemoryContext(user_id="ann", workspace_id="acme")
FACTS = ["Prefers tea", "Leads the Falcon team"]
UNSET = f"neither {MAINTENANCE_ENV} nor {MODEL_ENV} is set: using the built-in offline model"


@pytest.fixture(autouse=True)
def no_model_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Neither model variable is set."""
    monkeypatch.delenv(MODEL_ENV, raising=False)
    monkeypatch.delenv(MAINTENANCE_ENV, raising=False)


def _memory(store: BaseStore) -> ScopedMemory:
    """Scoped memory whose clock stands ten days back (past the 7-day minimum age)."""
    clock = Clock(datetime.now(UTC))
    clock.advance(days=-10)
    return ScopedMemory(store, clock=clock)


def _assert_folded(document: Document | None, notes: list[Note]) -> None:
    assert document is not None, "nothing was folded"
    lines = document.text.splitlines()
    assert [f"- {fact}" for fact in FACTS] == lines[-len(FACTS) :], document.text
    assert [n.consolidated for n in notes] == [True] * len(FACTS)


def test_the_nightly_graph_folds_with_the_offline_model_under_invoke(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    memory = _memory(backend.store)
    for fact in FACTS:
        memory.remember(ANN, fact)
    with caplog.at_level(logging.WARNING):
        out = build_consolidation_graph(store=backend.store).invoke({})
    assert (out["folded"], out["failed"]) == (len(FACTS), 0), out
    assert UNSET in caplog.text
    _assert_folded(memory.read_document(ANN), memory.list_notes(ANN))


async def test_the_nightly_graph_folds_with_the_offline_model_under_ainvoke(
    abackend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    memory = _memory(abackend.store)
    for fact in FACTS:
        await memory.aremember(ANN, fact)
    with caplog.at_level(logging.WARNING):
        out = await build_consolidation_graph(store=abackend.store).ainvoke({})
    assert (out["folded"], out["failed"]) == (len(FACTS), 0), out
    assert UNSET in caplog.text
    _assert_folded(await memory.aread_document(ANN), await memory.alist_notes(ANN))


def test_the_console_and_the_studio_agent_fall_back_the_same_way(
    caplog: pytest.LogCaptureFixture,
) -> None:
    with caplog.at_level(logging.WARNING):
        assert isinstance(console_model(), OfflineModel)
    assert UNSET in caplog.text
    caplog.clear()
    spec = importlib.util.spec_from_file_location("studio_agent", ROOT / "graphs/memory_agent.py")
    assert spec is not None and spec.loader is not None
    with caplog.at_level(logging.WARNING):
        spec.loader.exec_module(importlib.util.module_from_spec(spec))
    assert f"{MODEL_ENV} is not set: using the built-in offline model" in caplog.text


@pytest.mark.slow
def test_the_served_nightly_graph_folds_without_a_model_setting(
    tmp_path: Path, request: pytest.FixtureRequest
) -> None:
    database = url_for("postgres", request, tmp_path)
    with connect(database) as backend:
        memory = _memory(backend.store)
        for fact in FACTS:
            memory.remember(ANN, fact)
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps({"ops-token": {"identity": "ops", "operator": True}}))
    env = {"MEMORY_URL": database, "MEMORY_AUTH_TOKENS": str(tokens), MODEL_ENV: ""}
    with langgraph_dev(tmp_path, env, "langgraph.postgres.json") as url:
        output = client_for(url, "ops-token").runs.wait(None, "memory_consolidation", input={})
    assert (output["folded"], output["failed"]) == (len(FACTS), 0), output
    assert UNSET in (tmp_path / "server.log").read_text()
    with connect(database) as backend:
        memory = ScopedMemory(backend.store)
        _assert_folded(memory.read_document(ANN), memory.list_notes(ANN))
