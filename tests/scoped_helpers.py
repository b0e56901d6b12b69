"""Shared pieces for the scoped-memory tests: contexts, a settable clock, fake models."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from datetime import UTC, datetime, timedelta

import pytest
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.store.base import BaseStore, Op, Result

from memory_plugin import MemoryContext

ANN = MemoryContext(user_id="ann", workspace_id="acme")
BOB = MemoryContext(user_id="bob", workspace_id="acme")
ANN_TEAM = MemoryContext(user_id="ann", workspace_id="acme", thread_visibility="shared")
BOB_TEAM = MemoryContext(user_id="bob", workspace_id="acme", thread_visibility="shared")
OTHER_TEAM = MemoryContext(user_id="ann", workspace_id="globex", thread_visibility="shared")


class Clock:
    """A clock the test moves by hand."""

    def __init__(self, start: datetime = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)) -> None:
        self.now = start

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


def scripted(*replies: str) -> GenericFakeChatModel:
    """A chat model that answers with these texts, in order (stands in for a real LLM)."""
    return GenericFakeChatModel(messages=iter(AIMessage(r) for r in replies))


class FailingModel(GenericFakeChatModel):
    """A chat model whose every call fails, as a provider outage would."""

    def _generate(self, *args: object, **kwargs: object) -> object:  # type: ignore[override]
        raise ConnectionError("model provider unreachable")


def failing_model() -> FailingModel:
    """A model that always raises."""
    empty: Iterator[AIMessage] = iter(())
    return FailingModel(messages=empty)


def break_store(
    monkeypatch: pytest.MonkeyPatch,
    store: BaseStore,
    when: Callable[[list[Op]], bool],
    error: Exception,
) -> None:
    """Make this store's batch (and abatch) raise `error` for batches matching `when`."""
    cls = type(store)
    original_batch, original_abatch = cls.batch, cls.abatch

    def batch(self: BaseStore, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if self is store and when(ops):
            raise error
        return original_batch(self, ops)

    async def abatch(self: BaseStore, ops: Iterable[Op]) -> list[Result]:
        ops = list(ops)
        if self is store and when(ops):
            raise error
        return await original_abatch(self, ops)

    monkeypatch.setattr(cls, "batch", batch)
    monkeypatch.setattr(cls, "abatch", abatch)
