"""The only statements of memory_plugin on LangGraph's checkpoint tables, and the savers'
private API they run on.

LangGraph's PostgresSaver and SqliteSaver own `checkpoints` (a checkpoint per row:
`thread_id`, `checkpoint_ns`, `checkpoint_id`, `metadata`, ...). `newest_owned` reads it
directly for what BaseCheckpointSaver cannot do in one statement: a page of the threads whose
newest owner metadata (or the graph's record) names a person, by their newest checkpoint
(memory_plugin.context_management.owners decides whose a thread is). It relies on the columns
and index `RELIES_ON` names: the primary key (thread_id, checkpoint_ns, checkpoint_id) for
every thread's newest checkpoint, `checkpoint_id` as text, and `metadata` as JSON (jsonb on
PostgreSQL, JSON text in a blob on SQLite); and on the savers' members `SAVER_API` names,
none of them BaseCheckpointSaver's: the Postgres savers' `_cursor()` (a cursor of dict rows on
their connection or pool), AsyncSqliteSaver's `conn`, `lock` and `setup()`, SqliteSaver's
`cursor(transaction=False)`. tests/test_langgraph_schema.py checks them against the catalogs of
checkpoint tables LangGraph set up and the savers memory_plugin opens.
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import asdict, dataclass
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.postgres import PostgresSaver
from langgraph.checkpoint.postgres.aio import AsyncPostgresSaver
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver

from memory_plugin.backends.langgraph_tables import Index, Schema

_KEY = ("thread_id", "checkpoint_ns", "checkpoint_id")


def _schema(metadata: str, key: str) -> Schema:
    """The columns and primary key the statements rely on, with one database's types."""
    columns = {"thread_id": "text", "checkpoint_ns": "text", "checkpoint_id": "text"}
    return Schema(
        columns={"checkpoints": {**columns, "metadata": metadata}},
        indexes={key: Index("checkpoints", _KEY, unique=True)},
    )


RELIES_ON = {
    "postgres": _schema("jsonb", "checkpoints_pkey"),
    "sqlite": _schema("blob", "sqlite_autoindex_checkpoints_1"),
}
SAVER_API: dict[type[BaseCheckpointSaver[Any]], tuple[str, ...]] = {
    PostgresSaver: ("_cursor",),
    AsyncPostgresSaver: ("_cursor",),
    SqliteSaver: ("cursor",),
    AsyncSqliteSaver: ("conn", "lock", "setup"),
}
"""The members of each saver the statements run on, beyond BaseCheckpointSaver's."""

_OWNED = """
WITH latest AS (
    SELECT thread_id, MAX(checkpoint_id) AS checkpoint_id FROM checkpoints
    WHERE checkpoint_ns = '' GROUP BY thread_id
), owners AS (
    SELECT thread_id, {owner} AS owner,
        ROW_NUMBER() OVER (PARTITION BY thread_id ORDER BY checkpoint_id DESC) AS n
    FROM checkpoints WHERE checkpoint_ns = '' AND {owner} IS NOT NULL
)
SELECT latest.thread_id, latest.checkpoint_id
FROM latest LEFT JOIN owners ON owners.thread_id = latest.thread_id AND owners.n = 1
WHERE (
    (owners.owner = {named} AND latest.thread_id NOT IN {theirs}
        AND ({loose} OR latest.thread_id IN {mine}))
    OR (owners.owner IS NULL AND latest.thread_id IN {mine})
) AND ({text} IS NULL OR latest.checkpoint_id < {text})
ORDER BY latest.checkpoint_id DESC LIMIT {count}
"""
# The owner as its JSON value (a JSON null is none), so an owner that is no string (7) names
# nobody, as in owners.thread_owner.
SQLITE_OWNED = _OWNED.format(
    owner="json_extract(CAST(metadata AS TEXT), '$.owner')",
    named=":owner",
    theirs="(SELECT value FROM json_each(:theirs))",
    loose=":loose",
    mine="(SELECT value FROM json_each(:mine))",
    text=":before",
    count=":limit",
)
POSTGRES_OWNED = _OWNED.format(
    owner="NULLIF(metadata->'owner', 'null'::jsonb)",
    named="to_jsonb(%(owner)s::text)",
    theirs="(SELECT unnest(%(theirs)s::text[]))",
    loose="%(loose)s::boolean",
    mine="(SELECT unnest(%(mine)s::text[]))",
    text="%(before)s::text",
    count="%(limit)s",
)


@dataclass(frozen=True)
class Owned:
    """Which threads are a person's: those whose newest `owner` metadata is `owner` (their
    user id), but the threads in `theirs`, and unless `loose` only those in `mine`; and those
    in `mine` that no metadata names an owner of. A page of them: the `limit` newest whose
    newest checkpoint id is below `before` (None: the newest)."""

    owner: str
    mine: list[str]
    theirs: list[str]
    loose: bool
    before: str | None
    limit: int


async def newest_owned(
    saver: BaseCheckpointSaver[Any], owned: Owned
) -> list[tuple[str, str]] | None:
    """The page of `owned` threads, as (thread id, newest checkpoint id), newest first, read
    with one statement; None from a saver of no SQL tables (the caller scans its checkpoints)."""
    params = asdict(owned)
    if isinstance(saver, AsyncPostgresSaver):
        async with saver._cursor() as cur:
            await cur.execute(POSTGRES_OWNED, params)
            return [(row["thread_id"], row["checkpoint_id"]) for row in await cur.fetchall()]
    if isinstance(saver, AsyncSqliteSaver):
        await saver.setup()
        async with saver.lock, saver.conn.execute(SQLITE_OWNED, _sqlite(params)) as cur:
            return [(row[0], row[1]) for row in await cur.fetchall()]
    if isinstance(saver, PostgresSaver | SqliteSaver):
        return await asyncio.to_thread(_newest_owned_sync, saver, params)
    return None


def _sqlite(params: dict[str, Any]) -> dict[str, Any]:
    """The parameters as SQLite takes them: the thread lists as JSON arrays."""
    return {**params, "theirs": json.dumps(params["theirs"]), "mine": json.dumps(params["mine"])}


def _newest_owned_sync(
    saver: PostgresSaver | SqliteSaver, params: dict[str, Any]
) -> list[tuple[str, str]]:
    if isinstance(saver, PostgresSaver):
        with saver._cursor() as cur:
            cur.execute(POSTGRES_OWNED, params)
            return [(row["thread_id"], row["checkpoint_id"]) for row in cur.fetchall()]
    with saver.cursor(transaction=False) as cur:
        cur.execute(SQLITE_OWNED, _sqlite(params))
        return [(row[0], row[1]) for row in cur.fetchall()]
