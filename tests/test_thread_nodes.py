"""Context-management nodes in a real graph: masking, compaction, dividers, flush,
Summarize now and the protected prefix, on every backend, invoke and ainvoke."""

from __future__ import annotations

import logging
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage

from memory_plugin import Backend, LayeredSettings
from memory_plugin.context_management import nodes
from memory_plugin.context_management.journal import tail_plan
from memory_plugin.context_management.masking import is_masked
from memory_plugin.context_management.pairs import unpaired
from memory_plugin.plans import run
from memory_plugin.scoped import ScopedMemory
from tests.fakes import CompactionModel
from tests.scoped_helpers import ANN
from tests.thread_helpers import build_graph, build_turn_graph, chat, fetch_turn, tool_messages

NO_MASKING = {"masking": False}
# a compaction trigger whose band of smaller masking passes (within masking_min_clear_ratio
# of it) these short threads reach before a batch pass is possible
NEAR_COMPACTION = {"summarization_trigger_ratio": 0.8, "masking_defers_to_compaction": False}


def turns(n: int, start: int = 0) -> list[AIMessage]:
    return [m for k in range(start, start + n) for m in fetch_turn(k)]


def ask(graph: Any, text: str, thread: str = "t1") -> dict[str, Any]:
    config = {"configurable": {"thread_id": thread}}
    return graph.invoke({"messages": [HumanMessage(text)]}, config, context=ANN)  # type: ignore[no-any-return]


def state_of(graph: Any, thread: str = "t1") -> dict[str, Any]:
    return graph.get_state({"configurable": {"thread_id": thread}}).values  # type: ignore[no-any-return]


@pytest.mark.parametrize("combined", [False, True], ids=["nodes", "prepare_context"])
def test_masking_replaces_old_outputs_and_keeps_recent_ones(
    backend: Backend, combined: bool
) -> None:
    model = chat(turns(9), window=12_000)
    graph, _ = build_graph(
        backend,
        model,
        summary_model=CompactionModel(),
        platform=NEAR_COMPACTION,
        combined=combined,
    )
    for n in range(9):
        ask(graph, f"read page {n}")
    results = tool_messages(state_of(graph))
    masked = [m for m in results if is_masked(m)]
    assert masked, "masking should have fired past 55% of the window"
    assert all(not is_masked(m) for m in results[-5:])
    first = masked[0]
    assert "fetch" in first.content and first.tool_call_id in first.content
    assert "journal_tool_call_view" in first.content
    assert unpaired(state_of(graph)["messages"]) == []
    info = state_of(graph)["memory_context"]
    assert info["masked"] == len(masked)


def test_masked_output_comes_back_from_the_journal(backend: Backend) -> None:
    model = chat(
        [
            *turns(9),
            AIMessage(
                "",
                tool_calls=[
                    {
                        "name": "journal_tool_call_view",
                        "args": {"tool_call_id": "fetch-0"},
                        "id": "v",
                    }
                ],
            ),
            AIMessage("Here it is."),
        ],
        window=12_000,
    )
    graph, _ = build_graph(
        backend, model, summary_model=CompactionModel(), platform=NEAR_COMPACTION
    )
    for n in range(9):
        ask(graph, f"read page {n}")
    assert is_masked(tool_messages(state_of(graph))[0])
    result = ask(graph, "show me page 0 again")
    view = next(
        m for m in result["messages"] if isinstance(m, ToolMessage) and m.tool_call_id == "v"
    )
    assert "<page https://example.com/0>" in view.content and view.content.count("lorem") == 120


@pytest.mark.slow
def test_no_masking_without_a_reported_window_or_with_the_switch_off(backend: Backend) -> None:
    graph, _ = build_graph(backend, chat(turns(9), window=None), summary_model=CompactionModel())
    for n in range(9):
        ask(graph, f"read page {n}")
    assert not any(is_masked(m) for m in tool_messages(state_of(graph)))
    LayeredSettings(backend.store).update("platform", ANN, set={"masking": False})
    graph, _ = build_graph(backend, chat(turns(9), window=12_000), summary_model=CompactionModel())
    for n in range(9):
        ask(graph, f"read page {n}", thread="t2")
    assert not any(is_masked(m) for m in tool_messages(state_of(graph, "t2")))


