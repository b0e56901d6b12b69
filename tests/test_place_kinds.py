"""The console's forget answers every kind's places in the kind's own words (issue 35, point 1):
a kind added to KINDS has its places previewed and forgotten over REST, with nothing else
changed (before, the answer's schema listed the five kinds' words and a sixth kind's place
made the preview fail)."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from memory_plugin import Backend, kinds
from memory_plugin.server import create_app
from tests.test_console_forget import ANN, TOKENS
from tests.test_privacy_kinds import Diary, page, seed


@pytest.mark.slow
def test_a_new_kinds_place_is_previewed_and_forgotten_over_rest(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(kinds, "KINDS", (*kinds.KINDS, Diary))
    seed(backend.store)
    client = TestClient(create_app(backend.store, tokens=TOKENS, checkpointer=backend.checkpointer))
    answer = client.post("/api/forget/preview", json={"text": "rex"}, headers=ANN)
    assert answer.status_code == 200, answer.text
    preview = answer.json()
    (diary,) = [p for p in preview["places"] if p["kind"] == "page"]
    assert (diary["where"], diary["label"]) == ("diary", "diary: monday")
    done = client.post(
        f"/api/forget/{preview['preview_id']}/apply", json={"places": [diary["id"]]}, headers=ANN
    )
    assert done.status_code == 200, done.text
    assert [o["detail"] for o in done.json()["outcomes"]] == ["page torn out"]
    assert page(backend.store, "monday") is None
    assert page(backend.store, "tuesday").value == {"text": "Tea with Bea"}
