"""The path most users take: langchain-openai's ChatOpenAI, speaking the OpenAI chat-completions
protocol (tool calls included, streaming on and off) to a local scripted server, through the
prebuilt graph and through the chatbot's console script."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import socket
import subprocess
import sys
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import pytest
from langchain_core.messages import AIMessageChunk, HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI
from openai import APIConnectionError, APITimeoutError, InternalServerError, RateLimitError
from pydantic import SecretStr

from memory_plugin import Backend, MemoryContext, connect, create_memory_graph
from memory_plugin.agent import AgentMemory
from memory_plugin.profile.memory import ProfileMemory, wait_for_profiles
from memory_plugin.scoped import ScopedMemory
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import ENCODING_LOAD_SECONDS, counter_for
from tests.conftest import url_for
from tests.openai_server import (
    API_KEY,
    RATE_LIMITED,
    SERVER_ERROR,
    OpenAIServer,
    Reply,
    Request,
    call,
    cut,
    hang,
    text,
    unreachable_url,
)
from tests.provider_rules import openai_strict_problems
from tests.remembered_fact import (
    ANN,
    ANSWER,
    ASK,
    FACT,
    FIRST_TURN,
    RECALLED,
    SECOND_TURN,
    SYSTEM,
    TOLD,
    aask,
    ask,
    atell,
    check_second_turn,
    config,
    tell,
)

CHAT_TIMEOUT = 120
CONSOLE = Path(sys.executable).parent / "memory-plugin"


@pytest.fixture
def server() -> Iterator[OpenAIServer]:
    """A scripted OpenAI-compatible server on a free 127.0.0.1 port."""
    with OpenAIServer(lifetime=300) as running:
        yield running


def openai_model(server: OpenAIServer, streaming: bool, **options: Any) -> ChatOpenAI:
    """The real client, pointed at the server the way users do: OPENAI_BASE_URL and a key."""
    env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": API_KEY}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        patch.delenv("OPENAI_API_BASE", raising=False)
        return ChatOpenAI(model="gpt-test", streaming=streaming, **options)


def check_first_turn(server: OpenAIServer, streaming: bool) -> None:
    """What the client sent: the memory tools' schemas, the tool result going back, and the
    profile consolidation as a separate, tool-free request."""
    first, second, profile = server.completions
    assert all(r.body.get("stream", False) is streaming for r in server.completions)
    assert {"remember", "recall", "update_memory"} <= set(first.tool_names)
    remember = first.tool("remember")
    assert remember["parameters"]["required"] == ["text"]
    assert set(remember["parameters"]["properties"]) == {"text"}
    assert "runtime" not in json.dumps(first.body["tools"])
    assert first.messages[0]["role"] == "system" and SYSTEM in first.system
    assert first.messages[-1] == {"role": "user", "content": TOLD}
    assistant, result = second.messages[-2:]
    assert assistant["tool_calls"][0]["function"] == {
        "name": "remember",
        "arguments": json.dumps({"text": FACT}),
    }
    assert result["role"] == "tool" and result["tool_call_id"] == "call_0_remember"
    assert result["content"].startswith("Noted for ")
    assert "tools" not in profile.body
    assert "durable profile of one user" in profile.system
    assert server.unanswered == [] and server.refused == []


@pytest.mark.slow
@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
def test_a_remembered_fact_through_chatopenai(
    backend: Backend, server: OpenAIServer, streaming: bool
) -> None:
    server.script(*FIRST_TURN)
    model = openai_model(server, streaming)
    graph = create_memory_graph(
        model, store=backend.store, checkpointer=backend.checkpointer, system_prompt=SYSTEM
    )
    tell(graph, backend.store)
    check_first_turn(server, streaming)
    server.script(*SECOND_TURN)
    ask(graph)
    check_second_turn(server.completions[3], ["system", "user"])


@pytest.mark.slow
@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
async def test_a_remembered_fact_through_chatopenai_async(
    abackend: Backend, server: OpenAIServer, streaming: bool
) -> None:
    server.script(*FIRST_TURN)
    model = openai_model(server, streaming)
    graph = create_memory_graph(
        model, store=abackend.store, checkpointer=abackend.checkpointer, system_prompt=SYSTEM
    )
    await atell(graph, abackend.store)
    check_first_turn(server, streaming)
    server.script(*SECOND_TURN)
    await aask(graph)
    check_second_turn(server.completions[3], ["system", "user"])


@pytest.mark.slow
def test_tokens_stream_out_of_the_graph_as_the_server_sends_them(
    backend: Backend, server: OpenAIServer
) -> None:
    server.script(*FIRST_TURN)
    graph = create_memory_graph(
        openai_model(server, streaming=True),
        store=backend.store,
        checkpointer=backend.checkpointer,
        system_prompt=SYSTEM,
    )
    pieces: list[str] = []
    calls: list[Any] = []
    stream = graph.stream(
        {"messages": [HumanMessage(TOLD)]}, config("t1"), context=ANN, stream_mode="messages"
    )
    for chunk, meta in cast(Iterator[tuple[Any, dict[str, Any]]], stream):
        if meta["langgraph_node"] == "agent" and isinstance(chunk, AIMessageChunk):
            pieces += [chunk.text] if chunk.text else []
            calls += chunk.tool_call_chunks
    assert "".join(pieces) == ANSWER
    assert len(pieces) > 3
    assert calls[0]["name"] == "remember" and len(calls) > 2
    assert json.loads("".join(c["args"] or "" for c in calls)) == {"text": FACT}
    assert [n.text for n in ScopedMemory(backend.store).list_notes(ANN)] == [f"- {FACT}"]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("reply", "error"),
    [
        (RATE_LIMITED, RateLimitError),
        (SERVER_ERROR, InternalServerError),
        (hang(30), APITimeoutError),
    ],
    ids=["rate-limit", "server-error", "hang"],
)
def test_a_failing_server_fails_the_turn_quickly_and_stores_nothing(
    backend: Backend, server: OpenAIServer, reply: Reply, error: type[Exception]
) -> None:
    server.fallback = lambda request: reply
    model = openai_model(server, streaming=False, timeout=0.5, max_retries=1)
    graph = create_memory_graph(model, store=backend.store, checkpointer=backend.checkpointer)
    with pytest.raises(error):
        graph.invoke({"messages": [HumanMessage(TOLD)]}, config("t1"), context=ANN)
    assert len(server.completions) == 2
    assert ScopedMemory(backend.store).list_notes(ANN) == []
    assert ProfileMemory(backend.store).read(ANN) is None


@pytest.mark.slow
@pytest.mark.xfail(
    strict=True,
    reason="the openai SDK ends a stream closed before its [DONE] without an error, so the "
    "cut-off text is kept as the turn's answer (journaled, shown, consolidated)",
)
def test_a_stream_closed_before_its_end_is_not_kept_as_the_answer(
    backend: Backend, server: OpenAIServer
) -> None:
    server.script(cut("Partial answer that never ends", after=3, reset=False), text("NOOP"))
    graph = create_memory_graph(
        openai_model(server, streaming=True), store=backend.store, checkpointer=backend.checkpointer
    )
    with pytest.raises(Exception):  # noqa: B017
        graph.invoke({"messages": [HumanMessage("Hello")]}, config("t1"), context=ANN)


@pytest.mark.slow
def test_strict_tools_through_chatopenai_take_nulls_for_defaults(
    backend: Backend, server: OpenAIServer
) -> None:
    """Bound strict (`tool_binding`), every tool the request carries passes OpenAI's strict
    rules (tests/provider_rules.py), and a call sending null for every optional argument (as
    strict decoding does) stores the defaults."""
    helper = MemoryContext(user_id="ann", workspace_id="acme", agent_id="helper")
    nulls = dict.fromkeys(("category", "visibility", "importance", "expires_in_days"))
    server.script(
        call("memory_store", key="freeze", content=FACT, **nulls), text("Stored."), text("NOOP")
    )
    graph = create_memory_graph(
        openai_model(server, streaming=False),
        store=backend.store,
        checkpointer=backend.checkpointer,
        settings=MemorySettings(agent_memory=True, bounded_memory=True),
        tool_binding={"strict": True},
    )
    out = graph.invoke({"messages": [HumanMessage(TOLD)]}, config("t1"), context=helper)
    assert out["messages"][-1].text == "Stored."
    assert wait_for_profiles()
    assert server.refused == [] and server.unanswered == []
    first, second = server.completions[:2]
    tools = first.body["tools"]
    assert {"remember", "memory_store", "memory"} <= set(first.tool_names)
    assert all(tool["function"]["strict"] is True for tool in tools)
    assert openai_strict_problems(tools) == []
    assert second.messages[-1]["content"] == "Stored entry 'freeze' (private)."
    (entry,) = AgentMemory(backend.store).entries(helper)
    assert (entry.key, entry.content, entry.expires_at) == ("freeze", FACT, None)
    assert (entry.category, entry.visibility, entry.importance) == ("general", "private", 0.5)


def test_an_unreachable_server_is_a_connection_error(backend: Backend) -> None:
    model = ChatOpenAI(
        model="gpt-test", base_url=unreachable_url(), api_key=SecretStr(API_KEY), max_retries=0
    )
    graph = create_memory_graph(model, store=backend.store, checkpointer=backend.checkpointer)
    with pytest.raises(APIConnectionError):
        graph.invoke({"messages": [HumanMessage(TOLD)]}, config("t1"), context=ANN)


def chatbot(
    cwd: Path,
    base_url: str,
    *args: str,
    stdin: str,
    model: str = "openai:gpt-test",
    **settings: str,
) -> subprocess.CompletedProcess[str]:
    """`memory-plugin chat` through the installed console script, as a user runs it."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("MEMORY_", "OPENAI_", "LANGSMITH_", "LANGCHAIN_"))
    }
    env |= {"OPENAI_BASE_URL": base_url, "OPENAI_API_KEY": API_KEY}
    env |= {f"MEMORY_{name.upper()}": value for name, value in settings.items()}
    return subprocess.run(
        [str(CONSOLE), "chat", "--user", "ann", "--model", model, *args],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=CHAT_TIMEOUT,
    )


