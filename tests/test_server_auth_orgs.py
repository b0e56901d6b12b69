"""LangGraph Server threads belong to exactly one person (issue 34, point 1), through
`langgraph dev` with the auth example (graphs/auth.py): `ann` of org o2 neither finds, reads,
runs on, changes nor deletes a thread of `ann` of org o1, and o1's ann keeps hers."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.langgraph_server import (
    client_for,
    langgraph_dev_with_tokens,
    refusal,
    stream_run,
)

pytestmark = pytest.mark.slow

TOKENS = {
    "o1-ann-token": {"identity": "ann", "org_id": "o1", "workspaces": ["acme"]},
    "o2-ann-token": {"identity": "ann", "org_id": "o2", "workspaces": ["acme"]},
}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with langgraph_dev_with_tokens(tmp_path_factory.mktemp("server"), TOKENS) as url:
        yield url


def test_another_orgs_ann_never_reaches_anns_thread(server: str) -> None:
    o1, o2 = client_for(server, "o1-ann-token"), client_for(server, "o2-ann-token")
    thread = o1.threads.create()["thread_id"]
    assert not stream_run(o1, thread, "My dog is called Rex.", {}).errors
    theirs = o2.threads.create()["thread_id"]

    assert [found["thread_id"] for found in o2.threads.search()] == [theirs]
    assert refusal(lambda: o2.threads.get(thread))[0] == 404
    assert refusal(lambda: o2.threads.get_state(thread))[0] == 404
    assert refusal(lambda: stream_run(o2, thread, "What is my dog called?", {}))[0] == 404
    assert refusal(lambda: o2.threads.update(thread, metadata={"note": "mine"}))[0] == 404
    assert refusal(lambda: o2.threads.delete(thread))[0] == 404
    given = refusal(lambda: o2.threads.update(theirs, metadata={"owner_org": "o1"}))
    assert given[0] == 403

    assert [found["thread_id"] for found in o1.threads.search()] == [thread]
    kept = o1.threads.get(thread)
    assert (kept["metadata"]["owner"], kept["metadata"]["owner_org"]) == ("ann", "o1")
    said = o1.threads.get_state(thread)["values"]["messages"]
    assert any("Rex" in str(message["content"]) for message in said)