@pytest.mark.slow
@pytest.mark.parametrize("combined", [False, True], ids=["nodes", "prepare_context"])
def test_compaction_summarizes_keeps_pairs_and_records_a_divider(
    backend: Backend, combined: bool
) -> None:
    summarizer = CompactionModel()
    model = chat(turns(12), window=8_000)
    graph, _ = build_graph(
        backend, model, summary_model=summarizer, platform=NO_MASKING, combined=combined
    )
    for n in range(12):
        ask(graph, f"read page {n}")
    state = state_of(graph)
    info = state["memory_context"]
    assert info["summary"].startswith("Summary")
    (divider, *_) = info["dividers"]
    assert divider["kind"] == "auto"
    assert divider["text"] == "Earlier messages were summarized to free up context"
    assert divider["tokens_before"] > divider["tokens_after"]
    assert unpaired(state["messages"]) == []
    assert len(state["messages"]) < 12 * 4
    last_input = model.inputs[-1]
    assert isinstance(last_input[0], SystemMessage)
    assert "<conversation_summary>\nSummary" in last_input[0].content
    assert "read page 0" not in " ".join(str(m.content) for m in last_input[1:])


@pytest.mark.slow
def test_protected_prefix_is_byte_identical_through_compaction(backend: Backend) -> None:
    ScopedMemory(backend.store).write_document(ANN, "# Ann\n- prefers tea")
    ScopedMemory(backend.store).remember(ANN, "Planning a trip to Lisbon")
    model = chat(turns(12), window=8_000)
    graph, _ = build_graph(
        backend, model, summary_model=CompactionModel(), platform={**NO_MASKING, "flush": False}
    )
    for n in range(12):
        ask(graph, f"read page {n}")
    prefixes = [
        str(inputs[0].content).split("<conversation_summary>")[0].rstrip()
        for inputs in model.inputs
    ]
    assert len(set(prefixes)) == 1
    assert prefixes[0].startswith("You are a helpful assistant.\n\n<memory_document")
    assert prefixes[0].index("<memory_document") < prefixes[0].index("<recent_memory_notes>")
    assert "Planning a trip to Lisbon" in prefixes[0]
    assert state_of(graph)["memory_context"]["dividers"]


@pytest.mark.slow
def test_failed_summary_leaves_the_conversation_unchanged(
    backend: Backend, caplog: pytest.LogCaptureFixture
) -> None:
    model = chat(turns(12), window=8_000)
    graph, _ = build_graph(
        backend, model, summary_model=CompactionModel(fail={"summary"}), platform=NO_MASKING
    )
    with caplog.at_level(logging.WARNING):
        for n in range(12):
            ask(graph, f"read page {n}")
    state = state_of(graph)
    assert "summary" not in state["memory_context"] and "dividers" not in state["memory_context"]
    assert sum(isinstance(m, HumanMessage) for m in state["messages"]) == 12
    assert any("compaction failed" in r.getMessage() for r in caplog.records)


@pytest.mark.slow
def test_flush_appends_one_note_per_compaction(backend: Backend) -> None:
    summarizer = CompactionModel(note="Reading example.com pages; open: " + "x " * 400)
    graph, _ = build_graph(
        backend, chat(turns(12), window=8_000), summary_model=summarizer, platform=NO_MASKING
    )
    for n in range(12):
        ask(graph, f"read page {n}")
    notes = ScopedMemory(backend.store).list_notes(ANN)
    dividers = state_of(graph)["memory_context"]["dividers"]
    assert len(notes) == len(dividers) >= 1
    assert all(len(n.body) <= 500 and n.body.endswith("…") for n in notes)
    assert notes[0].body.startswith("Reading example.com pages; open:")
    assert ScopedMemory(backend.store).read_document(ANN) is None


