"""SQLite nearest-vector search, with a per-process cache of large scopes' vectors.

sqlite-vec scans a scope's rows of `store_vectors` one by one; at 10,000 vectors, reading
them costs more than comparing them. A scope of at least `CACHED_MIN` vectors is therefore
kept in memory as a matrix (the `SCOPES` most recently searched per store, `BUDGET` bytes
at most) and validated on every search by a change counter that triggers on
`store_vectors` keep in the same transaction as each write, so a write or delete from any
process is seen at once. A scope
is loaded when a search finds it unchanged since the previous one: a scope written between
every two searches keeps the full scan rather than paying for a load each time. The
matrix only shortlists: every vector within `MARGIN` of the limit-th distance is ranked
again by sqlite-vec in SQL, so the results, their scores and their order are exactly those
of a full scan. Without numpy, or for a matrix it cannot hold, the full scan answers.
"""

from __future__ import annotations

import math
import weakref
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from memory_plugin.backends.langgraph_tables import (
    SQLITE_COSINE,
    SQLITE_NEAREST,
    SQLITE_UNIT,
    SQLITE_VECTOR_COUNT,
    SQLITE_VECTOR_ROWS,
    SQLITE_VECTOR_TRIGGERS,
    SQLITE_WITHIN,
)
from memory_plugin.backends.steps import Steps

try:
    import numpy as np
except ImportError:  # pragma: no cover - numpy is optional (the `local` extra has it)
    np = None  # type: ignore[assignment, unused-ignore]

CACHED_MIN = 2_000
SCOPES = 8
SEEN = 256
BUDGET = 256 * 2**20
"""The most bytes of vectors one store keeps cached, the least recently searched dropped first."""
MARGIN = 1e-3
"""How far past the limit-th distance a vector is still re-ranked: squared L2 for unit
vectors (no square root to magnify float32 rounding near 0), else cosine distance."""

SCHEMA = [
    """CREATE TABLE IF NOT EXISTS memory_vector_changes (
        prefix TEXT PRIMARY KEY, n INTEGER NOT NULL)""",
    *SQLITE_VECTOR_TRIGGERS,
]

_CHANGES = "SELECT n FROM memory_vector_changes WHERE prefix = ?"


@dataclass(frozen=True)
class _Matrix:
    version: int
    keys: list[str]
    vectors: Any
    norms: Any


class _Scopes:
    """One store's cached matrices, and the versions of scopes seen once, least recently
    searched first."""

    def __init__(self) -> None:
        self.matrices: OrderedDict[str, _Matrix] = OrderedDict()
        self.seen: OrderedDict[str, int] = OrderedDict()


def _keep(entries: OrderedDict[str, Any], prefix: str, value: Any, most: int) -> None:
    entries[prefix] = value
    entries.move_to_end(prefix)
    while len(entries) > most:
        entries.popitem(last=False)


_caches: weakref.WeakKeyDictionary[Any, _Scopes] = weakref.WeakKeyDictionary()
_ready: weakref.WeakSet[Any] = weakref.WeakSet()


def nearest_sql(unit: bool, shortlist: bool = False) -> str:
    """The nearest-vectors query, by L2 distance for unit vectors (ordered as cosine), else
    by cosine distance; with `shortlist`, among the keys given as a JSON array."""
    within = SQLITE_WITHIN if shortlist else ""
    return SQLITE_NEAREST.format(within=within, **(SQLITE_UNIT if unit else SQLITE_COSINE))


def _matrix(version: int, rows: list[Any]) -> _Matrix | None:
    if not rows or any(not isinstance(blob, bytes) for _, blob in rows):
        return None
    if len({len(blob) for _, blob in rows}) != 1:
        return None
    vectors = np.frombuffer(b"".join(blob for _, blob in rows), dtype=np.float32)
    vectors = vectors.reshape(len(rows), -1)
    norms = np.linalg.norm(vectors, axis=1)
    return _Matrix(version, [key for key, _ in rows], vectors, norms)


def _shortlist(matrix: _Matrix, query: Sequence[float], limit: int, unit: bool) -> list[str] | None:
    """The keys within MARGIN of the limit-th nearest by the matrix's distances, or None
    when the matrix cannot answer (another size, a zero vector). einsum, not BLAS: a
    threaded BLAS on a busy machine is slower than the scan it replaces."""
    q = np.asarray(query, dtype=np.float32)
    if q.shape[0] != matrix.vectors.shape[1]:
        return None
    dots = np.einsum("ij,j->i", matrix.vectors, q)
    square = float(np.einsum("i,i->", q, q))
    if unit:
        distances = matrix.norms * matrix.norms - 2.0 * dots + square
    else:
        distances = 1.0 - dots / (matrix.norms * math.sqrt(square))
    if not np.all(np.isfinite(distances)):
        return None
    bound = np.partition(distances, limit - 1)[limit - 1] + MARGIN
    return [matrix.keys[i] for i in np.flatnonzero(distances <= bound)]


def nearest_steps(
    store: Any, prefix: str, query: Sequence[float], blob: bytes, limit: int, unit: bool
) -> Steps[list[Any]]:
    """The rows (key, score, value) of the `limit` nearest vectors of the scope, best first,
    as SQL statements to run in turn (each answered with its rows)."""
    full = (nearest_sql(unit), (blob, prefix, limit, prefix))
    if np is None:
        return (yield full)
    scopes = _caches.setdefault(store, _Scopes())
    changes = yield (_CHANGES, (prefix,))
    version = int(changes[0][0]) if changes else 0
    matrix = scopes.matrices.get(prefix)
    if matrix is None or matrix.version != version:
        scopes.matrices.pop(prefix, None)
        if scopes.seen.pop(prefix, None) != version:
            _keep(scopes.seen, prefix, version, SEEN)
            return (yield full)
        ((count,),) = yield (SQLITE_VECTOR_COUNT, (prefix,))
        if count < CACHED_MIN or count <= limit:
            return (yield full)
        matrix = _matrix(version, (yield (SQLITE_VECTOR_ROWS, (prefix,))))
        if matrix is None or matrix.vectors.nbytes > BUDGET:
            return (yield full)
    _keep(scopes.matrices, prefix, matrix, SCOPES)
    while sum(kept.vectors.nbytes for kept in scopes.matrices.values()) > BUDGET:
        scopes.matrices.popitem(last=False)
    keys = _shortlist(matrix, query, limit, unit) if limit < len(matrix.keys) else None
    if keys is None:
        return (yield full)
    listed = orjson.dumps(keys).decode()
    return (yield (nearest_sql(unit, shortlist=True), (blob, prefix, listed, limit, prefix)))


def is_set_up(store: Any) -> bool:
    """Whether this store's change counter was set up in this process."""
    return store in _ready


def set_up(store: Any) -> None:
    """Remember that this store's change counter exists."""
    _ready.add(store)
