"""SQL written once for SQLite's sync and async connections.

A *steps* generator yields `(statement, parameters)` and receives each statement's rows; a
failed statement is thrown into it at its `yield`, so it can roll back what it began
(`transaction`). `drive` runs steps on a sync `execute`, `adrive` on an async one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Iterable
from typing import Any, TypeVar

T = TypeVar("T")
Query = tuple[str, tuple[Any, ...]]
Steps = Generator[Query, list[Any], T]


def drive(steps: Steps[T], execute: Callable[[str, tuple[Any, ...]], Iterable[Any]]) -> T:
    """Run the statements in turn with a synchronous `execute`; the steps' result."""
    try:
        statement = next(steps)
        while True:
            try:
                rows = list(execute(*statement))
            except BaseException as exc:
                statement = steps.throw(exc)
            else:
                statement = steps.send(rows)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def adrive(
    steps: Steps[T], execute: Callable[[str, tuple[Any, ...]], Awaitable[Iterable[Any]]]
) -> T:
    """Async twin of drive."""
    try:
        statement = next(steps)
        while True:
            try:
                rows = list(await execute(*statement))
            except BaseException as exc:
                statement = steps.throw(exc)
            else:
                statement = steps.send(rows)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def transaction(steps: Steps[T]) -> Steps[T]:
    """The steps inside BEGIN IMMEDIATE ... COMMIT, rolled back when one fails."""
    yield ("BEGIN IMMEDIATE", ())
    try:
        result = yield from steps
    except BaseException:
        yield ("ROLLBACK", ())
        raise
    yield ("COMMIT", ())
    return result
