"""User profile memory: the memory.md format, post-turn consolidation, budget, enablement,
isolation and concurrency, on every backend, invoke and ainvoke."""

from __future__ import annotations

import itertools
import json
import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage
from langgraph.graph import END, START, StateGraph
from langgraph.store.memory import InMemoryStore

from memory_plugin import Backend, LayeredSettings, MemoryContext
from memory_plugin.backends import conditional
from memory_plugin.context_management.nodes import ContextManager
from memory_plugin.context_management.state import MemoryState
from memory_plugin.profile import budget as budget_module
from memory_plugin.profile import memory as memory_module
from memory_plugin.profile import rewrite as rewrite_module
from memory_plugin.profile.changes import changes
from memory_plugin.profile.document import (
    SECTIONS,
    TRUNCATED,
    Profile,
    ProfileFormatError,
    parse,
    render,
    repair,
)
from memory_plugin.profile.memory import (
    KEY,
    ProfileMemory,
    await_profiles,
    enablement,
    wait_for_profiles,
)
from memory_plugin.scope import profile_scope
from memory_plugin.settings import MemorySettings
from tests.fakes import ProfileModel
from tests.thread_helpers import chat

DATA = Path(__file__).parent / "data"
BASE_TEXT = (DATA / "profile_base.md").read_text()
CASES = [json.loads(line) for line in (DATA / "profile_updates.jsonl").read_text().splitlines()]
ANN = MemoryContext(user_id="ann")
BOB = MemoryContext(user_id="bob")
NOW = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)


def seed(store: Any, ctx: MemoryContext, profile: Profile) -> None:
    """Store a profile directly, as an earlier consolidation would have."""
    from memory_plugin.backends.conditional import put_if_version

    put_if_version(store, profile_scope(ctx).namespace, KEY, {"text": render(profile)}, None)


def recorded_events(monkeypatch: pytest.MonkeyPatch) -> list[dict[str, Any]]:
    """The profile events as they are emitted, a background job's included (those can come
    after the run's stream is over), as the stream's dicts."""
    assert wait_for_profiles()  # no job of an earlier test reports into this one
    seen: list[dict[str, Any]] = []

    def record(kind: str, action: str, scope: str | None = None, **details: Any) -> None:
        seen.append({"kind": kind, "action": action, "scope": scope, "details": details})

    for module in (memory_module, budget_module, rewrite_module):
        monkeypatch.setattr(module, "emit", record)
    return seen


def base_for(user: str) -> Profile:
    return replace(parse(BASE_TEXT), user_id=user)


# --- the format ---------------------------------------------------------------------------


def test_reference_profile_round_trips_byte_for_byte() -> None:
    profile = parse(BASE_TEXT)
    assert render(profile) == BASE_TEXT
    assert profile.user_id == "user_123" and profile.turn_count == 12
    assert list(profile.sections) == list(SECTIONS)
    assert profile.bullets("Open Questions / Follow-ups") == ()


bullet_text = (
    st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")),
        min_size=1,
        max_size=40,
    )
    .map(str.strip)
    .filter(lambda s: s and not s.startswith(("#", "-", "*", "+", "•", "_(")))
)


@given(
    st.text(min_size=1, max_size=20).filter(lambda s: "\n" not in s and "\r" not in s),
    st.dictionaries(st.sampled_from(SECTIONS), st.lists(bullet_text, max_size=3)),
    st.integers(0, 10_000),
)
def test_any_canonical_profile_round_trips(
    user: str, sections: dict[str, list[str]], n: int
) -> None:
    profile = Profile(user, 1, "2026-11-29T12:00:00+00:00", n).with_sections(
        {s: tuple(b) for s, b in sections.items()}
    )
    text = render(profile)
    assert parse(text) == profile
    assert render(parse(text)) == text


@pytest.mark.parametrize(
    "broken",
    [
        BASE_TEXT.replace("---\n", "", 1),
        BASE_TEXT.replace("## Work Context", "## Hobbies"),
        BASE_TEXT.replace("turn_count: 12", "turn_count: many"),
        BASE_TEXT.replace("\n## Identity", "\nSome prose.\n\n## Identity"),
        BASE_TEXT.replace("# User Memory", "# Memory"),
    ],
)
def test_non_canonical_text_is_a_format_error(broken: str) -> None:
    with pytest.raises(ProfileFormatError):
        parse(broken)