@pytest.mark.slow
@pytest.mark.parametrize("problem", ["off", "fails", "stalls"])
def test_flush_off_or_failing_never_blocks_compaction(
    backend: Backend, problem: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    summarizer = CompactionModel(
        fail={"flush"} if problem == "fails" else set(),
        stall_seconds=1.5 if problem == "stalls" else 0.0,
    )
    if problem == "off":
        monkeypatch.setenv("MEMORY_FLUSH", "off")
    else:
        LayeredSettings(backend.store).update("platform", ANN, set={"flush_timeout_seconds": 0.5})
    graph, _ = build_graph(
        backend, chat(turns(12), window=8_000), summary_model=summarizer, platform=NO_MASKING
    )
    for n in range(12):
        ask(graph, f"read page {n}")
    assert state_of(graph)["memory_context"]["dividers"]
    assert ScopedMemory(backend.store).list_notes(ANN) == []
    flushes = sum(p.startswith("flush") for p in summarizer.prompts)
    assert flushes == (
        0 if problem == "off" else len(state_of(graph)["memory_context"]["dividers"])
    )


def summarize_now(graph: Any, thread: str = "t1") -> dict[str, Any]:
    return nodes.summarize_now(graph, {"configurable": {"thread_id": thread}}, context=ANN)


def test_summarize_now(backend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    model = chat(turns(4), window=8_000)
    graph, _ = build_graph(backend, model, summary_model=CompactionModel())
    report = summarize_now(graph)
    assert report["status"] == "failed" and "not enabled" in report["message"]
    monkeypatch.setenv("MEMORY_COMPACTION_MANUAL", "true")
    graph, _ = build_graph(backend, model, summary_model=CompactionModel())
    assert summarize_now(graph)["message"] == "nothing to compact yet"
    for n in range(4):
        ask(graph, f"read page {n}")
    calls = len(model.inputs)
    before = state_of(graph)["messages"]
    report = summarize_now(graph)
    assert report["status"] == "compacted" and "Context summarized on request" in report["message"]
    after = state_of(graph)
    assert len(model.inputs) == calls
    assert not any(isinstance(m, AIMessage) and m not in before for m in after["messages"])
    assert after["memory_context"]["dividers"][-1]["kind"] == "manual"
    assert unpaired(after["messages"]) == []


def test_summarize_now_failure_changes_nothing(
    backend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_COMPACTION_MANUAL", "true")
    graph, _ = build_graph(
        backend, chat(turns(4), window=8_000), summary_model=CompactionModel(fail={"summary"})
    )
    for n in range(4):
        ask(graph, f"read page {n}")
    before = state_of(graph)["messages"]
    report = summarize_now(graph)
    assert report["status"] == "failed"
    assert [m.id for m in state_of(graph)["messages"]] == [m.id for m in before]


@pytest.mark.slow
async def test_nodes_under_ainvoke(abackend: Backend, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MEMORY_MASKING", "off")
    model = chat(turns(12), window=8_000)
    graph, _ = build_graph(abackend, model, summary_model=CompactionModel())
    config = {"configurable": {"thread_id": "a1"}}
    for n in range(12):
        await graph.ainvoke({"messages": [HumanMessage(f"read page {n}")]}, config, context=ANN)
    state = (await graph.aget_state(config)).values
    assert state["memory_context"]["dividers"] and unpaired(state["messages"]) == []
    assert any(is_masked(m) for m in tool_messages(state)) or state["memory_context"]["summary"]
    assert await ScopedMemory(abackend.store).alist_notes(ANN)


@pytest.mark.slow
def test_turn_nodes_do_the_same_work(backend: Backend) -> None:
    LayeredSettings(backend.store).update("platform", ANN, set={"flush": True, **NEAR_COMPACTION})
    model = chat(turns(12), window=8_000)
    graph, _ = build_turn_graph(backend, model, summary_model=CompactionModel())
    for n in range(12):
        ask(graph, f"read page {n}")
    state = state_of(graph)
    assert state["memory_context"]["masked"] > 0, "masked (since summarized, maybe)"
    assert unpaired(state["messages"]) == []
    assert isinstance(model.inputs[-1][0], SystemMessage)
    assert "<memory_document" in str(model.inputs[-1][0].content)
    view = run(backend.store, tail_plan("t1", 10_000, 10_000))
    assert len(view) == 12 * 4


def test_excluded_tools_are_never_masked(backend: Backend) -> None:
    model = chat(turns(9), window=12_000)
    graph, _ = build_graph(
        backend,
        model,
        summary_model=CompactionModel(),
        platform={"masking_excluded_tools": ["fetch"]},
    )
    for n in range(9):
        ask(graph, f"read page {n}")
    assert not any(is_masked(m) for m in tool_messages(state_of(graph)))


def test_frozen_blocks_are_a_snapshot_per_thread(backend: Backend) -> None:
    memory = ScopedMemory(backend.store)
    memory.write_document(ANN, "# Ann\n- version one")
    model = chat(turns(2), window=200_000)
    graph, manager = build_graph(backend, model, summary_model=CompactionModel())
    manager.frozen_sources = [memory]
    ask(graph, "first")
    memory.write_document(ANN, "# Ann\n- version one\n- version two")
    ask(graph, "second")
    first, last = model.inputs[0], model.inputs[-1]
    assert last[0].content == first[0].content and "version two" not in str(last[0].content)
    assert [m.content for m in last[: len(first)]] == [m.content for m in first]
    told = [m for m in last if "version two" in str(m.content)]
    assert len(told) == 1 and isinstance(told[0], HumanMessage)
    assert str(told[0].content).endswith("</memory_update>\n\nsecond")


def test_news_told_once_after_the_history_while_the_system_message_stays(
    backend: Backend,
) -> None:
    memory = ScopedMemory(backend.store)
    model = chat(turns(3), window=200_000)
    graph, _ = build_graph(backend, model, summary_model=CompactionModel())
    ask(graph, "first")
    memory.remember(ANN, "Ann moved to Lisbon")
    ask(graph, "second")
    ask(graph, "third")
    first, second, third = model.inputs[0], model.inputs[-2], model.inputs[-1]
    assert first[0].content == second[0].content == third[0].content
    assert "Lisbon" not in str(first[0].content)
    told = [m for m in third if "Lisbon" in str(m.content)]
    assert len(told) == 1 and isinstance(told[0], HumanMessage)
    assert [m.content for m in third[: len(second)]] == [m.content for m in second]


async def test_turn_nodes_and_summarize_now_under_ainvoke(
    abackend: Backend, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MEMORY_COMPACTION_MANUAL", "on")
    model = chat(turns(4), window=8_000)
    graph, _ = build_turn_graph(abackend, model, summary_model=CompactionModel())
    config = {"configurable": {"thread_id": "a2"}}
    for n in range(4):
        await graph.ainvoke({"messages": [HumanMessage(f"read page {n}")]}, config, context=ANN)
    report = await nodes.asummarize_now(graph, config, context=ANN)
    assert report["status"] == "compacted"
    state = (await graph.aget_state(config)).values
    assert state["memory_context"]["dividers"][-1]["kind"] == "manual"
    assert unpaired(state["messages"]) == []


@pytest.mark.slow
def test_masking_past_the_trigger_comes_in_few_batches_that_each_clear_the_share(
    backend: Backend,
) -> None:
    window, pages = 9_000, 30  # the five most recent pages alone fill the masking trigger
    model = chat(turns(pages), window=window)
    graph, _ = build_graph(
        backend,
        model,
        summary_model=CompactionModel(),
        platform={"summarization_trigger_ratio": 0.95, "masking_defers_to_compaction": False},
        combined=True,
    )
    batches: list[dict[str, Any]] = []
    compactions = 0
    for n in range(pages):
        for event in graph.stream(
            {"messages": [HumanMessage(f"read page {n}")]},
            {"configurable": {"thread_id": "t1"}},
            context=ANN,
            stream_mode="custom",
        ):
            if event["kind"] == "context_management" and event["action"] == "masked":
                batches.append(event["details"])
            compactions += event["action"] == "compacted"
    # compaction counts masked outputs at full size, so it still comes (masking frees input
    # between compactions, it does not postpone them)
    assert compactions >= 1
    assert 2 <= len(batches) <= pages // 2, batches
    assert all(batch["outputs"] > 1 and batch["freed"] >= 0.15 * window for batch in batches)
    changed = [
        k
        for k, (before, after) in enumerate(zip(model.inputs, model.inputs[1:], strict=False))
        if [m.content for m in after[: len(before)]] != [m.content for m in before]
    ]
    assert len(batches) <= len(changed) <= len(batches) + compactions, (
        "the model's input changed only at masking batches and compactions"
    )
    assert sum(batch["outputs"] for batch in batches) == state_of(graph)["memory_context"]["masked"]
