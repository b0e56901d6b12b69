"""Issue 37, point 3: what a summary reads is bounded. Past `summary_input_chars` the longest
texts of the transcript are cut to one length, each keeping its start, so every summarized
message still reaches the summarizer and a long paste costs no more than its share; the flush
note reads the same transcript. The whole text stays in the thread's journal.

Driven through `create_memory_graph` on every backend, under invoke and ainvoke, with the
recording model of tests/test_compaction_cache_share.py sent the transcript
(`prompt_cache_read_ratio` 1: a repeated request never bills less), and through the
recent-window policy's rolling summary.
"""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import BaseMessage, HumanMessage

from memory_plugin import Backend, MemorySettings
from memory_plugin.context_management.prompts import FLUSH_SYSTEM, SUMMARY_SYSTEM, fair_cap
from memory_plugin.errors import SettingsError
from tests.fakes import CompactionModel
from tests.test_compaction_cache_share import ANN, BEFORE, QUIET, Recorder, config, graph
from tests.test_thread_window import script
from tests.thread_helpers import build_graph, chat

WORDS = "word " * 800


def questions(n: int) -> list[str]:
    """Questions of about 4,000 characters, each with its own last word."""
    return [f"question {i}: {WORDS}tail{i}" for i in range(n)]


def transcript(request: list[BaseMessage]) -> str:
    """The <messages> part of a summary or flush request."""
    found = re.search(r"<messages>\n(.*)\n</messages>", str(request[-1].content), re.S)
    assert found is not None, "the request holds a transcript"
    return found.group(1)


def summary_transcript(model: Recorder) -> str:
    (i,) = model.transcript_requests()
    return transcript(model.requests[i][0])


def settings(**values: Any) -> MemorySettings:
    return MemorySettings(**{**QUIET, "prompt_cache_read_ratio": 1.0, **values})


def run(app: Any, texts: list[str]) -> None:
    for text in texts:
        app.invoke({"messages": [HumanMessage(text)]}, config("t1"), context=ANN)


def test_a_summary_reads_at_most_its_budget_and_every_message_s_start(backend: Backend) -> None:
    model = Recorder()
    run(graph(backend, model, settings(summary_input_chars=2_000)), questions(BEFORE + 2))
    text = summary_transcript(model)
    lines = text.split("\n")
    bodies = [line.split(": ", 1)[1] for line in lines]
    assert sum(len(body.removesuffix(" …")) for body in bodies) <= 2_000
    assert all(f"question {i}:" in text for i in range(BEFORE - 1)), "every question starts"
    assert "tail0" not in text, "the long questions were cut"
    assert "Assistant: Answered." in text, "a short answer is read whole"


async def test_under_ainvoke_too(abackend: Backend) -> None:
    model = Recorder()
    app = graph(abackend, model, settings(summary_input_chars=2_000))
    for text in questions(BEFORE + 2):
        await app.ainvoke({"messages": [HumanMessage(text)]}, config("t1"), context=ANN)
    text = summary_transcript(model)
    assert "question 0:" in text and "tail0" not in text
    assert len(text) < 2_000 + 40 * text.count("\n")


def test_a_large_budget_reads_every_message_whole(backend: Backend) -> None:
    model = Recorder()
    run(graph(backend, model, settings(summary_input_chars=100_000)), questions(BEFORE + 2))
    text = summary_transcript(model)
    assert all(f"tail{i}" in text for i in range(BEFORE - 1)), "nothing was cut"
    assert " …" not in text


def test_the_flush_note_reads_the_same_transcript(backend: Backend) -> None:
    model = Recorder()
    chosen = settings(summary_input_chars=2_000, flush=True)
    run(graph(backend, model, chosen), questions(BEFORE + 2))
    flushes = [
        request
        for request, _ in model.requests
        if str(request[0].content).startswith(FLUSH_SYSTEM.split("{")[0])
    ]
    assert flushes, "a flush note was asked for"
    assert transcript(flushes[0]) == summary_transcript(model)
    assert str(model.requests[model.transcript_requests()[0]][0][0].content) == SUMMARY_SYSTEM


def test_a_budget_below_its_bound_is_refused_naming_it() -> None:
    with pytest.raises(SettingsError, match=r"summary_input_chars.*1000 to"):
        MemorySettings(summary_input_chars=10)


@given(st.lists(st.integers(0, 5_000), max_size=40), st.integers(0, 50_000))
def test_the_cap_is_the_largest_that_fits(lengths: list[int], budget: int) -> None:
    cap = fair_cap(lengths, budget)
    if cap is None:
        assert sum(lengths) <= budget
        return
    assert sum(min(n, cap) for n in lengths) <= budget
    assert sum(min(n, cap + 1) for n in lengths) > budget, "one more character would not fit"


def test_the_recent_window_s_rolling_summary_reads_within_the_budget(backend: Backend) -> None:
    summarizer = CompactionModel()
    model = chat(script(6), window=None)
    platform = {"thread_policy": "recent_window", "masking": False, "summary_input_chars": 1_000}
    app, manager = build_graph(backend, model, summary_model=summarizer, platform=platform)
    config = {"configurable": {"thread_id": "w1", "recent_window_messages": 4}}
    for n in range(6):
        question = HumanMessage(f"read page {n}: {WORDS}tail{n}")
        app.invoke({"messages": [question]}, config, context=ANN)
    manager.wait_for_background()
    summaries = [p for p in summarizer.prompts if p.startswith("summary")]
    assert summaries, "a rolling summary pass ran"
    text = summaries[0].partition("<messages>\n")[2].partition("\n</messages>")[0]
    assert "User: read page 0:" in text and "tail0" not in text
    assert sum(len(line.split(": ", 1)[-1]) for line in text.split("\n")) <= 1_000 + 2 * len(
        text.split("\n")
    )