def test_repair_of_hostile_model_output_keeps_identity_and_structure() -> None:
    stored = base_for("ann")
    hostile = (
        "Sure! Here is the updated profile:\n```markdown\n---\nuser_id: mallory\n"
        "schema_version: 9\nadmin: true\n---\n# User Memory\n\n## Skills & Expertise\n"
        "* Knows Rust.\n\n## Hobbies\n- Chess\n\n## Identity\n- Works at Acme.\n"
        "\n## Recent Topics\n- Rust lifetimes\n```\nI hope this helps! Let me know!"
    )
    fixed = repair(hostile, stored, NOW)
    assert (fixed.user_id, fixed.schema_version) == ("ann", 1)
    assert fixed.bullets("Identity") == ("Works at Acme.",)
    assert fixed.bullets("Skills & Expertise") == ("Knows Rust.",)
    assert fixed.bullets("Recent Topics") == ("2026-11-29 12:00 UTC: Rust lifetimes",)
    assert fixed.bullets("Work Context") == stored.bullets("Work Context")
    assert "Chess" not in render(fixed) and "mallory" not in render(fixed)
    assert parse(render(fixed)) == fixed
    with pytest.raises(ProfileFormatError, match="none of the profile's sections"):
        repair("I could not find anything to change.", stored, NOW)


# --- consolidation ------------------------------------------------------------------------


def memory_for(store: Any, model: Any) -> ProfileMemory:
    return ProfileMemory(store, model=model, clock=lambda: NOW)


def test_labelled_exchanges_produce_the_labelled_operation() -> None:
    assert len(CASES) >= 40
    for case in CASES:
        store = InMemoryStore()
        if case["before"] == "base":
            seed(store, ANN, base_for("ann"))
        memory = memory_for(store, ProfileModel(plan={case["user"]: case}))
        before = memory.read(ANN)
        result = memory.consolidate(ANN, case["user"], case["assistant"])
        after = memory.read(ANN)
        expected = [(case["op"], case["section"])]
        assert list(changes(before, after)) == expected, case["id"]
        assert (result.status == "noop") == (case["op"] == "NOOP"), case["id"]


