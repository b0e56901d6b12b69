"""Sync and async twins without two copies of the logic.

Memory logic is written once as a *plan*: a generator that yields requests and receives their
results, the way `BaseStore` funnels every call through `batch` / `abatch`. A request is a
list of store operations or a `ModelCall`. `run` drives a plan with `store.batch` and
`model.invoke`, `arun` with `await store.abatch` and `await model.ainvoke`. A failed request
is thrown into the plan at its `yield`, so the plan decides what a failure means.
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langgraph.store.base import BaseStore, Op

T = TypeVar("T")


@dataclass(frozen=True)
class ModelCall:
    """Ask a chat model for one reply."""

    model: BaseChatModel
    messages: Sequence[BaseMessage]


Request = list[Op] | ModelCall
Plan = Generator[Request, Any, T]


def _resume(plan: Plan[T], result: Any, failure: Exception | None) -> Request:
    return plan.throw(failure) if failure is not None else plan.send(result)


def run(store: BaseStore, plan: Plan[T]) -> T:
    """Drive a plan to completion synchronously."""
    try:
        request = next(plan)
        while True:
            try:
                if isinstance(request, ModelCall):
                    result: Any = request.model.invoke(list(request.messages))
                else:
                    result = store.batch(request)
            except Exception as exc:
                request = _resume(plan, None, exc)
            else:
                request = _resume(plan, result, None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun(store: BaseStore, plan: Plan[T]) -> T:
    """Drive a plan to completion asynchronously."""
    try:
        request = next(plan)
        while True:
            try:
                if isinstance(request, ModelCall):
                    result: Any = await request.model.ainvoke(list(request.messages))
                else:
                    result = await store.abatch(request)
            except Exception as exc:
                request = _resume(plan, None, exc)
            else:
                request = _resume(plan, result, None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
