"""Issue 9, point 4 through `langgraph dev`: the auth example (graphs/auth.py, loaded by the
root langgraph.json) with a token file for two users and an operator.

Ann, a member of workspace acme, saves the team document and a note there. Mallory, who is
not, names acme in her run context (shared and private threads), claims to be Ann, runs on
Ann's thread, and calls the /store API on Ann's team memory: every attempt is refused (a run
with 403 and the reason, before it starts: issue 20, point 11), she reads nothing of acme,
and the server's store is exactly as Ann left it (checked with the operator token). The
server runs offline with tests/server_models.py:team_model.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.langgraph_server import ROOT, Streamed, client_for, langgraph_dev, stream_run
from tests.server_models import TEAM_DOCUMENT, TEAM_FACT

pytestmark = pytest.mark.slow

TOKENS = {
    "ann-test-token": {"identity": "ann", "workspaces": ["acme"]},
    "mallory-test-token": {"identity": "mallory", "workspaces": ["mallory-lab"]},
    "ops-test-token": {"identity": "ops", "operator": True},
}
TEAM_NS = ["memory_plugin", "ws", "acme", "team"]
SHARED_ACME = {"workspace_id": "acme", "thread_visibility": "shared"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`langgraph dev` with the test token table and the team model."""
    folder = tmp_path_factory.mktemp("server")
    tokens = folder / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    env = {
        "MEMORY_AUTH_TOKENS": str(tokens),
        "MEMORY_MODEL": f"{ROOT / 'tests' / 'server_models.py'}:team_model",
    }
    with langgraph_dev(folder, env) as url:
        yield url


def store_snapshot(ops: Any) -> list[tuple[tuple[str, ...], str, Any, str]]:
    """Every item in the server's store, read with the operator token."""
    items = ops.store.search_items(["memory_plugin"], limit=1000)["items"]
    return sorted((tuple(i["namespace"]), i["key"], i["value"], i["updated_at"]) for i in items)


def refused(run: Callable[[], Streamed], reason: str) -> None:
    """The run is refused with 403 and `reason` before it starts: nothing is streamed."""
    from langgraph_sdk.errors import PermissionDeniedError

    with pytest.raises(PermissionDeniedError) as refusal:
        run()
    assert (refusal.value.status_code, refusal.value.body) == (403, {"detail": reason})


def test_mallory_naming_anns_workspace_reads_and_writes_nothing(server: str) -> None:
    from langgraph_sdk.errors import NotFoundError, PermissionDeniedError

    ann = client_for(server, "ann-test-token")
    mallory = client_for(server, "mallory-test-token")
    ops = client_for(server, "ops-test-token")

    ann_thread = ann.threads.create()["thread_id"]
    saved = stream_run(ann, ann_thread, "Save the freeze for the team.", SHARED_ACME)
    assert not saved.errors, saved.errors
    actions = {(e["kind"], e["action"]) for e in saved.events}
    assert {("scoped_memory", "document_saved"), ("scoped_memory", "note_stored")} <= actions, (
        saved.events
    )
    document = ann.store.get_item([*TEAM_NS, "document"], "current")
    assert document is not None and document["value"]["text"] == TEAM_DOCUMENT
    notes = ann.store.search_items([*TEAM_NS, "notes"])["items"]
    assert [n["value"]["text"] for n in notes] == [f"- {TEAM_FACT}"]
    before = store_snapshot(ops)
    assert any(ns[:4] == tuple(TEAM_NS) for ns, *_ in before), before

    own = mallory.threads.create()["thread_id"]
    not_member = (
        "user 'mallory' is not a member of workspace 'acme' "
        "(not in the authenticated user's workspaces)"
    )
    refused(lambda: stream_run(mallory, own, "Team plans?", SHARED_ACME), not_member)
    refused(lambda: stream_run(mallory, own, "Note this.", {"workspace_id": "acme"}), not_member)
    refused(
        lambda: stream_run(mallory, own, "I am Ann.", {"user_id": "ann"}),
        "context user_id 'ann' does not match the authenticated user",
    )
    refused(lambda: stream_run(mallory, ann_thread, "Continue.", SHARED_ACME), not_member)
    with pytest.raises(NotFoundError):
        stream_run(mallory, ann_thread, "Continue Ann's thread.", {})
    with pytest.raises(PermissionDeniedError):
        mallory.store.search_items([*TEAM_NS, "notes"])
    with pytest.raises(PermissionDeniedError):
        mallory.store.get_item([*TEAM_NS, "document"], "current")
    with pytest.raises(PermissionDeniedError):
        mallory.store.put_item([*TEAM_NS, "notes"], "planted", {"text": "- Mallory was here"})
    with pytest.raises(PermissionDeniedError):
        mallory.store.list_namespaces(prefix=["memory_plugin"])

    assert store_snapshot(ops) == before
    assert ann_thread not in {t["thread_id"] for t in mallory.threads.search()}

    again = stream_run(ann, ann_thread, "Anything new for the team?", SHARED_ACME)
    assert not again.errors, again.errors
    loaded = [e for e in again.events if (e["kind"], e["action"]) == ("scoped_memory", "loaded")]
    assert loaded, again.events


def test_no_token_and_demo_tokens_are_refused_when_a_token_file_is_set(server: str) -> None:
    from langgraph_sdk.errors import AuthenticationError

    for token in (None, "ann-demo-token", "ann-test-token-but-wrong"):
        with pytest.raises(AuthenticationError):
            client_for(server, token).threads.create()
