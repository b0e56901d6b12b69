"""Sync and async twins without two copies of the logic.

Memory logic is written once as a *plan*: a generator that yields requests and receives
their results, the way `BaseStore` funnels every call through `batch` / `abatch`. A request
is a list of store operations, a `PutIfVersion` or a `ModelCall`. `run` drives a plan with
the store's and model's sync methods, `arun` with their async twins. A failed request is
thrown into the plan at its `yield`, so the plan decides what a failure means.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from typing import Any, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langgraph.store.base import BaseStore, Op

from memory_plugin.backends.conditional import aput_if_version, put_if_version
from memory_plugin.storable import storable, storable_op

T = TypeVar("T")


@dataclass(frozen=True)
class ModelCall:
    """Ask a chat model for one reply, failing with TimeoutError after `timeout` seconds."""

    model: BaseChatModel
    messages: Sequence[BaseMessage]
    timeout: float | None = None


_timeout_pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="memory-plugin-model")


def _invoke(call: ModelCall) -> Any:
    if call.timeout is None:
        return call.model.invoke(list(call.messages))
    future = _timeout_pool.submit(call.model.invoke, list(call.messages))
    try:
        return future.result(timeout=call.timeout)
    except FutureTimeout:
        future.cancel()
        raise TimeoutError(f"the model did not answer within {call.timeout:g} s") from None


async def _ainvoke(call: ModelCall) -> Any:
    try:
        return await asyncio.wait_for(call.model.ainvoke(list(call.messages)), call.timeout)
    except TimeoutError:
        raise TimeoutError(f"the model did not answer within {call.timeout:g} s") from None


@dataclass(frozen=True)
class PutIfVersion:
    """Write an item only if its version is still `expected` (None: only if absent).

    The result is the stored value with its new version, or None when the check failed.
    """

    namespace: tuple[str, ...]
    key: str
    value: Mapping[str, Any]
    expected: int | None


Request = list[Op] | ModelCall | PutIfVersion
Plan = Generator[Request, Any, T]


def _put_args(request: PutIfVersion) -> tuple[Any, ...]:
    """The fields of a conditional put, in order, its value made storable (not copied when
    already storable)."""
    return (request.namespace, request.key, storable(request.value), request.expected)


def _resume(plan: Plan[T], result: Any, failure: Exception | None) -> Request:
    return plan.throw(failure) if failure is not None else plan.send(result)


def run(store: BaseStore, plan: Plan[T]) -> T:
    """Drive a plan to completion synchronously."""
    try:
        request = next(plan)
        while True:
            try:
                if isinstance(request, ModelCall):
                    result: Any = _invoke(request)
                elif isinstance(request, PutIfVersion):
                    result = put_if_version(store, *_put_args(request))
                else:
                    result = store.batch([storable_op(op) for op in request])
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
                    result: Any = await _ainvoke(request)
                elif isinstance(request, PutIfVersion):
                    result = await aput_if_version(store, *_put_args(request))
                else:
                    result = await store.abatch([storable_op(op) for op in request])
            except Exception as exc:
                request = _resume(plan, None, exc)
            else:
                request = _resume(plan, result, None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def gather(plans: Sequence[Plan[Any]]) -> Plan[list[Any]]:
    """Run plans side by side, merging their store-operation requests into one batch per
    round (other requests go one at a time); a plan's failure is thrown into that plan only."""
    results: list[Any] = [None] * len(plans)
    pending: dict[int, Request] = {}
    replies: dict[int, tuple[Any, Exception | None]]
    for i, plan in enumerate(plans):
        try:
            pending[i] = next(plan)
        except StopIteration as done:
            results[i] = done.value
    while pending:
        batched = {i: r for i, r in pending.items() if isinstance(r, list)}
        if batched:
            merged = [op for ops in batched.values() for op in ops]
            try:
                outcome: Any = yield merged
            except Exception as exc:
                replies = {i: (None, exc) for i in batched}
            else:
                replies, at = {}, 0
                for i, ops in batched.items():
                    replies[i] = (outcome[at : at + len(ops)], None)
                    at += len(ops)
        else:
            i, request = next(iter(pending.items()))
            try:
                replies = {i: ((yield request), None)}
            except Exception as exc:
                replies = {i: (None, exc)}
        for i, (value, failure) in replies.items():
            try:
                pending[i] = _resume(plans[i], value, failure)
            except StopIteration as done:
                results[i] = done.value
                del pending[i]
    return results