MODELS = """
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI


def streaming():
    return ChatOpenAI(model="gpt-test", streaming=True)


def impatient():
    return ChatOpenAI(model="gpt-test", timeout=1.0, max_retries=0)
"""


def model_file(tmp_path: Path) -> Path:
    """Model factories a user would name with --model path/to/models.py:name."""
    path = tmp_path / "models.py"
    path.write_text(MODELS)
    return path


@pytest.mark.slow
@pytest.mark.parametrize(
    ("kind", "streaming"),
    [("sqlite", False), ("sqlite", True), ("postgres", False)],
    ids=["sqlite-plain", "sqlite-streaming", "postgres-plain"],
)
def test_the_chatbot_remembers_across_sessions_through_chatopenai(
    tmp_path: Path, server: OpenAIServer, request: pytest.FixtureRequest, kind: str, streaming: bool
) -> None:
    url = [] if kind == "sqlite" else ["--url", url_for(kind, request, tmp_path)]
    model = f"{model_file(tmp_path)}:streaming" if streaming else "openai:gpt-test"
    server.script(*FIRST_TURN)
    first = chatbot(tmp_path, server.base_url, *url, stdin=f"{TOLD}\n/notes\n/quit\n", model=model)
    assert first.returncode == 0, first.stderr
    assert "  ↳ remember(text='The release freeze starts on Friday')" in first.stdout
    assert f"assistant> {ANSWER}" in first.stdout
    assert re.search(rf"you> 1\. - \[\d{{4}}-\d\d-\d\d\] {FACT}\n", first.stdout)
    check_first_turn(server, streaming)
    server.script(*SECOND_TURN)
    second = chatbot(
        tmp_path,
        server.base_url,
        *url,
        "--thread",
        "next-day",
        stdin=f"{ASK}\n/quit\n",
        model=model,
    )
    assert second.returncode == 0, second.stderr
    assert f"assistant> {RECALLED}" in second.stdout
    check_second_turn(server.completions[3], ["system", "user"])
    assert (tmp_path / ".memory" / "memory.db").is_file() is (kind == "sqlite")


