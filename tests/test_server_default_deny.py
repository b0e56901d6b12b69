"""Issue 20, point 12 through `langgraph dev`: a user token reaches only what it owns.

graphs/auth.py denies by default whatever its handlers do not name. With a plain user token
Mallory finds and reads the shared `memory_agent` assistant but cannot create, change or
delete assistants, cannot touch cron jobs or the store outside her own memory, cannot take or
give away threads; the operator can do all of it, and Ann's runs keep working. The shipped
configurations set `disable_studio_auth`, so a request with Studio's `x-auth-scheme:
langsmith` header and no token is refused like any other, and the server starts without its
warning about unguarded paths.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.langgraph_server import (
    ROOT,
    client_for,
    langgraph_dev_with_tokens,
    refusal,
    stream_run,
)

pytestmark = pytest.mark.slow

TOKENS = {
    "ann-deny-token": {"identity": "ann", "workspaces": ["acme"]},
    "mallory-deny-token": {"identity": "mallory", "workspaces": ["mallory-lab"]},
    "ops-deny-token": {"identity": "ops", "operator": True},
}
ANN_NOTES = ["memory_plugin", "personal", "ann", "notes"]
MALLORY_NOTES = ["memory_plugin", "personal", "mallory", "notes"]
SCHEDULE = "0 3 * * *"
UNGUARDED_WARNING = "Custom auth has no handler registered"


@dataclass
class Server:
    """A running server and its log."""

    url: str
    log: Path


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """`langgraph dev` on the root langgraph.json with the token table above."""
    folder = tmp_path_factory.mktemp("deny")
    with langgraph_dev_with_tokens(folder, TOKENS) as url:
        yield Server(url, folder / "server.log")


def denied(call: Callable[[], Any], detail: str) -> None:
    """The call is refused with 403 and `detail`."""
    assert refusal(call) == (403, {"detail": detail})


def memory_agent(client: Any) -> dict[str, Any]:
    """The shared assistant of the memory_agent graph, as `client` finds it."""
    found = client.assistants.search(graph_id="memory_agent")
    assert [a["graph_id"] for a in found] == ["memory_agent"], found
    return dict(client.assistants.get(found[0]["assistant_id"]))


def test_users_run_the_shared_assistant_but_only_operators_change_it(server: Server) -> None:
    ann = client_for(server.url, "ann-deny-token")
    mallory = client_for(server.url, "mallory-deny-token")
    ops = client_for(server.url, "ops-deny-token")
    before = memory_agent(mallory)
    shared = before["assistant_id"]

    denied(
        lambda: mallory.assistants.update(shared, context={"workspace_id": "mallory-lab"}),
        "only operators may update assistants",
    )
    denied(
        lambda: mallory.assistants.update(shared, config={"configurable": {"user_id": "mallory"}}),
        "only operators may update assistants",
    )
    denied(lambda: mallory.assistants.delete(shared), "only operators may delete assistants")
    denied(
        lambda: mallory.assistants.create("memory_agent", name="mallory's agent"),
        "only operators may create assistants",
    )
    assert memory_agent(ops) == before

    thread = ann.threads.create()["thread_id"]
    run = stream_run(ann, thread, "Remember that the release freeze starts Friday.", {})
    assert not run.errors, run.errors
    assert ("scoped_memory", "note_stored") in {(e["kind"], e["action"]) for e in run.events}

    own = ops.assistants.create("memory_agent", name="operators' agent")
    renamed = ops.assistants.update(own["assistant_id"], name="nightly agent")
    assert renamed["name"] == "nightly agent"
    ops.assistants.delete(own["assistant_id"])
    assert memory_agent(mallory) == before


def test_cron_jobs_and_the_whole_store_are_the_operators(server: Server) -> None:
    mallory = client_for(server.url, "mallory-deny-token")
    ops = client_for(server.url, "ops-deny-token")
    thread = mallory.threads.create()["thread_id"]
    cron = ops.crons.create("memory_consolidation", schedule=SCHEDULE, input={})
    try:
        scheduled = ops.crons.search()
        for call in (
            lambda: mallory.crons.create("memory_consolidation", schedule=SCHEDULE, input={}),
            lambda: mallory.crons.create_for_thread(
                thread, "memory_agent", schedule=SCHEDULE, input={}
            ),
            lambda: mallory.crons.search(),
            lambda: mallory.crons.update(cron["cron_id"], schedule="* * * * *"),
            lambda: mallory.crons.delete(cron["cron_id"]),
        ):
            denied(call, "only operators schedule cron jobs")
        assert ops.crons.search() == scheduled
    finally:
        ops.crons.delete(cron["cron_id"])

    mallory.store.put_item(MALLORY_NOTES, "own", {"text": "- Mallory's own note"})
    assert mallory.store.get_item(MALLORY_NOTES, "own")["value"] == {"text": "- Mallory's own note"}
    for namespace, call in (
        ([], lambda: mallory.store.search_items([])),
        ([], lambda: mallory.store.list_namespaces()),
        (["memory_plugin"], lambda: mallory.store.search_items(["memory_plugin"])),
        (ANN_NOTES, lambda: mallory.store.search_items(ANN_NOTES)),
        (ANN_NOTES, lambda: mallory.store.delete_item(ANN_NOTES, "any")),
    ):
        denied(call, f"namespace {namespace} is not your memory")
    everything = ops.store.search_items([], limit=1000)["items"]
    assert ("own", tuple(MALLORY_NOTES)) in {(i["key"], tuple(i["namespace"])) for i in everything}


def test_threads_cannot_be_taken_or_given_away(server: Server) -> None:
    ann = client_for(server.url, "ann-deny-token")
    mallory = client_for(server.url, "mallory-deny-token")
    anns = ann.threads.create(metadata={"topic": "payroll"})["thread_id"]
    mine = mallory.threads.create()["thread_id"]

    status, body = refusal(lambda: mallory.threads.create(thread_id=anns, if_exists="do_nothing"))
    assert status == 409 and "payroll" not in json.dumps(body), body
    denied(
        lambda: mallory.threads.update(mine, metadata={"owner": "ann"}),
        "a thread cannot be given to 'ann': threads stay with their creator",
    )
    anns_threads = {t["thread_id"] for t in ann.threads.search()}
    assert anns in anns_threads and mine not in anns_threads
    assert mine in {t["thread_id"] for t in mallory.threads.search()}
    assert ann.threads.get(anns)["metadata"]["owner"] == "ann"


def test_studio_requests_without_a_token_are_refused(server: Server) -> None:
    from langgraph_sdk import get_sync_client

    ann = client_for(server.url, "ann-deny-token")
    ann.store.put_item(ANN_NOTES, "salary", {"text": "- Ann's salary is private"})
    studio = get_sync_client(url=server.url, headers={"x-auth-scheme": "langsmith"})
    for call in (
        lambda: studio.store.search_items(ANN_NOTES),
        lambda: studio.store.get_item(ANN_NOTES, "salary"),
        lambda: studio.threads.search(),
        lambda: studio.assistants.search(),
        lambda: studio.runs.wait(None, "memory_agent", input={"messages": []}),
    ):
        assert refusal(call) == (401, {"detail": "unknown or missing token"})
    assert ann.store.get_item(ANN_NOTES, "salary")["value"]["text"] == "- Ann's salary is private"


def test_shipped_configurations_turn_studio_auth_off_and_guard_every_path(
    server: Server,
) -> None:
    for name in ("langgraph.json", "langgraph.postgres.json"):
        auth = json.loads((ROOT / name).read_text())["auth"]
        assert auth == {"path": "./graphs/auth.py:auth", "disable_studio_auth": True}, name
    log = server.log.read_text(errors="replace")
    assert "Loaded custom auth middleware" in log, log[-2000:]
    assert UNGUARDED_WARNING not in log
