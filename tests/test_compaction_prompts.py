"""What a compaction asks its summarizer: every summarized message is in the prompt, a tool
call's arguments included, even when they are not plain JSON."""

from __future__ import annotations

from datetime import UTC, date, datetime

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langgraph.store.memory import InMemoryStore

from memory_plugin.context_management.compaction import Compaction, compaction_plan
from memory_plugin.context_management.state import add_messages_batch
from memory_plugin.plans import run
from memory_plugin.settings import MemorySettings
from memory_plugin.tokens import TokenCounter
from tests.fakes import CompactionModel

COUNTER = TokenCounter()


def thread(args: dict[str, object]) -> list[BaseMessage]:
    """A booking call with these arguments, its result, then enough turns to compact it."""
    call = {"name": "book_room", "args": args, "id": "call-1"}
    messages: list[BaseMessage] = [
        HumanMessage("Book the Lisbon room", id="h0"),
        AIMessage("", tool_calls=[call], id="a0"),
        ToolMessage("booked", tool_call_id="call-1", name="book_room", id="t0"),
        AIMessage("Booked.", id="r0"),
    ]
    for turn in range(1, 8):
        messages += [
            HumanMessage(f"question {turn} " + "words " * 200, id=f"h{turn}"),
            AIMessage(f"answer {turn} " + "words " * 200, id=f"r{turn}"),
        ]
    return messages


def compact(messages: list[BaseMessage], model: CompactionModel) -> Compaction:
    plan = compaction_plan(
        messages,
        {"tokens": COUNTER.count(messages)},
        model=model,
        settings=MemorySettings(),
        window=COUNTER.count(messages),
        counter=COUNTER,
        kind="auto",
        now=datetime(2026, 12, 6, tzinfo=UTC),
        flush=None,
    )
    return run(InMemoryStore(), plan)


def test_a_tool_call_with_a_date_argument_is_summarized_with_its_date() -> None:
    model = CompactionModel()
    result = compact(thread({"city": "Lisbon", "day": date(2027, 3, 14)}), model)
    assert result.status == "compacted"
    (prompt,) = model.prompts
    assert 'Assistant called book_room({"city": "Lisbon", "day": "2027-03-14"})' in prompt


def test_the_compacted_thread_keeps_the_newest_messages_as_they_were() -> None:
    messages = thread({"city": "Lisbon"})
    result = compact(messages, CompactionModel())
    assert result.status == "compacted"
    after = add_messages_batch(messages, [result.updates["messages"]])  # type: ignore[arg-type]
    assert "h0" not in {m.id for m in after}
    assert [m.id for m in after] == [m.id for m in messages[-len(after) :]]
    assert all(a is b for a, b in zip(after, messages[-len(after) :], strict=True))
