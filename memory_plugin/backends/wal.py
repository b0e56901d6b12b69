"""Emptying SQLite's write-ahead log after a removal (see memory_plugin.backends.sqlite), so
that the page images written before it leave the disk."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import aiosqlite

from memory_plugin.backends.index import log_once

_TRUNCATE_WAL = "PRAGMA wal_checkpoint(TRUNCATE)"
PURGE_WAIT_MS = 250
"""How long emptying the log waits for another process's readers, holding the lock this
process's writes take (SQLite's busy timeout, 5 s, would stall every turn that long)."""
_BUSY = (
    "SQLite could not empty its write-ahead log after a removal (another process is reading "
    "the database): the removed text stays in memory.db-wal until the last connection closes "
    "or an operator runs PRAGMA wal_checkpoint(TRUNCATE)"
)


def _checked(rows: Iterable[Any]) -> None:
    if next(iter(rows), (1,))[0]:
        log_once(_BUSY)


def truncate_wal(conn: Any) -> None:
    """Copy the write-ahead log into the file and empty it; a busy database is logged."""
    try:
        (waited,) = conn.execute("PRAGMA busy_timeout").fetchone()
        conn.execute(f"PRAGMA busy_timeout={PURGE_WAIT_MS}")
        try:
            rows = conn.execute(_TRUNCATE_WAL).fetchall()
        finally:
            conn.execute(f"PRAGMA busy_timeout={int(waited)}")
        _checked(rows)
    except Exception as exc:
        log_once(f"{_BUSY} ({exc})")


async def atruncate_wal(conn: aiosqlite.Connection) -> None:
    """Async twin of truncate_wal."""
    try:
        ((waited,),) = await conn.execute_fetchall("PRAGMA busy_timeout")
        await conn.execute(f"PRAGMA busy_timeout={PURGE_WAIT_MS}")
        try:
            rows = await conn.execute_fetchall(_TRUNCATE_WAL)
        finally:
            await conn.execute(f"PRAGMA busy_timeout={int(waited)}")
        _checked(rows)
    except Exception as exc:
        log_once(f"{_BUSY} ({exc})")
