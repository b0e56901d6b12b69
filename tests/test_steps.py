"""SQL steps run the same on SQLite's sync and async connections: rows come back to the steps,
parameters given as Rows run once per row, and a failure inside a transaction rolls back
what it began."""

from __future__ import annotations

import sqlite3
from typing import Any

import aiosqlite
import pytest

from memory_plugin.backends.steps import Rows, Steps, adrive, drive, transaction

SCHEMA = "CREATE TABLE t (k TEXT PRIMARY KEY, v INTEGER)"


def fill(rows: list[tuple[str, int]]) -> Steps[list[Any]]:
    yield ("INSERT INTO t (k, v) VALUES (?, ?)", Rows(rows))
    return (yield ("SELECT k, v FROM t ORDER BY k", ()))


def test_rows_run_once_each_and_the_steps_read_them_back() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute(SCHEMA)
    found = drive(
        transaction(fill([("a", 1), ("b", 2)])),
        lambda sql, args: conn.execute(sql, args).fetchall(),
        conn.executemany,
    )
    assert found == [("a", 1), ("b", 2)]


def test_a_failed_row_rolls_back_the_transaction() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute(SCHEMA)
    with pytest.raises(sqlite3.IntegrityError):
        drive(
            transaction(fill([("a", 1), ("a", 2)])),
            lambda sql, args: conn.execute(sql, args).fetchall(),
            conn.executemany,
        )
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


def test_rows_without_a_way_to_run_them_are_refused_before_any_write() -> None:
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute(SCHEMA)
    with pytest.raises(TypeError, match="execute_many"):
        drive(fill([("a", 1)]), lambda sql, args: conn.execute(sql, args).fetchall())
    assert conn.execute("SELECT count(*) FROM t").fetchone() == (0,)


async def test_the_async_driver_runs_rows_alike() -> None:
    async with aiosqlite.connect(":memory:", isolation_level=None) as conn:
        await conn.execute(SCHEMA)
        found = await adrive(
            transaction(fill([("a", 1), ("b", 2)])), conn.execute_fetchall, conn.executemany
        )
        assert list(found) == [("a", 1), ("b", 2)]
