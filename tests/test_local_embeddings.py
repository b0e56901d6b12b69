"""The `local` extra: offline all-MiniLM-L6-v2 embeddings behind a LangChain Embeddings, used
by langgraph.json when installed, the hashed-trigram placeholder otherwise.

Tests that need the extra are marked `extra("local")`: they skip with the reason when it is not
installed, and fail when MEMORY_TEST_EXTRAS names it (tests/conftest.py)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from memory_plugin import connect
from memory_plugin.offline import local_embeddings as local
from memory_plugin.scoped import ScopedMemory
from tests.scoped_helpers import ANN, Clock

ROOT = Path(__file__).resolve().parents[1]


def _cosine(a: list[float], b: list[float]) -> float:
    return sum(x * y for x, y in zip(a, b, strict=True))


@pytest.mark.extra("local")
def test_local_embeddings_are_normalised_and_semantic() -> None:
    embed = local.LocalEmbeddings()
    cat, kitten, tax = embed.embed_documents(
        ["Ann adopted a cat", "She brought home a kitten", "The quarterly tax return is due"]
    )
    assert len(cat) == local.LOCAL_DIMS
    assert math.isclose(sum(x * x for x in cat), 1.0, rel_tol=1e-4)
    assert _cosine(cat, kitten) > _cosine(cat, tax) + 0.2
    assert embed.embed_query("Ann adopted a cat") == pytest.approx(cat, abs=1e-5)
    assert embed.embed_documents([]) == []


@pytest.mark.extra("local")
def test_recall_with_local_embeddings_finds_a_paraphrase(backend_url: str) -> None:
    with connect(backend_url, index=local.default_index()) as backend:
        memory = ScopedMemory(backend.store, clock=Clock())
        memory.remember(ANN, "Bought a kitten from the shelter last week")
        memory.remember(ANN, "The quarterly tax return is due in April")
        memory.remember(ANN, "Plays chess on Sundays")
        hits = memory.recall(ANN, "Does Ann have a pet?")
    assert hits[0].note.body == "Bought a kitten from the shelter last week"


def test_without_the_extra_the_placeholder_is_the_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(local, "local_available", lambda: False)
    index = local.default_index()
    assert index["embed"] is local.placeholder and index["dims"] == local.LOCAL_DIMS
    assert len(index["embed"](["hello"])[0]) == local.LOCAL_DIMS
    with pytest.raises(ImportError, match=r"pip install -e '\.\[local\]'"):
        local.LocalEmbeddings()


def test_langgraph_json_dims_match_the_graph_embedding() -> None:
    from graphs import embeddings

    config = json.loads((ROOT / "langgraph.json").read_text())["store"]["index"]
    assert config["dims"] == embeddings.DIMS == local.LOCAL_DIMS
    vectors = (
        embeddings.embed.embed_documents(["a note"])
        if hasattr(embeddings.embed, "embed_documents")
        else embeddings.embed(["a note"])
    )
    assert len(vectors[0]) == config["dims"]
