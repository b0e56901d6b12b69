"""Namespace versions: how a turn knows, in one statement, that the memory it read is unchanged.

Every write to a namespace (a put, an update, a delete; ours, LangGraph's or another app
server's) gives that namespace a new version, in the writing transaction, from a counter that
only grows; a namespace its last item left has none (nothing of an erased user stays
behind). Triggers on LangGraph's `store` table keep them on SQLite and PostgreSQL
(memory_plugin.backends.langgraph_tables), the batch itself on the in-memory store.
`ReadVersions` gives the versions under a set of namespaces (exact ones, and prefixes with
everything below them); a reader that took them before it read the namespaces' items, and
finds them the same later, knows the items are too. A store that keeps no versions (one not
opened by `connect`, LangGraph Server's) answers None, and so does a namespace no version
counts (thread journals): read again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.store.base import BaseStore, Op, PutOp
from langgraph.store.postgres import AsyncPostgresStore, PostgresStore
from langgraph.store.sqlite import SqliteStore
from langgraph.store.sqlite.aio import AsyncSqliteStore

from memory_plugin.backends.fts import (
    apg_search_connection,
    asqlite_search_connection,
    pg_search_connection,
    sqlite_search_connection,
)

Namespace = tuple[str, ...]
Versions = list[list[Any]]
UNVERSIONED = ("memory_plugin", "thread")


@dataclass(frozen=True)
class Reads:
    """The namespaces a read touched: exact ones (gets) and prefixes (searches)."""

    exact: tuple[Namespace, ...] = ()
    prefixes: tuple[Namespace, ...] = ()

    @property
    def versioned(self) -> bool:
        """Whether every namespace read is one whose writes are counted."""
        every = (*self.exact, *self.prefixes)
        return bool(every) and not any(ns[: len(UNVERSIONED)] == UNVERSIONED for ns in every)

    def covers(self, scope: str) -> bool:
        """Whether a write to the namespace `scope` (dotted) touches what was read."""
        if scope in {_text(ns) for ns in self.exact}:
            return True
        return any(scope == p or scope.startswith(p + ".") for p in map(_text, self.prefixes))

    def to_json(self) -> list[list[list[str]]]:
        """The reads as a checkpoint keeps them."""
        return [[list(ns) for ns in self.exact], [list(ns) for ns in self.prefixes]]

    @classmethod
    def from_json(cls, value: Any) -> Reads:
        """Reads from to_json's form."""
        exact, prefixes = value
        return cls(tuple(tuple(ns) for ns in exact), tuple(tuple(ns) for ns in prefixes))


def merged(reads: Sequence[Reads]) -> Reads:
    """One Reads of several."""
    exact = {ns for r in reads for ns in r.exact}
    prefixes = {ns for r in reads for ns in r.prefixes}
    return Reads(tuple(sorted(exact)), tuple(sorted(prefixes)))


def _text(namespace: Namespace) -> str:
    return ".".join(namespace)


def _where(reads: Reads, mark: str) -> tuple[str, list[str]]:
    """A WHERE clause over memory_versions.scope and its arguments ('.' < '/' in every
    collation LangGraph's prefixes are compared with: a prefix's descendants sort between)."""
    clauses, args = [], []
    for ns in reads.exact:
        clauses.append(f"scope = {mark}")
        args.append(_text(ns))
    for ns in reads.prefixes:
        clauses.append(f"(scope = {mark} OR (scope > {mark} AND scope < {mark}))")
        args += [_text(ns), _text(ns) + ".", _text(ns) + "/"]
    return " OR ".join(clauses), args


def _rows(rows: Iterable[Any]) -> Versions:
    return sorted(
        [str(r["scope"]), int(r["version"])] if isinstance(r, dict) else [str(r[0]), int(r[1])]
        for r in rows
    )


def _in_memory(store: BaseStore, reads: Reads) -> Versions | None:
    counts: dict[str, int] | None = getattr(store, "versions", None)
    if counts is None:
        return None
    return sorted([scope, n] for scope, n in list(counts.items()) if reads.covers(scope))


def bump(
    versions: dict[str, int],
    counter: Iterator[int],
    ops: Iterable[Op],
    live: Callable[[Namespace], bool],
) -> None:
    """New versions for the namespaces `ops` wrote, none for those left empty (the in-memory
    store's batch, under its lock)."""
    for op in ops:
        if isinstance(op, PutOp) and op.namespace[: len(UNVERSIONED)] != UNVERSIONED:
            if live(op.namespace):
                versions[_text(op.namespace)] = next(counter)
            else:
                versions.pop(_text(op.namespace), None)


@dataclass(frozen=True)
class ReadVersions:
    """The versions under `reads`' namespaces (None: this store keeps none)."""

    reads: Reads

    def run(self, store: BaseStore) -> Versions | None:
        """The versions, with the store's sync methods."""
        if not self.reads.versioned:
            return None
        if isinstance(store, PostgresStore):
            where, args = _where(self.reads, "%s")
            with pg_search_connection(store) as conn:
                sql = f"SELECT scope, version FROM memory_versions WHERE {where}"
                return _rows(conn.execute(sql, args).fetchall())
        if isinstance(store, SqliteStore):
            where, args = _where(self.reads, "?")
            with sqlite_search_connection(store) as conn:
                sql = f"SELECT scope, version FROM memory_versions WHERE {where}"
                return _rows(conn.execute(sql, args).fetchall())
        return _in_memory(store, self.reads)

    async def arun(self, store: BaseStore) -> Versions | None:
        """Async twin of run."""
        if not self.reads.versioned:
            return None
        if isinstance(store, AsyncPostgresStore):
            where, args = _where(self.reads, "%s")
            async with apg_search_connection(store) as conn:
                sql = f"SELECT scope, version FROM memory_versions WHERE {where}"
                return _rows(await (await conn.execute(sql, args)).fetchall())
        if isinstance(store, AsyncSqliteStore):
            where, args = _where(self.reads, "?")
            async with asqlite_search_connection(store) as conn:
                sql = f"SELECT scope, version FROM memory_versions WHERE {where}"
                return _rows(await conn.execute_fetchall(sql, args))
        if isinstance(store, (PostgresStore, SqliteStore)):
            return self.run(store)
        return _in_memory(store, self.reads)
