"""A throwaway PostgreSQL + pgvector that a test may restart (pg_ctl restart), on a port from
54400 up, run from the pgserver wheel's binaries like tests/pgembed.py."""

from __future__ import annotations

import os
import shutil
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from tests.pgembed import DB_NAME, _prepare, _run

FIRST_PORT = 54400


@dataclass(frozen=True)
class Server:
    """A running throwaway server: its URL and the command line that restarts it."""

    url: str
    restart_command: list[str]
    user: str | None
    work: Path

    def restart(self) -> None:
        """Restart the server (fast shutdown: open connections are cut), waiting for it."""
        _run(self.restart_command, self.user, self.work)


def _free(port: int) -> bool:
    with socket.socket() as sock:
        try:
            sock.bind(("127.0.0.1", port))
        except OSError:
            return False
        return True


@contextmanager
def restartable_postgres(base_dir: Path) -> Iterator[Server]:
    """Start a server on the first free port from 54400; stop it and delete it afterwards."""
    work, bin_dir, user = _prepare(base_dir, os.geteuid() == 0)
    data, sock, log = work / "pgdata", work / "pgsock", work / "postgres.log"
    ctl = [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w"]
    try:
        for path in (data, sock):
            path.mkdir(mode=0o700)
        log.touch()
        if user is not None:
            for path in (data, sock, log):
                shutil.chown(path, user)
        initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"]
        _run([*initdb, "-E", "UTF8", "--locale=C", "--no-sync"], user, work)
        port = next(p for p in range(FIRST_PORT, FIRST_PORT + 50) if _free(p))
        opts = f"-c listen_addresses=127.0.0.1 -p {port} -k {sock} -c fsync=off"
        _run([*ctl, "-o", opts, "start"], user, work)
        psql = [str(bin_dir / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"]
        psql += ["-p", str(port), "-U", "postgres"]
        _run([*psql, "-d", "postgres", "-c", f"CREATE DATABASE {DB_NAME}"], None, work)
        _run([*psql, "-d", DB_NAME, "-c", "CREATE EXTENSION IF NOT EXISTS vector"], None, work)
        url = f"postgresql://postgres@127.0.0.1:{port}/{DB_NAME}"
        yield Server(url, [*ctl, "-m", "fast", "-o", opts, "restart"], user, work)
    finally:
        try:
            if (data / "postmaster.pid").exists():
                _run([*ctl, "-m", "immediate", "stop"], user, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)
