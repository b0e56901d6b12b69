"""Which consolidation worker has a scope: one lease per scope, so several workers can run
the nightly job over one store at once.

A worker takes a scope's lease before it reads the scope, renews it after the model answers
(before it writes), and drops it when the scope is done, failed or not. A scope whose lease
another worker holds is skipped and named in the run record. A worker that dies holding a
lease blocks its scope only until the lease expires (`lease_seconds`); then any worker takes
the scope and finishes it: the notes the dead worker had not marked are still unmarked, and
a document it saved names the notes it folded, so nothing is folded twice.

The lease must outlast the longest step it covers: from the take to the renewal a worker reads
the scope and waits for the model, whose call gives up after `consolidation_timeout_seconds`;
a worker whose model answers after its lease expired writes nothing, so a lease shorter than
that timeout could leave a slow scope unfolded every night. Such a lease is refused
(`check_lease`, `LeaseTooShortError`) before anything is written: the job checks the
timeout of its base settings before it starts, and a scope whose own settings give a longer
timeout fails with that error, unread. A lease equal to the timeout is accepted: the reads
before the model call are quick, and the safety judge and the writes come after the renewal,
under a fresh lease (the default, 300 s, leaves room over the default timeout, 120 s).
"""

from __future__ import annotations

import hashlib
import os
import secrets
import socket
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from langgraph.store.base import BaseStore

from memory_plugin.backends.leases import DropLease, TakeLease, held_leases
from memory_plugin.errors import MemoryPluginError
from memory_plugin.scope import Scope

LEASE_SECONDS = 300.0
"""How long a worker's claim on a scope lasts unless renewed (above the 120 s default of
`consolidation_timeout_seconds`, the longest step)."""
MAX_LEASE_SECONDS = 86_400.0
LEASE_PREFIX = "consolidation:"
T = TypeVar("T")


class LeaseError(MemoryPluginError, ValueError):
    """A worker's id or lease length is unusable."""


class LeaseTooShortError(LeaseError):
    """A lease shorter than the model timeout it must outlast (`consolidation_timeout_seconds`):
    a model call could run past the lease, and its scope would never be folded. `option`
    names the lease as the caller gave it (`lease_seconds`, `--lease-seconds`); `scoped`: the
    timeout is one scope's own, not the job's."""

    def __init__(
        self,
        lease_seconds: float,
        timeout_seconds: float,
        option: str = "lease_seconds",
        scoped: bool = False,
    ) -> None:
        super().__init__(lease_seconds, timeout_seconds, option, scoped)
        self.lease_seconds = lease_seconds
        self.timeout_seconds = timeout_seconds
        self.option = option
        self.scoped = scoped

    def __str__(self) -> str:
        lease, timeout = f"{self.lease_seconds:g}", f"{self.timeout_seconds:g}"
        if self.scoped:
            return (
                f"{self.option} {lease} is shorter than this scope's "
                f"consolidation_timeout_seconds ({timeout} s): its model call could outlast the "
                "lease, so the scope is not consolidated; give the workers a lease of at least "
                f"{timeout} s or lower consolidation_timeout_seconds for this scope"
            )
        return (
            f"{self.option} {lease} is shorter than consolidation_timeout_seconds ({timeout} s): "
            "a model call could outlast its lease and its scope would never be folded; give a "
            f"lease of at least {timeout} s (default {LEASE_SECONDS:g} s) or lower "
            "consolidation_timeout_seconds"
        )

    def named(self, option: str) -> LeaseTooShortError:
        """The same refusal, naming the lease as `option` (a command-line flag)."""
        return LeaseTooShortError(self.lease_seconds, self.timeout_seconds, option, self.scoped)


class LeaseLostError(MemoryPluginError):
    """Another worker took the scope while this one waited for the model (its lease had
    expired); this worker writes nothing."""


def default_worker_id() -> str:
    """This process's worker id: host, process id and a random tag."""
    return f"{socket.gethostname()}:{os.getpid()}:{secrets.token_hex(3)}"


@dataclass(frozen=True)
class Worker:
    """One consolidation worker: its id (in leases and the run record) and how long its
    lease on a scope lasts (the job refuses one shorter than its model timeout,
    `consolidation_timeout_seconds`: see `check_lease`). `shard`, `shards`: this worker's
    place among workers started together (it starts at its share of the scopes); else it
    starts where its id hashes to. `only`: the namespaces of the only scopes it takes (a dead
    worker's, retried). `clock`: the Unix time its leases are judged at (None: the database's
    clock; tests move it on)."""

    id: str = field(default_factory=default_worker_id)
    lease_seconds: float = LEASE_SECONDS
    shard: int = 0
    shards: int = 1
    only: frozenset[tuple[str, ...]] | None = None
    clock: Callable[[], float] | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or not self.id.strip() or len(self.id) > 200:
            raise LeaseError(f"worker id must be 1 to 200 characters, got {self.id!r}")
        seconds = self.lease_seconds
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise LeaseError(f"lease_seconds must be a number, got {seconds!r}")
        if not 1.0 <= seconds <= MAX_LEASE_SECONDS:
            raise LeaseError(
                f"lease_seconds must be from 1 to {MAX_LEASE_SECONDS:g}, got {seconds!r}"
            )
        if self.shards < 1 or not 0 <= self.shard < self.shards:
            raise LeaseError(f"shard must be from 0 to {self.shards - 1}, got {self.shard!r}")

    def take(self, scope: Scope) -> TakeLease:
        """The request that takes (or renews) this worker's lease on `scope`."""
        at = None if self.clock is None else self.clock()
        return TakeLease(lease_name(scope), self.id, self.lease_seconds, at)

    def drop(self, scope: Scope) -> DropLease:
        """The request that gives `scope`'s lease back."""
        return DropLease(lease_name(scope), self.id)

    def order(self, items: Sequence[tuple[Scope, T]]) -> list[tuple[Scope, T]]:
        """`items` (scopes, each with its context) from this worker's starting point round to
        the one before it, so workers started together do not queue on the same scope; with
        `only`, just those scopes."""
        if self.only is not None:
            items = [item for item in items if item[0].namespace in self.only]
        if not items:
            return []
        if self.shards > 1:
            start = self.shard * len(items) // self.shards
        else:
            start = int(hashlib.sha256(self.id.encode()).hexdigest(), 16) % len(items)
        return [*items[start:], *items[:start]]


def check_lease(
    lease_seconds: float, timeout_seconds: float, *, option: str = "lease_seconds"
) -> None:
    """Refuse a lease shorter than the model timeout it must outlast (LeaseTooShortError,
    naming the lease as `option`); one equal to it or longer passes."""
    if lease_seconds < timeout_seconds:
        raise LeaseTooShortError(lease_seconds, timeout_seconds, option)


def lease_name(scope: Scope) -> str:
    """The lease that guards consolidation of `scope`."""
    return LEASE_PREFIX + ".".join(scope.namespace)


def leased_scopes(
    store: BaseStore, worker_id: str, at: float | None = None
) -> dict[tuple[str, ...], float]:
    """The namespaces of the scopes whose lease `worker_id` holds, each with the seconds its
    lease has left at Unix time `at` (None: by the database's clock); namespace labels hold no
    "." (see namespaces.encode_id)."""
    held = held_leases(store, worker_id, at)
    return {
        tuple(name.removeprefix(LEASE_PREFIX).split(".")): left
        for name, left in held.items()
        if name.startswith(LEASE_PREFIX)
    }
