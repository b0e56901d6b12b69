"""SQL written once for SQLite's sync and async connections.

A *steps* generator yields `(statement, parameters)` and receives each statement's rows; a
failed statement is thrown into it at its `yield`, so it can roll back what it began
(`transaction`). Parameters given as `Rows` run the statement once per row (executemany) and
return no rows. `drive` runs steps on a sync `execute`, `adrive` on an async one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Generator, Iterable
from typing import Any, TypeVar

T = TypeVar("T")


class Rows(list[tuple[Any, ...]]):
    """The parameters of a statement run once for each of these rows."""


Query = tuple[str, tuple[Any, ...] | Rows]
Steps = Generator[Query, list[Any], T]
_NO_MANY = "these steps run a statement per row: pass execute_many"


def drive(
    steps: Steps[T],
    execute: Callable[[str, tuple[Any, ...]], Iterable[Any]],
    execute_many: Callable[[str, Rows], Any] | None = None,
) -> T:
    """Run the statements in turn with a synchronous `execute` (and `execute_many` for
    `Rows`); the steps' result."""
    try:
        statement = next(steps)
        while True:
            try:
                sql, params = statement
                if isinstance(params, Rows):
                    if execute_many is None:
                        raise TypeError(_NO_MANY)
                    execute_many(sql, params)
                    rows: list[Any] = []
                else:
                    rows = list(execute(sql, params))
            except BaseException as exc:
                statement = steps.throw(exc)
            else:
                statement = steps.send(rows)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


async def adrive(
    steps: Steps[T],
    execute: Callable[[str, tuple[Any, ...]], Awaitable[Iterable[Any]]],
    execute_many: Callable[[str, Rows], Awaitable[Any]] | None = None,
) -> T:
    """Async twin of drive."""
    try:
        statement = next(steps)
        while True:
            try:
                sql, params = statement
                if isinstance(params, Rows):
                    if execute_many is None:
                        raise TypeError(_NO_MANY)
                    await execute_many(sql, params)
                    rows: list[Any] = []
                else:
                    rows = list(await execute(sql, params))
            except BaseException as exc:
                statement = steps.throw(exc)
            else:
                statement = steps.send(rows)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]


def transaction(steps: Steps[T]) -> Steps[T]:
    """The steps inside BEGIN IMMEDIATE ... COMMIT, rolled back when one fails."""
    return (yield from _between("BEGIN IMMEDIATE", steps))


def snapshot(steps: Steps[T]) -> Steps[T]:
    """The steps inside BEGIN ... COMMIT: their reads see one state of the database, whatever
    another connection commits meanwhile (SQLite's write-ahead log keeps it)."""
    return (yield from _between("BEGIN", steps))


def _between(begin: str, steps: Steps[T]) -> Steps[T]:
    yield (begin, ())
    try:
        result = yield from steps
    except BaseException:
        yield ("ROLLBACK", ())
        raise
    yield ("COMMIT", ())
    return result
