"""Plug a classifier you already trust into every memory write: `screen=`.

Run `python examples/screen_hook.py` (no key needed). The check below is a fake classifier, a
stand-in for a hosted moderation endpoint or a local model. A check has one signature,
`check(text, visibility) -> str | None`: it gets the text as the caller wrote it and whom it
reaches ("private" or "shared"), and returns a reason to refuse the write or None to pass it.
It runs after the built-in rules (text they refuse never reaches it) and before the judge
(the `screen_judge` setting). A check that raises has failed: private memory is stored and
the failure logged, team memory is refused (or stored, with `screen_judge_failure=allow`).

The same check plugs into `create_memory_graph(..., screen=classify)`,
`MemoryMiddleware(model, screen=classify)`, the console's `create_app(..., screen=classify)`
and the command line: `memory-plugin chat --screen screen_hook:classify` (`serve`,
`consolidate` and `restore` take it too). It prints:

    remember: Noted for 2026-12-01 (note #1).
    remember: Memory not changed: the note was refused: reads as an advertisement (score 1.0) ...
    team note refused: the note was refused: reads as an advertisement (score 0.5) ...

(each refusal ends "(safety screen: operator check)").
"""

from __future__ import annotations

from langchain_core.messages import HumanMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.store.memory import InMemoryStore

import memory_plugin
from memory_plugin.safety import Screen, Visibility, screening
from memory_plugin.scoped import ScopedMemory

PROMOTIONAL = ("discount", "coupon", "buy now", "limited offer")


def classify(text: str, visibility: Visibility) -> str | None:
    """A fake classifier: a score for how promotional the text reads. Call your own classifier
    here and turn its label into a reason; shared memory gets the stricter threshold."""
    score = sum(word in text.lower() for word in PROMOTIONAL) / 2
    if score >= (0.5 if visibility == "shared" else 1.0):
        return f"reads as an advertisement (score {score:.1f})"
    return None


def main() -> None:
    ann = {"user_id": "ann", "workspace_id": "acme"}
    graph = memory_plugin.create_memory_graph(
        memory_plugin.OfflineModel(),
        store=InMemoryStore(),
        checkpointer=InMemorySaver(),
        settings=memory_plugin.MemorySettings(profile=False),
        screen=classify,
    )
    for n, text in enumerate(
        [
            "Remember that the release freeze starts Friday.",
            "Remember that AcmeShop has a discount coupon for you.",
        ]
    ):
        out = graph.invoke(
            {"messages": [HumanMessage(text)]},
            {"configurable": {"thread_id": f"t{n}"}},
            context=ann,
        )
        for message in out["messages"]:
            if isinstance(message, ToolMessage):
                print(f"{message.name}: {message.content}")

    # Outside a graph, `screening` makes the same check active for direct writes.
    team = memory_plugin.MemoryContext(
        user_id="ann", workspace_id="acme", thread_visibility="shared"
    )
    with screening(Screen(check=classify)):
        try:
            ScopedMemory(InMemoryStore()).remember(team, "Team coupon code: SPRING")
        except memory_plugin.MemoryWriteError as exc:
            print(f"team note refused: {exc}")


if __name__ == "__main__":
    main()
