"""A checkpoint's DeltaChannel history from PostgreSQL in one round trip, or none.

PostgresSaver.get_delta_channel_history reads it in two stages (and more when the walk spans
several pages of 1,024 checkpoints): the ancestors' channel versions and seed probes, then the
writes on the chain and the seed's blob. Here one statement walks the parent chain in a
recursive CTE that stops, for each channel, at the first ancestor holding a stored value (a
non-empty blob at the channel's version, or an inline value that is not null), exactly where
LangGraph's walk stops, and returns the chain, its writes and the seed's blob together.

The same walk can ride on the get_tuple that precedes the history read (the loop reads the
checkpoint, then its history): with_history wraps LangGraph's get_tuple statement so that its
row also carries the histories the checkpoint needs (its DeltaChannels, named by the counters
LangGraph keeps in its metadata, that have no stored value there), which then answer the
history read of that checkpoint that follows. One statement: one round trip for both.

The fence: the stage-two row shape and PostgresSaver._build_delta_channels_writes_history,
which turns them into the history (langgraph-checkpoint-postgres 3.2); the walk's rules are
those of BasePostgresSaver._try_advance_walks and _build_delta_stage1_sql; the metadata key
"counters_since_delta_snapshot" (langgraph.pregel._checkpoint). Checked against LangGraph's
saver by tests/test_delta_history.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langgraph.checkpoint.base import DeltaChannelHistory
from langgraph.checkpoint.postgres.base import BasePostgresSaver

_THREAD = "c.thread_id = %(thread)s AND c.checkpoint_ns = %(ns)s"
_HAS_BLOB = (
    "EXISTS (SELECT 1 FROM checkpoint_blobs b WHERE b.thread_id = c.thread_id"
    " AND b.checkpoint_ns = c.checkpoint_ns AND b.channel = {ch}"
    " AND b.version = c.checkpoint -> 'channel_versions' ->> {ch} AND b.type <> 'empty')"
)
_PROBE = (
    "c.checkpoint -> 'channel_versions' ->> {ch}, "
    + _HAS_BLOB
    + ", c.checkpoint -> 'channel_values' -> {ch}"
)
_SEEDED = "({p}hb OR ({p}inline IS NOT NULL AND jsonb_typeof({p}inline) <> 'null'))"
_ASKED = "SELECT unnest(%(channels)s::text[]) AS ch FROM target"
_NEEDED = (
    "SELECT k.ch FROM target t,"
    " jsonb_object_keys(coalesce(t.metadata -> 'counters_since_delta_snapshot', '{}'))"
    " AS k(ch), checkpoints c"
    f" WHERE {_THREAD} AND c.checkpoint_id = t.checkpoint_id"
    " AND NOT " + _HAS_BLOB.format(ch="k.ch") + " AND (c.checkpoint -> 'channel_values' -> k.ch"
    " IS NULL OR jsonb_typeof(c.checkpoint -> 'channel_values' -> k.ch) = 'null')"
)
_BY_ID = (
    "SELECT c.checkpoint_id, c.parent_checkpoint_id, c.metadata FROM checkpoints c"
    f" WHERE {_THREAD} AND c.checkpoint_id = %(target)s"
)
_WALK = (
    "walk(ch, checkpoint_id, parent_checkpoint_id, depth, ver, hb, inline) AS ("
    "SELECT w.ch, c.checkpoint_id, c.parent_checkpoint_id, 0, "
    + _PROBE.format(ch="w.ch")
    + " FROM target t CROSS JOIN wanted w JOIN checkpoints c"
    " ON c.checkpoint_id = t.parent_checkpoint_id"
    f" WHERE {_THREAD} AND c.checkpoint_id <= t.checkpoint_id"
    " UNION ALL "
    "SELECT w.ch, c.checkpoint_id, c.parent_checkpoint_id, w.depth + 1, "
    + _PROBE.format(ch="w.ch")
    + " FROM walk w JOIN checkpoints c ON c.checkpoint_id = w.parent_checkpoint_id"
    f" WHERE {_THREAD} AND c.checkpoint_id <= (SELECT checkpoint_id FROM target)"
    " AND NOT " + _SEEDED.format(p="w.") + ")"
)
COLUMNS = [
    "_kind",
    "ch",
    "checkpoint_id",
    "depth",
    "ver",
    "hb",
    "inline",
    "type",
    "blob",
    "task_id",
    "task_path",
    "idx",
    "version",
]
_FOUND = (
    "SELECT 't' AS _kind, NULL AS ch, t.checkpoint_id, NULL::int AS depth, NULL AS ver,"
    " NULL::bool AS hb, NULL::jsonb AS inline, NULL AS type, NULL::bytea AS blob,"
    " NULL AS task_id, NULL AS task_path, NULL::int AS idx, NULL AS version FROM target t"
    " UNION ALL SELECT 'n', ch, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,"
    " NULL FROM wanted"
    " UNION ALL SELECT 'c', ch, checkpoint_id, depth, ver, hb, inline, NULL, NULL, NULL, NULL,"
    " NULL, NULL FROM walk"
    " UNION ALL SELECT 'w', cw.channel, cw.checkpoint_id, NULL, NULL, NULL, NULL, cw.type,"
    " cw.blob, cw.task_id, cw.task_path, cw.idx, NULL FROM walk w JOIN checkpoint_writes cw"
    " ON cw.checkpoint_id = w.checkpoint_id AND cw.channel = w.ch"
    " WHERE cw.thread_id = %(thread)s AND cw.checkpoint_ns = %(ns)s"
    " UNION ALL SELECT 'b', b.channel, NULL, NULL, NULL, NULL, NULL, b.type, b.blob, NULL,"
    " NULL, NULL, b.version FROM walk w JOIN checkpoint_blobs b"
    " ON b.channel = w.ch AND b.version = w.ver"
    " WHERE b.thread_id = %(thread)s AND b.checkpoint_ns = %(ns)s AND " + _SEEDED.format(p="w.")
)
HISTORY_SQL = f"WITH RECURSIVE target AS ({_BY_ID}), wanted AS ({_ASKED}), {_WALK} {_FOUND}"
"""These channels' histories at a checkpoint."""

