"""How far long privacy work has got (an export, an import, a forget, deleting a user): the
work calls a plain `Progress` callable; the commands show it as a bar on a terminal."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from langgraph.store.base import SearchOp

from memory_plugin.plans import Plan

T = TypeVar("T")

Progress = Callable[[str, int, int | None], None]
"""Called as progress(step, done, total): the step under way, named by what it counts ("items
read", "items deleted"...), how many it has counted, and of how many (None while unknown)."""


def quiet(step: str, done: int, total: int | None) -> None:
    """Report nothing."""


def reading_plan(plan: Plan[T], progress: Progress) -> Plan[T]:
    """Drive `plan`, reporting after each of its store reads how many items it has read."""
    read = 0
    try:
        request = next(plan)
        while True:
            try:
                result: Any = yield request
            except Exception as exc:
                request = plan.throw(exc)
                continue
            if isinstance(request, list):
                found = zip(request, result, strict=True)
                read += sum(len(items) for op, items in found if isinstance(op, SearchOp))
                progress("items read", read, None)
            request = plan.send(result)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