def problem_lines(out: str) -> list[str]:
    """The lines the chat printed about a failed turn."""
    return [line for line in out.splitlines() if "  ! " in line]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("failure", "model", "named"),
    [
        ([RATE_LIMITED], "openai:gpt-test", "rate limit"),
        ([hang(30)], "impatient", "timed out"),
    ],
    ids=["rate-limit", "timeout"],
)
def test_a_failed_turn_is_one_line_and_the_chat_goes_on(
    tmp_path: Path, server: OpenAIServer, failure: list[Reply], model: str, named: str
) -> None:
    spec = model if model.startswith("openai:") else f"{model_file(tmp_path)}:{model}"
    server.script(*failure, text("Hello, Ann!"), text("NOOP"))
    stdin = f"{TOLD}\n/notes\nHello\n/quit\n"
    done = chatbot(tmp_path, server.base_url, stdin=stdin, model=spec)
    assert done.returncode == 0, done.stderr
    (line,) = problem_lines(done.stdout)
    assert named in line and "taken back" in line
    assert "Traceback" not in done.stdout + done.stderr
    after = done.stdout.split(line, 1)[1]
    assert "(no notes)" in after and "assistant> Hello, Ann!" in after
    retried = server.completions[len(failure)]
    assert [m["role"] for m in retried.messages] == ["system", "user"]
    assert retried.messages[-1]["content"] == "Hello"
    assert TOLD not in json.dumps(retried.body)
    again = chatbot(tmp_path, server.base_url, stdin="/quit\n", model=spec)
    assert TOLD not in again.stdout and "you> Hello\nassistant> Hello, Ann!" in again.stdout


