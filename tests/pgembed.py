"""Throwaway PostgreSQL + pgvector for tests, run from the pgserver wheel's binaries."""

from __future__ import annotations

import importlib.util
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

DB_NAME = "memory_plugin_test"
SYSTEM_USER = "memplug-pg"  # PostgreSQL refuses to run as root.
_HINT = "install the dev extras (pip install -e '.[dev]') or set MEMORY_TEST_POSTGRES_URL"


def _pginstall() -> Path:
    """Return the pgserver package's bundled PostgreSQL install dir."""
    spec = importlib.util.find_spec("pgserver")
    if spec is None or spec.origin is None:
        raise RuntimeError(f"embedded PostgreSQL unavailable: pgserver is not installed; {_HINT}")
    path = Path(spec.origin).parent / "pginstall"
    if not (path / "bin" / "postgres").is_file():
        raise RuntimeError(f"embedded PostgreSQL unavailable: no binaries under {path}; {_HINT}")
    return path


def _run(cmd: list[str], user: str | None, cwd: Path) -> None:
    """Run cmd (as user if given), raising RuntimeError with its output on failure."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("PG")} | {"LC_ALL": "C"}
    uid = gid = None
    groups: list[int] | None = None
    if user is not None:
        uid, gid, groups = pwd.getpwnam(user).pw_uid, pwd.getpwnam(user).pw_gid, []
    with tempfile.TemporaryFile("w+") as out:  # not a pipe: the postmaster may inherit it
        proc = subprocess.run(
            cmd,
            stdout=out,
            stderr=subprocess.STDOUT,
            cwd=cwd,
            env=env,
            timeout=120,
            user=uid,
            group=gid,
            extra_groups=groups,
            check=False,
        )
        if proc.returncode != 0:
            out.seek(0)
            raise RuntimeError(f"embedded PostgreSQL: {Path(cmd[0]).name} failed: {out.read()}")


def _free_port() -> int:
    """Return a currently free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _traversable(path: Path) -> bool:
    """Return True if other users can reach path (every ancestor is o+x)."""
    return all(p.stat().st_mode & 0o001 for p in (path, *path.parents))


def _prepare(base_dir: Path, root: bool) -> tuple[Path, Path, str | None]:
    """Return (fresh work dir, bin dir, system user); as root copy binaries and add the user."""
    pginstall = _pginstall()
    base_dir.mkdir(parents=True, exist_ok=True)
    if not root:
        return Path(tempfile.mkdtemp(prefix="pg.", dir=base_dir)), pginstall / "bin", None
    try:
        pwd.getpwnam(SYSTEM_USER)
    except KeyError:
        add = ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin"]
        _run([*add, SYSTEM_USER], None, Path("/"))
    # base_dir is often below a root-only dir (pytest's /tmp/pytest-of-root): then use /tmp.
    parent = base_dir if _traversable(base_dir) else Path("/tmp")
    work = Path(tempfile.mkdtemp(prefix="memplug-pg.", dir=parent))
    work.chmod(0o755)
    shutil.copytree(pginstall, work / "pgserver" / "pginstall", symlinks=True)
    libs = pginstall.parent.parent / "pgserver.libs"  # RPATH: $ORIGIN/../../../pgserver.libs
    if libs.is_dir():
        shutil.copytree(libs, work / "pgserver.libs", symlinks=True)
    return work, work / "pgserver" / "pginstall" / "bin", SYSTEM_USER


def _start(work: Path, bin_dir: Path, user: str | None) -> int:
    """Init a cluster in work, start it on a free 127.0.0.1 port and return the port."""
    data, sock, log = work / "pgdata", work / "pgsock", work / "postgres.log"
    for d in (data, sock):
        d.mkdir(mode=0o700)
    log.touch()
    if user is not None:
        for p in (data, sock, log):
            shutil.chown(p, user, pwd.getpwnam(user).pw_gid)
    initdb = [str(bin_dir / "initdb"), "-D", str(data), "-U", "postgres", "-A", "trust"]
    _run([*initdb, "-E", "UTF8", "--locale=C", "--no-sync"], user, work)
    for attempt in range(5):
        port = _free_port()
        opts = f"-c listen_addresses=127.0.0.1 -p {port} -k {sock} -c fsync=off"
        start = [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-w", "-o", opts]
        try:
            _run([*start, "start"], user, work)
            return port
        except RuntimeError as exc:
            text = log.read_text(errors="replace")
            if "could not bind" not in text or attempt == 4:
                raise RuntimeError(f"{exc}\npostgres log:\n{text}") from None
    raise AssertionError("unreachable")


def embedded_postgres_url(base_dir: Path) -> tuple[str, Callable[[], None]]:
    """Start a throwaway PostgreSQL with pgvector; return (psycopg URL, stop function)."""
    work, bin_dir, user = _prepare(base_dir, os.geteuid() == 0)
    data = work / "pgdata"
    stopped = False

    def stop() -> None:
        """Stop the server if running and delete its files (idempotent)."""
        nonlocal stopped
        if stopped:
            return
        stopped = True
        try:
            if (data / "postmaster.pid").exists():
                cmd = [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "fast", "-w", "stop"]
                _run(cmd, user, work)
        finally:
            shutil.rmtree(work, ignore_errors=True)

    try:
        port = _start(work, bin_dir, user)
        psql = [str(bin_dir / "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1", "-h", "127.0.0.1"]
        psql += ["-p", str(port), "-U", "postgres"]
        _run([*psql, "-d", "postgres", "-c", f"CREATE DATABASE {DB_NAME}"], None, work)
        _run([*psql, "-d", DB_NAME, "-c", "CREATE EXTENSION IF NOT EXISTS vector"], None, work)
    except BaseException:
        stop()
        raise
    return f"postgresql://postgres@127.0.0.1:{port}/{DB_NAME}", stop