def test_noop_writes_nothing(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    seed(backend.store, ANN, base_for("ann"))
    writes: list[Any] = []
    original = conditional.put_if_version
    monkeypatch.setattr(conditional, "put_if_version", lambda *a: writes.append(a) or original(*a))
    memory = memory_for(backend.store, ProfileModel())
    assert memory.consolidate(ANN, "what is the capital of Peru?", "Lima.").status == "noop"
    echo = ProfileModel(reply_override=render(base_for("ann")))
    assert memory_for(backend.store, echo).consolidate(ANN, "thanks!", "Anytime.").status == "noop"
    assert writes == []
    assert memory.read(ANN) == base_for("ann")


def test_update_sets_our_fields_and_keeps_identity(backend: Backend) -> None:
    seed(backend.store, ANN, base_for("ann"))
    case = next(c for c in CASES if c["op"] == "UPDATE")
    memory = memory_for(backend.store, ProfileModel(plan={case["user"]: case}))
    result = memory.consolidate(ANN, case["user"], case["assistant"])
    assert result.status == "updated"
    stored = memory.read(ANN)
    assert stored is not None
    assert (stored.user_id, stored.schema_version, stored.turn_count) == ("ann", 1, 13)
    assert stored.last_updated == "2026-11-29T12:00:00+00:00"
    item = backend.store.get(profile_scope(ANN).namespace, KEY)
    assert item is not None and parse(item.value["text"]) == stored


def test_malformed_answer_is_discarded_and_logged(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    seed(backend.store, ANN, base_for("ann"))
    memory = memory_for(backend.store, ProfileModel(reply_override="Ok! I'll remember that."))
    with caplog.at_level(logging.WARNING):
        assert memory.consolidate(ANN, "I moved to Bern", "Noted.").status == "discarded"
    assert memory.read(ANN) == base_for("ann")
    assert any("discarded" in r.getMessage() for r in caplog.records)


def test_concurrent_consolidations_keep_both_updates(backend: Backend) -> None:
    seed(backend.store, ANN, base_for("ann"))
    gate = threading.Event()
    cases = {
        "I now speak Italian too": {
            "op": "ADD",
            "section": "Identity",
            "bullet": "Speaks Italian.",
        },
        "call me Annie": {
            "op": "ADD",
            "section": "Communication Preferences",
            "bullet": "Call her Annie.",
        },
    }
    model = ProfileModel(plan=cases, gate=gate)
    memory = memory_for(backend.store, model)
    with ThreadPoolExecutor(2) as pool:
        futures = [pool.submit(memory.consolidate, ANN, text, "Sure.") for text in cases]
        while len(model.calls) < 2:
            threading.Event().wait(0.01)
        gate.set()
        results = [f.result() for f in futures]
    assert {r.status for r in results} == {"updated"}
    stored = memory.read(ANN)
    assert stored is not None and stored.turn_count == 14
    assert "Speaks Italian." in stored.bullets("Identity")
    assert "Call her Annie." in stored.bullets("Communication Preferences")
    assert len(model.calls) == 2


async def test_async_consolidation(abackend: Backend) -> None:
    case = {"op": "ADD", "section": "Skills & Expertise", "bullet": "Knows Go."}
    memory = memory_for(abackend.store, ProfileModel(plan={"Go": case}))
    assert (await memory.aconsolidate(ANN, "I write Go daily", "Nice.")).status == "updated"
    stored = await memory.aread(ANN)
    assert stored is not None and stored.bullets("Skills & Expertise") == ("Knows Go.",)
    assert stored.user_id == "ann" and stored.turn_count == 1
    assert await memory.aread(BOB) is None


# --- budget -------------------------------------------------------------------------------


def big_profile(user: str) -> Profile:
    return base_for(user).with_sections(
        {
            **base_for(user).sections,
            "Work Context": tuple(f"Project {n}: " + "detail " * 30 for n in range(40)),
        }
    )


def test_over_budget_is_condensed_by_the_model(backend: Backend) -> None:
    merged = (*base_for("ann").bullets("Work Context"), "Project 0-39: each with detail.")
    condensed = base_for("ann").with_sections({**base_for("ann").sections, "Work Context": merged})
    short = render(condensed)
    answers = iter([render(big_profile("ann")), short[short.index("# User Memory") :]])

    class Sequenced(ProfileModel):
        def _answer(self, prompt: str) -> str:
            return next(answers)

    model = Sequenced()
    memory = memory_for(backend.store, model)
    result = memory.consolidate(ANN, "here is everything about my projects", "Got it.")
    assert result.status == "updated"
    assert len(model.calls) == 2 and "Project 39" in model.calls[1]
    stored = memory.read(ANN)
    assert stored is not None and not stored.truncated
    assert stored.bullets("Work Context") == merged


@pytest.mark.parametrize("condenser", ["fails", "too long"])
def test_truncation_is_the_last_resort(backend: Backend, condenser: str) -> None:
    answers = iter([render(big_profile("ann")), render(big_profile("ann"))])

    class Sequenced(ProfileModel):
        def _answer(self, prompt: str) -> str:
            if condenser == "fails" and "<exchange>" not in prompt:
                raise ConnectionError("down")
            return next(answers)

    LayeredSettings(backend.store).update("platform", ANN, set={"profile_max_tokens": 800})
    memory = memory_for(backend.store, Sequenced())
    result = memory.consolidate(ANN, "all my projects", "Noted.")
    assert result.status == "updated"
    item = backend.store.get(profile_scope(ANN).namespace, KEY)
    assert item is not None and TRUNCATED in item.value["text"]
    stored = parse(item.value["text"])
    assert stored.truncated and list(stored.sections) == list(SECTIONS)
    assert memory.counter.count_text(item.value["text"]) <= 800
    assert stored.bullets("Identity") == base_for("ann").bullets("Identity")


def test_budget_is_clamped_to_its_bounds(backend: Backend) -> None:
    """A budget stored before the bounds (writes now refuse it) is clamped when read."""
    record = {"values": {"profile_max_tokens": 100}, "locked": []}
    backend.store.put(("memory_plugin", "settings", "platform"), "layer", record)
    settings = LayeredSettings(backend.store).get(ANN)
    assert settings.values.profile_max_tokens == 500
    assert settings.clamped["profile_max_tokens"].stored == 100


# --- enablement ---------------------------------------------------------------------------

SWITCHES = ["profile", "profile_space", "web_search", "profile_with_web_search", "profile_user"]


@pytest.mark.parametrize("combo", list(itertools.product([True, False], repeat=5)))
def test_every_enablement_combination(combo: tuple[bool, ...]) -> None:
    values = dict(zip(SWITCHES, combo, strict=True))
    expected = (
        values["profile"]
        and values["profile_space"]
        and (not values["web_search"] or values["profile_with_web_search"])
        and values["profile_user"]
    )
    assert enablement(MemorySettings(**values))[0] is expected


def test_memory_off_loads_and_updates_nothing(backend: Backend) -> None:
    seed(backend.store, ANN, base_for("ann"))
    ctx = MemoryContext(user_id="ann", space_id="research")
    LayeredSettings(backend.store).update("space", ctx, set={"web_search": True})
    model = ProfileModel(
        plan={"Bern": {"op": "ADD", "section": "Identity", "bullet": "Lives in Bern."}}
    )
    memory = memory_for(backend.store, model)
    assert memory.prompt_blocks(ctx) == []
    assert memory.consolidate(ctx, "I live in Bern", "Nice.").status == "disabled"
    assert model.calls == []
    LayeredSettings(backend.store).update("platform", ctx, set={"profile_with_web_search": True})
    assert (
        memory.prompt_blocks(ctx)
        and memory.consolidate(ctx, "I live in Bern", "Ok.").status == "updated"
    )


def test_opt_out_deletes_the_profile_and_says_so(backend: Backend) -> None:
    seed(backend.store, ANN, base_for("ann"))
    model = ProfileModel(
        plan={"Bern": {"op": "ADD", "section": "Identity", "bullet": "Lives in Bern."}}
    )
    memory = memory_for(backend.store, model)
    message = memory.opt_out(ANN)
    assert "permanently deleted" in message
    assert backend.store.get(profile_scope(ANN).namespace, KEY) is None
    assert memory.prompt_blocks(ANN) == []
    assert memory.consolidate(ANN, "I live in Bern", "Nice.").status == "disabled"
    assert backend.store.get(profile_scope(ANN).namespace, KEY) is None


# --- in a graph ---------------------------------------------------------------------------


def profile_graph(backend: Backend, script: list[AIMessage], profile_model: Any) -> tuple[Any, Any]:
    """start_turn -> model -> finish_turn -> consolidate_profile, with the profile as a block."""
    model = chat(script, window=None)
    profile = ProfileMemory(model=profile_model)
    manager = ContextManager(model, sources=[profile], system_prompt="Be helpful.")

    def respond(state: MemoryState) -> dict[str, Any]:
        return {"messages": [model.invoke(manager.model_input(state))]}

    builder = StateGraph(MemoryState, context_schema=MemoryContext)
    builder.add_node("start_turn", manager.start_turn)
    builder.add_node("model", respond)
    builder.add_node("finish_turn", manager.finish_turn)
    builder.add_node("consolidate_profile", profile.consolidate_profile)
    builder.add_edge(START, "start_turn")
    builder.add_edge("start_turn", "model")
    builder.add_edge("model", "finish_turn")
    builder.add_edge("finish_turn", "consolidate_profile")
    builder.add_edge("consolidate_profile", END)
    return builder.compile(store=backend.store, checkpointer=backend.checkpointer), model


LISBON = {"Lisbon": {"op": "ADD", "section": "Identity", "bullet": "Lives in Lisbon."}}


def test_a_fact_from_one_thread_is_injected_in_another_and_never_for_others(
    backend: Backend,
) -> None:
    graph, model = profile_graph(
        backend,
        [AIMessage("Welcome!"), AIMessage("Hi again"), AIMessage("Hello Bob")],
        ProfileModel(plan=LISBON),
    )
    graph.invoke(
        {"messages": [HumanMessage("I just moved to Lisbon")]},
        {"configurable": {"thread_id": "a"}},
        context=ANN,
    )
    assert wait_for_profiles()
    assert "What I know about you" not in str(model.inputs[0][0].content)
    graph.invoke(
        {"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "b"}}, context=ANN
    )
    second = str(model.inputs[1][0].content)
    assert "## What I know about you" in second and "- Lives in Lisbon." in second
    graph.invoke(
        {"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "c"}}, context=BOB
    )
    assert "Lisbon" not in str(model.inputs[2][0].content)
    answer = graph.get_state({"configurable": {"thread_id": "a"}}).values["messages"][-1]
    assert answer.content == "Welcome!"


async def test_profile_graph_under_ainvoke(abackend: Backend) -> None:
    graph, model = profile_graph(
        abackend, [AIMessage("Welcome!"), AIMessage("Hi")], ProfileModel(plan=LISBON)
    )
    await graph.ainvoke(
        {"messages": [HumanMessage("I moved to Lisbon")]},
        {"configurable": {"thread_id": "a"}},
        context=ANN,
    )
    await await_profiles()
    await graph.ainvoke(
        {"messages": [HumanMessage("hi")]}, {"configurable": {"thread_id": "b"}}, context=ANN
    )
    assert "- Lives in Lisbon." in str(model.inputs[1][0].content)
    assert isinstance(model.inputs[1][0], SystemMessage)


def test_the_turn_ends_before_consolidation_finishes(backend: Backend) -> None:
    gate = threading.Event()
    profile_model = ProfileModel(plan=LISBON, gate=gate)
    graph, _ = profile_graph(backend, [AIMessage("Welcome to Lisbon!")], profile_model)
    stream = graph.stream(
        {"messages": [HumanMessage("I moved to Lisbon")]},
        {"configurable": {"thread_id": "s"}},
        context=ANN,
        stream_mode="updates",
    )
    seen = []
    for update in stream:
        seen.append(next(iter(update)))
        if "model" in update:
            assert update["model"]["messages"][-1].content == "Welcome to Lisbon!"
    assert seen[-1] == "consolidate_profile"
    assert ProfileMemory(backend.store).read(ANN) is None
    gate.set()
    assert wait_for_profiles()
    stored = ProfileMemory(backend.store).read(ANN)
    assert stored is not None and "Lives in Lisbon." in stored.bullets("Identity")


def test_a_separate_model_can_be_configured(backend: Backend) -> None:
    LayeredSettings(backend.store).update(
        "platform", ANN, set={"maintenance_model": "fake:profile"}
    )
    graph_model = ProfileModel()
    separate = ProfileModel(plan=LISBON)
    memory = ProfileMemory(backend.store, model=graph_model, model_loader=lambda spec: separate)
    assert memory.consolidate(ANN, "I moved to Lisbon", "Nice.").status == "updated"
    assert graph_model.calls == [] and len(separate.calls) == 1


def test_only_the_owner_sees_their_profile() -> None:
    store = InMemoryStore()
    seed(store, ANN, base_for("ann"))
    assert ProfileMemory(store).prompt_blocks(ANN)
    assert ProfileMemory(store).prompt_blocks(BOB) == []
    assert ProfileMemory(store).prompt_blocks(MemoryContext()) == []


def test_the_profile_is_never_indexed_for_search(backend_url: str) -> None:
    from memory_plugin import connect
    from tests.embeddings import INDEX

    with connect(backend_url, index=INDEX) as backend:
        memory = memory_for(backend.store, ProfileModel(plan=LISBON))
        assert memory.consolidate(ANN, "I moved to Lisbon", "Nice.").status == "updated"
        hits = backend.store.search(profile_scope(ANN).namespace, query="Lisbon", limit=5)
        assert all(hit.score is None for hit in hits)


def test_another_users_thread_never_reads_or_writes_the_profile(backend: Backend) -> None:
    seed(backend.store, ANN, base_for("ann"))
    intruder = MemoryContext(user_id="ann", thread_owner_id="bob")
    memory = memory_for(backend.store, ProfileModel(plan=LISBON))
    from memory_plugin import ScopeError

    with pytest.raises(ScopeError):
        memory.prompt_blocks(intruder)
    with pytest.raises(ScopeError):
        memory.consolidate(intruder, "I moved to Lisbon", "Nice.")
    assert memory.read(ANN) == base_for("ann")