@pytest.mark.slow
def test_a_provider_model_that_hangs_fails_within_the_chat_timeout(
    tmp_path: Path, server: OpenAIServer
) -> None:
    """`--model openai:...` gets the chat's `--timeout`: a server that never answers costs a
    turn seconds (one request, not retried), not the SDK's ten minutes."""
    server.script(hang(CHAT_TIMEOUT), text("Hello, Ann!"), text("NOOP"))
    done = chatbot(tmp_path, server.base_url, "--timeout", "1", stdin="Hi\nHello\n/quit\n")
    assert done.returncode == 0, done.stderr
    (line,) = problem_lines(done.stdout)
    assert "timed out" in line and "taken back" in line
    assert "assistant> Hello, Ann!" in done.stdout.split(line, 1)[1]


@pytest.mark.slow
def test_a_stream_reset_midway_is_one_line_and_the_partial_answer_is_dropped(
    tmp_path: Path, server: OpenAIServer
) -> None:
    spec = f"{model_file(tmp_path)}:streaming"
    server.script(cut("Partial answer that never ends", after=3), text("Hello, Ann!"), text("NOOP"))
    done = chatbot(tmp_path, server.base_url, stdin=f"{TOLD}\nHello\n/quit\n", model=spec)
    assert done.returncode == 0, done.stderr
    (line,) = problem_lines(done.stdout)
    assert "could not be reached" in line and "taken back" in line
    assert "Partial" not in done.stdout and "assistant> Hello, Ann!" in done.stdout
    assert TOLD not in json.dumps(server.completions[1].body)


@pytest.mark.slow
def test_an_unreachable_model_is_one_line_and_the_chat_goes_on(tmp_path: Path) -> None:
    done = chatbot(tmp_path, unreachable_url(), stdin="Hello\n/help\n/quit\n")
    assert done.returncode == 0, done.stderr
    (line,) = problem_lines(done.stdout)
    assert "could not be reached" in line and "Connection error" in line
    assert "Traceback" not in done.stdout + done.stderr
    assert "/notes   this scope's notes" in done.stdout.split(line, 1)[1]


@tool
def fetch_page(url: str) -> str:
    """Fetch a web page (a changelog is three times longer than a release page)."""
    repeats = 120 if "changelog" in url else 40
    return f"<page {url}> " + "Release notes, migration guides and changelog entries. " * repeats


def reading_agent(request: Request) -> Reply:
    """A model reading one page per question, and doing memory's own work when asked."""
    if not request.tool_names:
        return text("NOOP" if "durable profile" in request.system else "Summary: pages were read.")
    last = request.messages[-1]
    if last["role"] == "tool":
        return text(f"Read {last['content'][:30]}")
    kind = "changelog" if "changelog" in str(last["content"]) else "release"
    return call("fetch_page", url=f"https://example.com/{kind}/{len(request.messages)}")