_OF_TUPLE = (
    (
        f"target AS (SELECT checkpoint_id, parent_checkpoint_id, metadata FROM lg),"
        f" wanted AS ({_NEEDED}), {_WALK} SELECT lg.*, h.* FROM lg LEFT JOIN LATERAL (SELECT "
        + ", ".join(f"array_agg(x.{col}) AS h{col}" for col in COLUMNS)
        + f" FROM ({_FOUND}) AS x) AS h ON true"
    )
    .replace("%(thread)s", "(SELECT thread_id FROM lg)")
    .replace("%(ns)s", "(SELECT checkpoint_ns FROM lg)")
)


def with_history(get_tuple_sql: str) -> str:
    """LangGraph's get_tuple statement, each row with the histories its checkpoint needs
    (columns h_kind, h_ch, ...: the rows of the history statement, as arrays)."""
    return f"WITH RECURSIVE lg AS ({get_tuple_sql}), {_OF_TUPLE}"


def rows_of_tuple(row: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The history statement's rows in a get_tuple row of with_history."""
    count = len(row["h_kind"] or ())
    return [{col: row[f"h{col}"][i] for col in COLUMNS} for i in range(count)]


def history_params(
    thread_id: str, checkpoint_ns: str, checkpoint_id: str, channels: Sequence[str]
) -> dict[str, Any]:
    """The statement's parameters."""
    return {
        "thread": thread_id,
        "ns": checkpoint_ns,
        "target": checkpoint_id,
        "channels": list(channels),
    }


@dataclass(frozen=True)
class Found:
    """What the statement read: the checkpoint, the channels walked, and the walk's rows."""

    thread_id: str
    checkpoint_ns: str
    checkpoint_id: str | None
    channels: frozenset[str]
    rows: Sequence[Mapping[str, Any]]

    def answers(
        self, thread_id: str, checkpoint_ns: str, checkpoint_id: str, asked: Sequence[str]
    ) -> bool:
        """Whether these are the rows of a history read of this checkpoint and channels."""
        return (self.thread_id, self.checkpoint_ns, self.checkpoint_id) == (
            thread_id,
            checkpoint_ns,
            checkpoint_id,
        ) and self.channels.issuperset(asked)


def found(thread_id: str, checkpoint_ns: str, rows: Sequence[Mapping[str, Any]]) -> Found:
    """The statement's rows, with the checkpoint and channels they are of."""
    target = next((row["checkpoint_id"] for row in rows if row["_kind"] == "t"), None)
    walked = frozenset(row["ch"] for row in rows if row["_kind"] == "n")
    return Found(thread_id, checkpoint_ns, target, walked, rows)


def history_from_rows(
    saver: BasePostgresSaver, channels: Sequence[str], rows: Sequence[Mapping[str, Any]]
) -> dict[str, DeltaChannelHistory]:
    """The histories LangGraph's saver builds from the same chain, writes and seed."""
    asked = set(channels)
    walked: dict[str, list[Mapping[str, Any]]] = {channel: [] for channel in channels}
    stage2: list[Mapping[str, Any]] = []
    for row in rows:
        if row["ch"] not in asked:
            continue
        if row["_kind"] == "c":
            walked[row["ch"]].append(row)
        elif row["_kind"] in ("w", "b"):
            stage2.append({**row, "channel": row["ch"]})
    chain_by_ch: dict[str, list[str]] = {}
    seed_ver_by_ch: dict[str, str | None] = {}
    seed_inline_by_ch: dict[str, Any] = {}
    for channel, chain in walked.items():
        chain.sort(key=lambda row: int(row["depth"]))
        chain_by_ch[channel] = [row["checkpoint_id"] for row in chain]
        last = chain[-1] if chain else None
        seeded = last is not None and (last["hb"] or last["inline"] is not None)
        seed_ver_by_ch[channel] = last["ver"] if seeded and last is not None else None
        if seeded and last is not None and not last["hb"]:
            seed_inline_by_ch[channel] = last["inline"]
    return saver._build_delta_channels_writes_history(
        channels=channels,
        chain_by_ch=chain_by_ch,
        seed_ver_by_ch=seed_ver_by_ch,
        seed_inline_by_ch=seed_inline_by_ch,
        stage2_rows=stage2,  # type: ignore[arg-type]
    )
