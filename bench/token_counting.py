"""Per-turn token counting on long threads: the cached counter against a full recount.

Run: python bench/token_counting.py [--sizes 50000,150000,400000] [--turns 30]
"""

from __future__ import annotations

import argparse
import re
import statistics
import time

from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.utils import count_tokens_approximately

from memory_plugin import TokenCounter


def thread(approx_tokens: int) -> list[BaseMessage]:
    """A thread of user turns, tool calls and 2-8 KB tool outputs of about this many tokens."""
    messages: list[BaseMessage] = []
    total, i = 0, 0
    while total < approx_tokens:
        call = {"name": "search", "args": {"q": str(i)}, "id": f"c{i}"}
        turn = [
            HumanMessage(f"question {i} " * 15, id=f"h{i}"),
            AIMessage("", id=f"a{i}", tool_calls=[call]),
            ToolMessage("word " * (400 + (i % 4) * 400), tool_call_id=f"c{i}", id=f"t{i}"),
        ]
        total += count_tokens_approximately(turn)
        messages += turn
        i += 1
    return messages


def per_turn_ms(fn, messages: list[BaseMessage], turns: int = 30) -> float:  # type: ignore[no-untyped-def]
    """Median milliseconds to count the thread after appending one message per turn."""
    samples = []
    for t in range(turns):
        messages.append(HumanMessage(f"turn {t}", id=f"turn-{t}"))
        start = time.perf_counter()
        fn(messages)
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def split_encoder(text: str) -> int:
    """A stand-in for a model tokenizer: reads every character, like BPE does."""
    return len(re.findall(r"\w+|[^\w\s]", text))


def main() -> None:
    """Print a Markdown table of cached vs full-recount per-turn cost."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="50000,150000,400000", help="approximate tokens")
    parser.add_argument("--turns", type=int, default=30, help="turns timed per thread")
    args = parser.parse_args()
    print("| counter | thread | messages | full recount (ms) | cached (ms) | speed-up |")
    print("| --- | --- | --- | --- | --- | --- |")
    for label, encode in (("approximate", None), ("tokenizer stand-in", split_encoder)):
        for size in (int(s) for s in args.sizes.split(",")):
            messages = thread(size)
            counter = TokenCounter(encode)
            counter.count(messages)

            def full(msgs: list[BaseMessage], encode=encode) -> int:  # type: ignore[no-untyped-def]
                return TokenCounter(encode).count(msgs)

            full_ms = per_turn_ms(full, list(messages), args.turns)
            cached_ms = per_turn_ms(counter.count, list(messages), args.turns)
            print(
                f"| {label} | ~{size // 1000}k tokens | {len(messages)} | {full_ms:.3f} "
                f"| {cached_ms:.3f} | {full_ms / cached_ms:.1f}x |"
            )


if __name__ == "__main__":
    main()
