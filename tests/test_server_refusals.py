"""Issue 20, point 11 through `langgraph dev`: a run the server refuses for identity tells the
client why.

Mallory (a member of mallory-lab only) names Ann, Ann's workspace acme or another thread owner
in her run context, in every way a client starts a run: on her thread (stream, wait,
background), stateless (/runs/wait, /runs/stream), with the context in `config` instead of
`context`; the operator names Ann in a cron's context. Each is refused with 403 and the
reason memory_plugin gives, before the run starts: no run, thread, cron or memory is left
behind. Ann, a member of acme, runs with acme as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.langgraph_server import client_for, langgraph_dev_with_tokens, refusal, stream_run

pytestmark = pytest.mark.slow

TOKENS = {
    "ann-refusal-token": {"identity": "ann", "workspaces": ["acme"]},
    "mallory-refusal-token": {"identity": "mallory", "workspaces": ["mallory-lab"]},
    "ops-refusal-token": {"identity": "ops", "operator": True},
}
NOT_MEMBER = (
    "user 'mallory' is not a member of workspace 'acme' "
    "(not in the authenticated user's workspaces)"
)
NOT_ANN = "context user_id 'ann' does not match the authenticated user"
NOT_OWNER = "context thread_owner_id 'ann' does not match the authenticated user's thread_owner_id"
MESSAGE = {"messages": [{"role": "user", "content": "Remember that the freeze starts Friday."}]}


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """`langgraph dev` with the token table above and the built-in offline model."""
    with langgraph_dev_with_tokens(tmp_path_factory.mktemp("refusals"), TOKENS) as running:
        yield running


def refused_with(reason: str, start: Callable[[], Any], status: int = 403) -> None:
    """Starting the run fails with `status` and exactly `reason`."""
    assert refusal(start) == (status, {"detail": reason})


def memory_items(ops: Any) -> list[tuple[tuple[str, ...], str]]:
    """Every item in the server's store, read with the operator token."""
    items = ops.store.search_items(["memory_plugin"], limit=1000)["items"]
    return sorted((tuple(i["namespace"]), i["key"]) for i in items)


def test_every_way_of_starting_a_run_is_refused_with_the_reason(url: str) -> None:
    mallory = client_for(url, "mallory-refusal-token")
    ops = client_for(url, "ops-refusal-token")
    thread = mallory.threads.create()["thread_id"]
    before = memory_items(ops)
    acme = {"workspace_id": "acme"}

    def stream(thread_id: str | None, **run: Any) -> list[Any]:
        return list(mallory.runs.stream(thread_id, "memory_agent", input=MESSAGE, **run))

    refused_with(NOT_MEMBER, lambda: stream(thread, context=acme))
    refused_with(
        NOT_MEMBER, lambda: stream(thread, context={**acme, "thread_visibility": "shared"})
    )
    refused_with(NOT_ANN, lambda: stream(thread, context={"user_id": "ann"}))
    refused_with(NOT_OWNER, lambda: stream(thread, context={"thread_owner_id": "ann"}))
    refused_with(NOT_MEMBER, lambda: stream(thread, config={"configurable": acme}))
    refused_with(
        NOT_MEMBER, lambda: mallory.runs.wait(thread, "memory_agent", input=MESSAGE, context=acme)
    )
    refused_with(
        NOT_ANN,
        lambda: mallory.runs.create(
            thread, "memory_agent", input=MESSAGE, context={"user_id": "ann"}
        ),
    )
    refused_with(
        NOT_MEMBER, lambda: mallory.runs.wait(None, "memory_agent", input=MESSAGE, context=acme)
    )
    refused_with(NOT_ANN, lambda: stream(None, context={"user_id": "ann"}))
    refused_with(
        NOT_ANN,
        lambda: ops.crons.create(
            "memory_agent", schedule="0 3 * * *", input=MESSAGE, context={"user_id": "ann"}
        ),
    )
    refused_with(
        NOT_ANN,
        lambda: ops.crons.create_for_thread(
            ops.threads.create()["thread_id"],
            "memory_agent",
            schedule="0 3 * * *",
            input=MESSAGE,
            context={"user_id": "ann"},
        ),
    )

    refused_with(
        "agent_id must not be empty", lambda: stream(thread, context={"agent_id": ""}), 422
    )

    nightly = ops.crons.create("memory_agent", schedule="0 3 * * *", input=MESSAGE)
    refused_with(NOT_ANN, lambda: ops.crons.update(nightly["cron_id"], context={"user_id": "ann"}))
    assert [c["payload"].get("context") for c in ops.crons.search()] in ([None], [{}])
    ops.crons.delete(nightly["cron_id"])

    assert mallory.runs.list(thread) == []
    assert [t["thread_id"] for t in mallory.threads.search()] == [thread]
    assert ops.crons.search() == []
    assert memory_items(ops) == before


def test_a_member_naming_her_workspace_runs(url: str) -> None:
    ann = client_for(url, "ann-refusal-token")
    thread = ann.threads.create()["thread_id"]
    run = stream_run(
        ann, thread, "Remember that the freeze starts Friday.", {"workspace_id": "acme"}
    )
    assert not run.errors, run.errors
    assert ("scoped_memory", "note_stored") in {(e["kind"], e["action"]) for e in run.events}


def test_the_graph_still_refuses_a_workspace_the_server_cannot_see(url: str) -> None:
    """An operator's assistant whose own context names acme: the run's context is merged
    with it inside the server, after the auth handler, so memory_plugin's check in the graph
    refuses Mallory there (the second line) and lets Ann, a member, through."""
    ann = client_for(url, "ann-refusal-token")
    mallory = client_for(url, "mallory-refusal-token")
    ops = client_for(url, "ops-refusal-token")
    team = ops.assistants.create("memory_agent", context={"workspace_id": "acme"})["assistant_id"]
    try:
        before = memory_items(ops)
        thread = mallory.threads.create()["thread_id"]
        parts = list(mallory.runs.stream(thread, team, input=MESSAGE, stream_mode="custom"))
        assert [p.data["error"] for p in parts if p.event == "error"] == ["ScopeError"], parts
        assert [p for p in parts if p.event == "custom"] == []
        assert memory_items(ops) == before

        anns = ann.threads.create()["thread_id"]
        parts = list(ann.runs.stream(anns, team, input=MESSAGE, stream_mode="custom"))
        assert [p for p in parts if p.event == "error"] == [], parts
        assert any(p.data.get("action") == "note_stored" for p in parts if p.event == "custom")
    finally:
        ops.assistants.delete(team)
