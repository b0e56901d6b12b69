"""aiosqlite connections that were never closed do not hold the process at exit.

Each aiosqlite connection runs its queries in a thread of its own that is not a daemon, and
the interpreter waits for such threads at exit: a backend from `aconnect` that is never closed
held its process forever. At exit, after background memory work is drained
(memory_plugin.background), each connection still open is stopped: its queued queries run, it
closes, and its thread ends.
"""

from __future__ import annotations

import threading
import weakref

import aiosqlite

import memory_plugin.background  # noqa: F401  (its exit hook must be registered before ours)

_open: weakref.WeakSet[aiosqlite.Connection] = weakref.WeakSet()


def stop_at_exit(conn: aiosqlite.Connection) -> aiosqlite.Connection:
    """Have `conn`'s thread stopped at exit if it is still running then; returns `conn`."""
    _open.add(conn)
    return conn


def _stop_all() -> None:
    # From a thread with no event loop: stop() resolves a future on the caller's loop, which
    # at exit may be closed, and the connection's thread would die on that with a traceback.
    stopper = threading.Thread(target=lambda: [conn.stop() for conn in list(_open)])
    stopper.start()
    stopper.join()


threading._register_atexit(_stop_all)  # type: ignore[attr-defined]
