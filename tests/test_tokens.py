"""One token counter: approximate by default, model-aware where possible, incremental."""

from __future__ import annotations

import logging

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, HumanMessage, ToolMessage

from memory_plugin import TokenCounter, context_window, counter_for
from memory_plugin.tokens import reports_window


def _thread(n: int) -> list:  # type: ignore[type-arg]
    messages = []
    for i in range(n):
        messages.append(HumanMessage(f"question {i} " * 20, id=f"h{i}"))
        messages.append(
            AIMessage(
                "",
                id=f"a{i}",
                tool_calls=[{"name": "search", "args": {"q": str(i)}, "id": f"c{i}"}],
            )
        )
        messages.append(ToolMessage("result " * 200, tool_call_id=f"c{i}", id=f"t{i}"))
    return messages


def test_approximate_count_grows_with_text() -> None:
    counter = TokenCounter()
    short = counter.count([HumanMessage("hi", id="1")])
    long = counter.count([HumanMessage("hi " * 400, id="2")])
    assert 0 < short < long
    assert 250 < long < 400


def test_a_new_turn_counts_only_new_messages() -> None:
    counter = TokenCounter()
    thread = _thread(50)
    first = counter.count(thread)
    assert counter.computed == len(thread)
    thread += [HumanMessage("one more", id="new")]
    second = counter.count(thread)
    assert counter.computed == len(thread)
    assert second > first


def test_a_changed_message_is_recounted() -> None:
    counter = TokenCounter()
    original = ToolMessage("x " * 2_000, tool_call_id="c1", id="t1")
    masked = ToolMessage("[output masked]", tool_call_id="c1", id="t1")
    assert counter.count_message(masked) < counter.count_message(original)
    assert counter.computed == 2


def test_model_aware_encoder_is_used_when_given() -> None:
    words = TokenCounter(lambda text: len(text.split()), name="words")
    assert words.count_message(HumanMessage("one two three", id="1")) == 3 + 3
    assert words.count_text("a b c d") == 4


def test_tiktoken_offline_falls_back_cleanly(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, logger="memory_plugin.tokens"):
        counter = counter_for("gpt-4o-mini")
    assert counter.count([HumanMessage("hello", id="1")]) > 0
    assert counter is counter_for("gpt-4o-mini")
    if counter.name == "approximate":
        assert any("falls back" in r.getMessage() for r in caplog.records)


def test_window_comes_from_the_model_profile_or_the_fallback() -> None:
    with_profile = GenericFakeChatModel(messages=iter([]), profile={"max_input_tokens": 128_000})
    without = GenericFakeChatModel(messages=iter([]))
    assert context_window(with_profile) == 128_000 and reports_window(with_profile)
    assert context_window(without) == 200_000 and not reports_window(without)
    assert context_window(without, fallback=32_000) == 32_000
