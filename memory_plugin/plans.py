"""Sync and async twins without two copies of the logic.

Store logic is written once as a *plan*: a generator that yields lists of store operations and
receives their results, the way `BaseStore` funnels every call through `batch` / `abatch`.
`run` drives a plan with `store.batch`, `arun` with `await store.abatch`.
"""

from __future__ import annotations

from collections.abc import Generator
from typing import TypeVar

from langgraph.store.base import BaseStore, Op, Result

T = TypeVar("T")
Plan = Generator[list[Op], list[Result], T]


def run(store: BaseStore, plan: Plan[T]) -> T:
    """Drive a plan to completion with the store's synchronous batch."""
    try:
        ops = next(plan)
        while True:
            ops = plan.send(store.batch(ops))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun(store: BaseStore, plan: Plan[T]) -> T:
    """Drive a plan to completion with the store's asynchronous batch."""
    try:
        ops = next(plan)
        while True:
            ops = plan.send(await store.abatch(ops))
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
