"""Sync and async twins without two copies of the logic.

Memory logic is written once as a *plan*: a generator that yields requests and receives
their results, the way `BaseStore` funnels every call through `batch` / `abatch`. A request
is a list of store operations or a request object that carries its own runner: `run(store)`
and `async arun(store)`, defined next to the code that executes it (`PutIfVersion` in
memory_plugin.backends.conditional, `InsertNext` and `InsertMany` in
memory_plugin.backends.claims, `KeywordSearch`, `VectorSearch` and `LiveKeys` in
memory_plugin.backends.search, `NoteDays` in memory_plugin.backends.days, `TakeLease` and
`DropLease` in memory_plugin.backends.leases, `ModelCall` here). `run` drives a plan with the
store's and the requests' sync methods, `arun` with their async twins. A failed request is
thrown into the plan at its `yield`, so the plan decides what a failure means.

This module is the bottom layer: it imports nothing from memory_plugin.backends or
memory_plugin.settings, which both build on it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Generator, Sequence
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass
from functools import partial
from typing import Any, Generic, Protocol, TypeVar

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable
from langgraph.store.base import BaseStore, Item, Op, SearchOp

from memory_plugin import daemon_workers
from memory_plugin.storable import storable_op

T = TypeVar("T")


class StoreRequest(Protocol):
    """A request a plan may yield besides a list of store operations: it runs itself."""

    def run(self, store: BaseStore) -> Any:
        """The request's result, computed with the store's sync methods."""
        ...

    async def arun(self, store: BaseStore) -> Any:
        """The request's result, computed with the store's async methods."""
        ...


@dataclass(frozen=True)
class ModelCall:
    """Ask a chat model for one reply, failing with TimeoutError after `timeout` seconds."""

    model: Runnable[Any, Any]
    messages: Sequence[BaseMessage]
    timeout: float | None = None

    def run(self, store: BaseStore) -> Any:
        """The model's reply (the store is not used)."""
        return _invoke(self)

    async def arun(self, store: BaseStore) -> Any:
        """Async twin of run."""
        return await _ainvoke(self)


def _in_thread(model: Runnable[Any, Any], messages: list[BaseMessage]) -> Future[Any]:
    """The model's reply from a daemon worker that no other call holds, so a call that never
    returns holds neither its caller nor a later call."""
    return daemon_workers.submit(partial(model.invoke, messages))


def _timed_out(call: ModelCall) -> TimeoutError:
    return TimeoutError(f"the model did not answer within {call.timeout:g} s")


def _invoke(call: ModelCall) -> Any:
    """The model's reply, in its own thread when the call is timed."""
    messages = list(call.messages)
    if call.timeout is None:
        return call.model.invoke(messages)
    try:
        return _in_thread(call.model, messages).result(timeout=call.timeout)
    except FutureTimeout:
        raise _timed_out(call) from None


def _native_async(model: Runnable[Any, Any]) -> bool:
    agenerate = getattr(type(getattr(model, "bound", model)), "_agenerate", None)
    return agenerate is not None and agenerate is not BaseChatModel._agenerate


def _forget(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()


async def _ainvoke(call: ModelCall) -> Any:
    """The model's async reply; a timed call gives up at its timeout without waiting for the
    call to wind down, and a model with no async code of its own runs in its own thread
    rather than the loop's shared executor, which hung calls would otherwise fill."""
    messages = list(call.messages)
    if call.timeout is None:
        return await call.model.ainvoke(messages)
    if _native_async(call.model):
        task: asyncio.Future[Any] = asyncio.ensure_future(call.model.ainvoke(messages))
    else:
        task = asyncio.wrap_future(_in_thread(call.model, messages))
    try:
        done, _ = await asyncio.wait({task}, timeout=call.timeout)
    except asyncio.CancelledError:
        task.cancel()
        raise
    if not done:
        task.cancel()
        task.add_done_callback(_forget)
        raise _timed_out(call)
    return task.result()


Request = list[Op] | StoreRequest
Plan = Generator[Request, Any, T]


def all_items_plan(
    namespace: tuple[str, ...], *, page: int, filter: dict[str, Any] | None = None
) -> Plan[list[Item]]:
    """Every item under a namespace prefix (matching `filter`), read `page` items at a time."""
    items: list[Item] = []
    while True:
        (found,) = yield [SearchOp(namespace, filter=filter, limit=page, offset=len(items))]
        items.extend(found)
        if len(found) < page:
            return items


def _resume(plan: Plan[T], result: Any, failure: Exception | None) -> Request:
    return plan.throw(failure) if failure is not None else plan.send(result)


def run(store: BaseStore, plan: Plan[T]) -> T:
    """Drive a plan to completion synchronously."""
    try:
        request = next(plan)
        while True:
            try:
                if isinstance(request, list):
                    result: Any = store.batch([storable_op(op) for op in request])
                else:
                    result = request.run(store)
            except Exception as exc:
                request = _resume(plan, None, exc)
            else:
                request = _resume(plan, result, None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def arun(store: BaseStore, plan: Plan[T]) -> T:
    """Drive a plan to completion asynchronously."""
    return await Drive(store, plan).arun()


class Drive(Generic[T]):
    """A plan driven asynchronously that can be driven on after a cancellation interrupted a
    request: that request is sent again (memory_plugin.background finishes its jobs so when
    their event loop closes)."""

    def __init__(self, store: BaseStore, plan: Plan[T]) -> None:
        self.store = store
        self.plan = plan
        self._request: Request | None = None

    async def arun(self) -> T:
        """Drive the plan to completion from where it stands."""
        try:
            if self._request is None:
                self._request = next(self.plan)
            while True:
                try:
                    if isinstance(self._request, list):
                        ops = [storable_op(op) for op in self._request]
                        result: Any = await self.store.abatch(ops)
                    else:
                        result = await self._request.arun(self.store)
                except Exception as exc:
                    self._request = _resume(self.plan, None, exc)
                else:
                    self._request = _resume(self.plan, result, None)
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]


def _waited(failure: Exception) -> bool:
    """Whether a failure came after waiting out a timeout, so sending each part again would
    wait again: a timeout, a canceled statement, a lock not granted or a locked database."""
    if isinstance(failure, TimeoutError):
        return True
    names = {cls.__name__ for cls in type(failure).__mro__}
    if names & {"QueryCanceled", "LockNotAvailable"}:
        return True
    return "OperationalError" in names and "locked" in str(failure)


def gather(plans: Sequence[Plan[Any]]) -> Plan[list[Any]]:
    """Run plans side by side, merging their store-operation requests into one batch per
    round (other requests go one at a time); a plan's failure is thrown into that plan only.
    When a merged batch fails, each plan's operations are sent again on their own, so one
    plan's failing operation fails that plan alone (a down store fails each part at once);
    not after a timeout, which each part would wait out again."""
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
                if len(batched) > 1 and not _waited(exc):
                    for i, ops in batched.items():
                        try:
                            replies[i] = ((yield ops), None)
                        except Exception as alone:
                            replies[i] = (None, alone)
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
