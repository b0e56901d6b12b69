"""A checkpoint's DeltaChannel history from PostgreSQL in one round trip.

PostgresSaver.get_delta_channel_history reads it in two stages (and more when the walk spans
several pages of 1,024 checkpoints): the ancestors' channel versions and seed probes, then the
writes on the chain and the seed's blob. Here one statement walks the parent chain in a
recursive CTE that stops, for each channel, at the first ancestor holding a stored value (a
non-empty blob at the channel's version, or an inline value that is not null), exactly where
LangGraph's walk stops, and returns the chain, its writes and the seed's blob together.

The fence: the stage-two row shape and PostgresSaver._build_delta_channels_writes_history,
which turns them into the history (langgraph-checkpoint-postgres 3.2); the walk's rules are
those of BasePostgresSaver._try_advance_walks and _build_delta_stage1_sql. Checked against
LangGraph's saver by tests/test_delta_history.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from langgraph.checkpoint.base import DeltaChannelHistory
from langgraph.checkpoint.postgres.base import BasePostgresSaver

_SAME_THREAD = "c.thread_id = %(thread)s AND c.checkpoint_ns = %(ns)s"
_ROW = (
    "_kind, ch, checkpoint_id, depth, ver, hb, inline, type, blob, task_id, task_path, idx, version"
)


def _walk(i: int) -> str:
    probe = (
        f"c.checkpoint -> 'channel_versions' ->> %(ch{i})s AS ver, "
        "EXISTS (SELECT 1 FROM checkpoint_blobs b WHERE b.thread_id = c.thread_id"
        " AND b.checkpoint_ns = c.checkpoint_ns"
        f" AND b.channel = %(ch{i})s"
        f" AND b.version = c.checkpoint -> 'channel_versions' ->> %(ch{i})s"
        " AND b.type <> 'empty') AS hb, "
        f"c.checkpoint -> 'channel_values' -> %(ch{i})s AS inline"
    )
    return (
        f"walk_{i}(checkpoint_id, parent_checkpoint_id, depth, ver, hb, inline) AS ("
        f"SELECT c.checkpoint_id, c.parent_checkpoint_id, 0, {probe}"
        " FROM target t JOIN checkpoints c ON c.checkpoint_id = t.parent_checkpoint_id"
        f" WHERE {_SAME_THREAD} AND c.checkpoint_id <= %(target)s"
        " UNION ALL "
        f"SELECT c.checkpoint_id, c.parent_checkpoint_id, w.depth + 1, {probe}"
        f" FROM walk_{i} w JOIN checkpoints c ON c.checkpoint_id = w.parent_checkpoint_id"
        f" WHERE {_SAME_THREAD} AND c.checkpoint_id <= %(target)s"
        " AND NOT (w.hb OR (w.inline IS NOT NULL AND jsonb_typeof(w.inline) <> 'null')))"
    )


def _selects(i: int) -> list[str]:
    seeded = "hb OR (inline IS NOT NULL AND jsonb_typeof(inline) <> 'null')"
    return [
        f"SELECT 'c'::text, {i}, checkpoint_id, depth, ver, hb, inline, NULL::text, NULL::bytea,"
        f" NULL::text, NULL::text, NULL::int, NULL::text FROM walk_{i}",
        f"SELECT 'w'::text, {i}, w.checkpoint_id, NULL::int, NULL::text, NULL::bool,"
        " NULL::jsonb, w.type, w.blob, w.task_id, w.task_path, w.idx, NULL::text"
        " FROM checkpoint_writes w WHERE w.thread_id = %(thread)s"
        f" AND w.checkpoint_ns = %(ns)s AND w.channel = %(ch{i})s"
        f" AND w.checkpoint_id IN (SELECT checkpoint_id FROM walk_{i})",
        f"SELECT 'b'::text, {i}, NULL::text, NULL::int, NULL::text, NULL::bool, NULL::jsonb,"
        " b.type, b.blob, NULL::text, NULL::text, NULL::int, b.version"
        " FROM checkpoint_blobs b WHERE b.thread_id = %(thread)s"
        f" AND b.checkpoint_ns = %(ns)s AND b.channel = %(ch{i})s"
        f" AND b.version = (SELECT ver FROM walk_{i} WHERE {seeded} LIMIT 1)",
    ]


def history_sql(channels: Sequence[str]) -> str:
    """The one statement that reads these channels' histories."""
    walks = ", ".join(_walk(i) for i in range(len(channels)))
    selects = " UNION ALL ".join(s for i in range(len(channels)) for s in _selects(i))
    return (
        "WITH RECURSIVE target AS (SELECT parent_checkpoint_id FROM checkpoints c"
        f" WHERE {_SAME_THREAD} AND c.checkpoint_id = %(target)s), {walks}"
        f" SELECT * FROM ({selects}) AS found({_ROW})"
    )


def history_params(
    thread_id: str, checkpoint_ns: str, checkpoint_id: str, channels: Sequence[str]
) -> dict[str, Any]:
    """The statement's parameters."""
    named = {f"ch{i}": channel for i, channel in enumerate(channels)}
    return {"thread": thread_id, "ns": checkpoint_ns, "target": checkpoint_id, **named}


def history_from_rows(
    saver: BasePostgresSaver, channels: Sequence[str], rows: Sequence[Mapping[str, Any]]
) -> dict[str, DeltaChannelHistory]:
    """The histories LangGraph's saver builds from the same chain, writes and seed."""
    walked: dict[str, list[Mapping[str, Any]]] = {channel: [] for channel in channels}
    stage2: list[dict[str, Any]] = []
    for row in rows:
        channel = channels[row["ch"]]
        if row["_kind"] == "c":
            walked[channel].append(row)
        else:
            stage2.append({**row, "channel": channel})
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
