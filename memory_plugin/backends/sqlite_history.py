"""A checkpoint's DeltaChannel history from SQLite in one statement.

SqliteSaver.get_delta_channel_history runs two: the ancestors, streamed until every channel
has its seed, then the writes on each channel's chain. Here the ancestors come with their
writes (a LEFT JOIN on the same recursive walk, each ancestor's rows together, in walk order),
read until the walk is done; LangGraph's own step_walk_with_row decides where each channel's
chain ends, and its build_delta_channels_writes_history builds the result from the writes on
the chains, so the history is the one SqliteSaver returns.

The fence: langgraph.checkpoint.sqlite._delta (step_walk_with_row, the stage-two row shape,
build_delta_channels_writes_history; langgraph-checkpoint-sqlite 3.1). Checked against
SqliteSaver by tests/test_delta_history.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from langgraph.checkpoint.base import DeltaChannelHistory
from langgraph.checkpoint.sqlite._delta import (
    build_delta_channels_writes_history,
    step_walk_with_row,
)

Row = tuple[Any, ...]


def history_statement(
    thread_id: str, checkpoint_ns: str, checkpoint_id: str, channels: Sequence[str]
) -> tuple[str, tuple[Any, ...]]:
    """The statement walking the ancestors of a checkpoint, each with its writes to these
    channels."""
    marks = ", ".join("?" * len(channels))
    sql = (
        "WITH RECURSIVE ancestors(checkpoint_id, parent_checkpoint_id, type, checkpoint) AS ("
        "SELECT checkpoint_id, parent_checkpoint_id, type, checkpoint FROM checkpoints"
        " WHERE thread_id = ? AND checkpoint_ns = ? AND checkpoint_id = ?"
        " UNION ALL "
        "SELECT c.checkpoint_id, c.parent_checkpoint_id, c.type, c.checkpoint"
        " FROM ancestors a CROSS JOIN checkpoints c ON c.checkpoint_id = a.parent_checkpoint_id"
        " WHERE c.thread_id = ? AND c.checkpoint_ns = ?) "
        "SELECT a.checkpoint_id, a.type, a.checkpoint,"
        " w.checkpoint_id, w.channel, w.task_id, w.idx, w.type, w.value, w.task_path"
        " FROM ancestors a LEFT JOIN writes w ON w.thread_id = ? AND w.checkpoint_ns = ?"
        f" AND w.checkpoint_id = a.checkpoint_id AND w.channel IN ({marks})"
    )
    same = (thread_id, checkpoint_ns)
    return sql, (*same, checkpoint_id, *same, *same, *channels)


class HistoryWalk:
    """The walk over the statement's rows: feed it rows until it says it is done."""

    def __init__(self, checkpoint_id: str, channels: Sequence[str], serde: Any) -> None:
        self.target, self.channels, self.serde = checkpoint_id, list(channels), serde
        self.chain_by_ch: dict[str, list[str]] = {ch: [] for ch in self.channels}
        self.seed_val_by_ch: dict[str, Any] = {}
        self.walk_state: dict[str, Any] = {}
        self.seeded: set[str] = set()
        self.writes: list[Row] = []
        self._current: str | None = None
        self._seen: set[str] = set()
        self._walked = False

    def feed(self, row: Row) -> bool:
        """Take one row; True once the rows of every checkpoint the walk needs are in."""
        cid, type_tag, blob, written_on, *write = row
        if cid != self._current:
            if self._walked or cid in self._seen:
                return True
            self._current = cid
            self._seen.add(cid)
            self._walked = step_walk_with_row(
                cid=cid,
                type_tag=type_tag,
                blob=blob,
                target_id=self.target,
                serde=self.serde,
                chain_by_ch=self.chain_by_ch,
                seed_val_by_ch=self.seed_val_by_ch,
                walk_state=self.walk_state,
                seeded=self.seeded,
                channels=self.channels,
            )
        if written_on is not None:
            self.writes.append((written_on, *write))
        return False

    def history(self) -> dict[str, DeltaChannelHistory]:
        """The channels' histories, as SqliteSaver builds them (from the writes on each
        channel's chain: the target's own, and those past a channel's seed, are left out)."""
        return build_delta_channels_writes_history(
            channels=self.channels,
            chain_by_ch=self.chain_by_ch,
            seed_val_by_ch=self.seed_val_by_ch,
            seeded=self.seeded,
            stage2_rows=self.writes,
            serde=self.serde,
        )


def walk(walker: HistoryWalk, rows: Iterable[Row]) -> HistoryWalk:
    """Feed the rows until the walk is done."""
    for row in rows:
        if walker.feed(row):
            break
    return walker
