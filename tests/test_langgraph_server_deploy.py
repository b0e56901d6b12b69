"""Issue 14, part 5: the LangGraph Server recipe of docs/langgraph-server.md.

`langgraph dev` serves langgraph.postgres.json: the graphs and auth of the root langgraph.json,
with memory_plugin's PostgreSQL store and checkpointer (memory_plugin.langgraph_server) at
$MEMORY_URL. Two users talk through the SDK with bearer tokens: what Ann's run remembers is
loaded in her next thread and reaches nobody else; a second server on the same database
serves the same memory, and notes appended at once through both get a position each; the
notes, the profile and the checkpoints are in PostgreSQL (read back with memory_plugin.connect);
the operator schedules the nightly consolidation as a LangGraph cron (users may not), the
cron fires and folds a note, and a run of that graph folds the waiting notes (the built-in
offline model, memory_plugin.offline.demo:studio_model, stands for the LLM). The Dockerfile
`langgraph dockerfile` writes for the production server is checked too (Docker and the
licensed PostgreSQL runtime cannot run here).
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from memory_plugin import MemoryContext
from memory_plugin.cli import main
from memory_plugin.connection import connect
from memory_plugin.context_management.owners import RECORDS
from memory_plugin.scoped import ScopedMemory
from tests.conftest import through_pgbouncer, url_for
from tests.langgraph_server import (
    CLI,
    ROOT,
    client_for,
    langgraph_dev,
    require_tools,
    stream_run,
)
from tests.scoped_helpers import Clock

CONFIG = "langgraph.postgres.json"
GRAPHS = ROOT / "graphs"
TOKENS = {
    "ann-deploy-token": {"identity": "ann", "workspaces": ["acme"]},
    "bob-deploy-token": {"identity": "bob", "workspaces": ["bob-lab"]},
    "dana-deploy-token": {"identity": "dana"},
    "erin-deploy-token": {"identity": "erin"},
    "ops-deploy-token": {"identity": "ops", "operator": True},
}
DANA_PROJECTS = range(6)
ANN_NOTES = ("memory_plugin", "personal", "ann", "notes")
ANN_PERSONAL = MemoryContext(user_id="ann")
OLD_FACTS = ["Prefers tea", "Works on the IFRS 9 report", "Moved to Zurich"]
CAROL = MemoryContext(user_id="carol")
CRON_WAIT = 90.0
ANN_FACTS = ["- The user prefers short answers.", "- The user's name is Ann."]


@dataclass
class Deployed:
    """A running server and the database behind it."""

    url: str
    database: str
    tokens: str


@pytest.fixture(scope="module")
def deployed(
    tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest
) -> Iterator[Deployed]:
    """`langgraph dev` on langgraph.postgres.json, with a fresh PostgreSQL database."""
    folder = tmp_path_factory.mktemp("deploy")
    database = url_for("postgres", request, folder)
    tokens = folder / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    env = {
        "MEMORY_URL": database,
        "MEMORY_AUTH_TOKENS": str(tokens),
    }
    with langgraph_dev(folder, env, CONFIG) as url:
        yield Deployed(url, database, str(tokens))


def texts(items: list[Any]) -> list[str]:
    """The sorted texts of store items."""
    return sorted(item.value["text"] for item in items)


@pytest.mark.slow
def test_memory_lives_in_postgres_and_stays_with_its_user(deployed: Deployed) -> None:
    from langgraph_sdk.errors import PermissionDeniedError

    ann = client_for(deployed.url, "ann-deploy-token")
    bob = client_for(deployed.url, "bob-deploy-token")

    first = ann.threads.create()["thread_id"]
    told = stream_run(ann, first, "Hi, my name is Ann. I prefer short answers.", {})
    assert not told.errors, told.errors
    assert ("scoped_memory", "note_stored") in {(e["kind"], e["action"]) for e in told.events}

    second = ann.threads.create()["thread_id"]
    asked = stream_run(ann, second, "What do you know about me?", {})
    assert not asked.errors, asked.errors
    shown = json.dumps(asked.values)
    assert "short answers" in shown, shown

    bobs = bob.threads.create()["thread_id"]
    other = stream_run(bob, bobs, "What do you know about me?", {})
    assert not other.errors, other.errors
    assert "short answers" not in json.dumps(other.values)
    assert "Ann" not in json.dumps(other.values)
    with pytest.raises(PermissionDeniedError):
        bob.store.search_items(list(ANN_NOTES))

    with connect(deployed.database) as backend:
        assert backend.kind == "postgres"
        assert texts(backend.store.search(ANN_NOTES, limit=20)) == ANN_FACTS
        profile = backend.store.get(("memory_plugin", "profile", "ann"), "memory.md")
        assert profile is not None and "short answers" in profile.value["text"]
        assert backend.store.search(("memory_plugin", "personal", "bob", "notes")) == []
        for thread in (first, second, bobs):
            saved = backend.checkpointer.get_tuple({"configurable": {"thread_id": thread}})
            assert saved is not None, f"no checkpoint of thread {thread} in PostgreSQL"


@pytest.mark.slow
def test_delete_user_deletes_the_threads_the_graph_recorded_as_theirs(
    deployed: Deployed, capsys: pytest.CaptureFixture[str]
) -> None:
    erin = client_for(deployed.url, "erin-deploy-token")
    thread = erin.threads.create()["thread_id"]
    told = stream_run(erin, thread, "Remember that my dog is called Rex.", {})
    assert not told.errors, told.errors
    bob = client_for(deployed.url, "bob-deploy-token")
    bobs = bob.threads.create()["thread_id"]
    assert not stream_run(bob, bobs, "Hello", {}).errors
    with connect(deployed.database) as backend:
        recorded = backend.store.get(RECORDS, thread)
        assert recorded is not None and recorded.value == {"owner": "erin"}
    capsys.readouterr()
    assert main(["delete-user", "erin", "--threads", "--url", deployed.database]) == 0
    assert "; 1 threads with their journals and summaries." in capsys.readouterr().out
    with connect(deployed.database) as backend:
        assert backend.checkpointer.get_tuple({"configurable": {"thread_id": thread}}) is None
        assert backend.checkpointer.get_tuple({"configurable": {"thread_id": bobs}}) is not None


@contextmanager
def two_servers(deployed: Deployed, pooled: str | None, folder: Path) -> Iterator[list[str]]:
    """Two `langgraph dev` servers on the deployed database: the deployed one and a second,
    or two new ones reaching it through the pooler at `pooled`."""
    if pooled is None:
        env = {"MEMORY_URL": deployed.database, "MEMORY_AUTH_TOKENS": deployed.tokens}
        with langgraph_dev(folder, env, CONFIG) as second_url:
            yield [deployed.url, second_url]
        return
    env = {"MEMORY_URL": pooled, "MEMORY_AUTH_TOKENS": deployed.tokens}
    (folder / "a").mkdir()
    (folder / "b").mkdir()
    with (
        langgraph_dev(folder / "a", env, CONFIG) as first,
        langgraph_dev(folder / "b", env, CONFIG) as second,
    ):
        yield [first, second]


@pytest.mark.slow
@pytest.mark.parametrize("route", ["direct", "pgbouncer"])
def test_two_servers_share_one_memory_database(
    deployed: Deployed, route: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    pooled = through_pgbouncer(deployed.database, request) if route == "pgbouncer" else None
    dana = MemoryContext(user_id="dana")
    with connect(deployed.database) as backend:
        memory = ScopedMemory(backend.store)
        for note in memory.list_notes(dana):
            memory.delete_note(dana, note.key)
    with two_servers(deployed, pooled, tmp_path) as servers:
        second_url = servers[1]

        def tell(i: int) -> list[Any]:
            dana = client_for(servers[i % 2], "dana-deploy-token")
            thread = dana.threads.create()["thread_id"]
            return stream_run(
                dana, thread, f"Remember that project {i} ships in week {i}.", {}
            ).errors

        with ThreadPoolExecutor(max_workers=len(DANA_PROJECTS)) as pool:
            errors = [e for found in pool.map(tell, DANA_PROJECTS) for e in found]
        assert errors == []

        client = client_for(second_url, "dana-deploy-token")
        thread = client.threads.create()["thread_id"]
        asked = stream_run(client, thread, "What do you know about me?", {})
    assert not asked.errors, asked.errors
    assert "ships in week" in json.dumps(asked.values)

    with connect(deployed.database) as backend:
        notes = ScopedMemory(backend.store).list_notes(dana)
    told = sorted(f"- Project {i} ships in week {i}." for i in DANA_PROJECTS)
    assert sorted(note.text for note in notes) == told
    assert len({note.key for note in notes}) == len(DANA_PROJECTS)


@pytest.mark.slow
def test_nightly_job_is_a_cron_and_its_run_folds_the_notes(deployed: Deployed) -> None:
    from langgraph_sdk.errors import PermissionDeniedError

    clock = Clock()
    clock.advance(days=-10)
    with connect(deployed.database) as backend:
        memory = ScopedMemory(backend.store, clock=clock)
        for fact in OLD_FACTS:
            memory.remember(ANN_PERSONAL, fact)

    ann = client_for(deployed.url, "ann-deploy-token")
    ops = client_for(deployed.url, "ops-deploy-token")
    with pytest.raises(PermissionDeniedError):
        ann.crons.create("memory_consolidation", schedule="0 3 * * *", input={})
    with pytest.raises(Exception, match="PermissionError"):
        ann.runs.wait(None, "memory_consolidation", input={})

    cron = ops.crons.create("memory_consolidation", schedule="0 3 * * *", input={})
    scheduled = {c["cron_id"]: c for c in ops.crons.search()}
    assert cron["cron_id"] in scheduled
    assert scheduled[cron["cron_id"]]["schedule"] == "0 3 * * *"

    output = ops.runs.wait(None, "memory_consolidation", input={})
    assert (output["folded"], output["failed"]) == (len(OLD_FACTS), 0), output

    with connect(deployed.database) as backend:
        memory = ScopedMemory(backend.store)
        document = memory.read_document(ANN_PERSONAL)
        states = {n.body: n.consolidated for n in memory.list_notes(ANN_PERSONAL)}
    assert document is not None, "consolidation wrote no document for ann"
    assert [f"- {fact}" for fact in OLD_FACTS] == document.text.splitlines()[-len(OLD_FACTS) :]
    assert {body: states[body] for body in OLD_FACTS} == dict.fromkeys(OLD_FACTS, True)


@pytest.mark.slow
def test_a_cron_runs_the_nightly_job_on_its_schedule(deployed: Deployed) -> None:
    clock = Clock()
    clock.advance(days=-10)
    with connect(deployed.database) as backend:
        ScopedMemory(backend.store, clock=clock).remember(CAROL, "Prefers green tea")

    ops = client_for(deployed.url, "ops-deploy-token")
    cron = ops.crons.create("memory_consolidation", schedule="* * * * *", input={})
    try:
        deadline = time.monotonic() + CRON_WAIT
        document = None
        while document is None and time.monotonic() < deadline:
            time.sleep(2)
            with connect(deployed.database) as backend:
                document = ScopedMemory(backend.store).read_document(CAROL)
    finally:
        ops.crons.delete(cron["cron_id"])
    assert document is not None, f"the cron did not fold carol's note within {CRON_WAIT} s"
    assert "- Prefers green tea" in document.text.splitlines(), document.text


def test_only_operators_studio_and_unauthenticated_runs_consolidate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from langgraph_sdk import Auth

    spec = importlib.util.spec_from_file_location(
        "deploy_consolidation", GRAPHS / "consolidation.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    tokens = tmp_path / "tokens.json"
    tokens.write_text(json.dumps(TOKENS))
    monkeypatch.setenv("MEMORY_AUTH_TOKENS", str(tokens))

    def check(user: Any) -> dict[str, Any]:
        config = {"configurable": {} if user is None else {"langgraph_auth_user": user}}
        return dict(module.operators_only({}, config))

    for allowed in (
        None,
        Auth.types.StudioUser("langgraph-studio-user"),
        {"kind": "StudioUser", "identity": "langgraph-studio-user"},
        {"identity": "ops", "operator": True},
        {"identity": "ops"},
    ):
        assert check(allowed) == {}, allowed
    for refused in (
        {"identity": "ann", "workspaces": ["acme"]},
        {"identity": "ann", "operator": "yes"},
    ):
        with pytest.raises(PermissionError, match="'ann' is not an operator"):
            check(refused)
    monkeypatch.delenv("MEMORY_AUTH_TOKENS")
    with pytest.raises(PermissionError, match="'ops' is not an operator"):
        check({"identity": "ops"})


@pytest.mark.slow
def test_dockerfile_for_the_production_server(tmp_path: Path) -> None:
    require_tools()
    dockerfile = tmp_path / "Dockerfile"
    subprocess.run(
        [str(CLI), "dockerfile", "-c", str(ROOT / CONFIG), str(dockerfile)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
        env={"LANGGRAPH_CLI_NO_ANALYTICS": "1", "PATH": "/usr/bin:/bin"},
    )
    text = dockerfile.read_text()
    assert text.startswith("FROM langchain/langgraph-api:"), text
    store = json.loads(text.split("ENV LANGGRAPH_STORE='", 1)[1].split("'", 1)[0])
    assert store == {"path": "memory_plugin.langgraph_server.store"}
    checkpointer = json.loads(text.split("ENV LANGGRAPH_CHECKPOINTER='", 1)[1].split("'", 1)[0])
    assert checkpointer == {"path": "memory_plugin.langgraph_server.checkpointer"}
    auth = json.loads(text.split("ENV LANGGRAPH_AUTH='", 1)[1].split("'", 1)[0])
    assert auth == {"path": f"/deps/{ROOT.name}/graphs/auth.py:auth", "disable_studio_auth": True}
    assert "memory_consolidation" in text and "memory_agent" in text