@pytest.mark.slow
@pytest.mark.parametrize("streaming", [False, True], ids=["plain", "streaming"])
def test_masked_and_compacted_threads_stay_valid_openai_requests(
    backend: Backend, server: OpenAIServer, streaming: bool
) -> None:
    server.fallback = reading_agent
    model = openai_model(server, streaming, profile={"max_input_tokens": 6_000})
    graph = create_memory_graph(
        model, [fetch_page], store=backend.store, checkpointer=backend.checkpointer
    )
    events: list[tuple[str, str]] = []
    pages = [f"release page {n}" for n in range(6)] + ["changelog part 1", "changelog part 2"]
    for page in pages:
        stream = graph.stream(
            {"messages": [HumanMessage(f"Read {page} for me.")]},
            config("pages"),
            context=ANN,
            stream_mode=["custom", "updates"],
        )
        for mode, chunk in cast(Iterator[tuple[str, Any]], stream):
            if mode == "custom":
                events.append((chunk["kind"], chunk["action"]))
    assert ("context_management", "masked") in events
    assert ("context_management", "compacted") in events
    assert server.refused == []
    agent_requests = [r for r in server.completions if r.tool_names]
    assert len(agent_requests) == 16
    last = agent_requests[-1]
    assert "Summary: pages were read." in json.dumps(last.messages)


@pytest.mark.slow
def test_parallel_tool_calls_are_all_answered_in_one_request(
    backend: Backend, server: OpenAIServer
) -> None:
    facts = {"text": "The freeze starts Friday"}, {"text": "The launch is on Monday"}
    server.script(
        Reply(tool_calls=tuple(("remember", fact) for fact in facts)),
        text("Noted both."),
        text("NOOP"),
    )
    graph = create_memory_graph(
        openai_model(server, streaming=True), store=backend.store, checkpointer=backend.checkpointer
    )
    out = graph.invoke({"messages": [HumanMessage("Two facts.")]}, config("t1"), context=ANN)
    assert out["messages"][-1].text == "Noted both."
    assert wait_for_profiles()
    answered = [m["tool_call_id"] for m in server.completions[1].messages if m["role"] == "tool"]
    assert answered == ["call_0_remember", "call_1_remember"] and server.refused == []
    notes = sorted(n.text for n in ScopedMemory(backend.store).list_notes(ANN))
    assert notes == [f"- {fact['text']}" for fact in facts]


@pytest.mark.slow
def test_memory_work_goes_to_the_maintenance_model_named_in_the_environment(
    tmp_path: Path, server: OpenAIServer
) -> None:
    server.script(*FIRST_TURN)
    done = chatbot(
        tmp_path, server.base_url, stdin=f"{TOLD}\n/quit\n", maintenance_model="openai:gpt-cheap"
    )
    assert done.returncode == 0, done.stderr
    check_first_turn(server, streaming=False)
    assert [r.body["model"] for r in server.completions] == ["gpt-test", "gpt-test", "gpt-cheap"]


@pytest.fixture
def silent_network(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """HTTPS through a proxy that accepts connections and never answers (a network that
    drops traffic), and no tiktoken encodings cached."""
    listener = socket.create_server(("127.0.0.1", 0))
    accepted: list[socket.socket] = []

    def accept() -> None:
        with contextlib.suppress(OSError):
            while True:
                accepted.append(listener.accept()[0])

    threading.Thread(target=accept, daemon=True).start()
    monkeypatch.setenv("HTTPS_PROXY", f"http://127.0.0.1:{listener.getsockname()[1]}")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(tmp_path / "tiktoken"))
    yield
    listener.close()
    for connection in accepted:
        connection.close()


@pytest.mark.slow
def test_a_known_openai_model_name_does_not_stall_on_a_silent_network(
    server: OpenAIServer, silent_network: None, caplog: pytest.LogCaptureFixture
) -> None:
    """tiktoken downloads a known model's encoding on first use; the token counter waits for
    it a few seconds, then counts approximately (the backend plays no part: one is enough).
    The network never answers, so a turn that came back did not wait for the download."""
    server.script(text("Hello, Ann!"), text("NOOP"))
    model = openai_model(server, streaming=False)
    model.model_name = f"gpt-4o-{uuid.uuid4().hex[:8]}"
    with (
        caplog.at_level(logging.INFO, logger="memory_plugin.tokens"),
        connect("memory://") as backend,
    ):
        graph = create_memory_graph(model, store=backend.store, checkpointer=backend.checkpointer)
        out = graph.invoke({"messages": [HumanMessage("Hello")]}, config("t1"), context=ANN)
    assert out["messages"][-1].text == "Hello, Ann!"
    fallback = f"falls back to the approximate counter: not loaded in {ENCODING_LOAD_SECONDS:g} s"
    assert f"token counting for {model.model_name} {fallback}" in caplog.text
    assert counter_for(model).name == "approximate"
