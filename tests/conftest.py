"""One suite over three backends: memory, SQLite and PostgreSQL.

PostgreSQL comes from MEMORY_TEST_POSTGRES_URL (.ci/run starts a real server and sets it) or,
when that is unset, from a throwaway embedded server. Under CI=true a missing database fails
the run instead of skipping. The tests of several app processes on one database run once
more through PgBouncer in transaction mode (kind "pgbouncer", started by .ci/postgres.sh in
front of that server; under CI=true a missing pgbouncer fails the run too).
"""

from __future__ import annotations

import importlib.metadata
import os
import re
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import urlsplit

import psycopg
import pytest
from fastapi.testclient import TestClient

from bench.pgtables import empty_postgres
from memory_plugin import Backend, aconnect, connect
from memory_plugin.server import create_app
from tests.console_seed import SETTINGS, TOKENS, Seeded, seed_api, seed_library
from tests.pgembed import embedded_postgres_url

pytest_plugins = ["tests.processes"]

BACKENDS = ["memory", "sqlite", "postgres"]
REQUIRED_EXTRAS = set(os.environ.get("MEMORY_TEST_EXTRAS", "").split())
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")


@pytest.fixture(scope="session")
def postgres_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A PostgreSQL URL with pgvector: the given one, or an embedded throwaway server."""
    url = os.environ.get("MEMORY_TEST_POSTGRES_URL")
    if url:
        yield worker_database(url)
        return
    try:
        url, stop = embedded_postgres_url(tmp_path_factory.mktemp("pg"))
    except RuntimeError as exc:
        if IN_CI:
            pytest.fail(f"PostgreSQL is required in CI: {exc}")
        pytest.skip(f"no PostgreSQL: {exc}")
    try:
        yield url
    finally:
        stop()


def worker_database(url: str) -> str:
    """`url` itself, or under pytest-xdist a database of this worker's own beside it (created
    with pgvector when missing), so workers sharing one server never see each other's rows."""
    worker = os.environ.get("PYTEST_XDIST_WORKER")
    if not worker:
        return url
    parts = urlsplit(url)
    name = f"{parts.path.lstrip('/') or 'postgres'}_{worker}"
    with psycopg.connect(url, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone()
        if not exists:
            admin.execute(f'CREATE DATABASE "{name}"')
    own = parts._replace(path=f"/{name}").geturl()
    with psycopg.connect(own, autocommit=True) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    return own


PGBOUNCER_SCRIPT = Path(__file__).parent.parent / ".ci" / "postgres.sh"


@pytest.fixture(scope="session")
def pgbouncer_url(request: pytest.FixtureRequest) -> Iterator[str]:
    """The test database through PgBouncer in transaction mode, as many app servers reach
    PostgreSQL past max_connections."""
    if shutil.which("pgbouncer", path=f"{os.environ.get('PATH', '')}{os.pathsep}/usr/sbin") is None:
        if IN_CI:
            pytest.fail("PgBouncer is required in CI: apt-get install pgbouncer")
        pytest.skip("no pgbouncer (apt-get install pgbouncer)")
    postgres_url: str = request.getfixturevalue("postgres_url")
    started = subprocess.run(
        ["bash", str(PGBOUNCER_SCRIPT), "pgbouncer", postgres_url],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    if started.returncode != 0:
        pytest.fail(f"PgBouncer did not start: {started.stderr}")
    url = started.stdout.strip()
    try:
        yield url
    finally:
        subprocess.run(
            ["bash", str(PGBOUNCER_SCRIPT), "pgbouncer-stop", url],
            capture_output=True,
            timeout=60,
            check=False,
        )


def through_pgbouncer(url: str, request: pytest.FixtureRequest) -> str:
    """`url` (a database of the test server) reached through the test PgBouncer."""
    pooler = urlsplit(request.getfixturevalue("pgbouncer_url"))
    return urlsplit(url)._replace(netloc=pooler.netloc).geturl()


def url_for(kind: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh, empty backend URL of one kind ("pgbouncer": PostgreSQL through PgBouncer)."""
    if kind == "memory":
        return "memory://"
    if kind == "sqlite":
        return f"sqlite:///{tmp_path / 'memory.db'}"
    url: str = request.getfixturevalue("postgres_url")
    empty_postgres(url)
    return through_pgbouncer(url, request) if kind == "pgbouncer" else url


@pytest.fixture
def scratch_postgres_url(postgres_url: str) -> Iterator[str]:
    """An empty database of its own on the test server (for schema changes), dropped after;
    named after the test database, so suites run side by side on one server keep apart."""
    name = f"{urlsplit(postgres_url).path.lstrip('/') or 'memory_plugin'}_scratch"
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    yield urlsplit(postgres_url)._replace(path=f"/{name}").geturl()
    with psycopg.connect(postgres_url, autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture(params=BACKENDS)
def backend_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A fresh URL for each of the three backends."""
    return url_for(request.param, request, tmp_path)


@pytest.fixture
def backend(backend_url: str) -> Iterator[Backend]:
    """A store and checkpointer opened with connect, on each backend."""
    with connect(backend_url) as opened:
        yield opened


@pytest.fixture
async def abackend(backend_url: str) -> AsyncIterator[Backend]:
    """A store and checkpointer opened with aconnect, on each backend."""
    async with await aconnect(backend_url) as opened:
        yield opened


@pytest.fixture
def seeded(backend: Backend) -> Iterator[tuple[TestClient, Seeded]]:
    """The console's test client over `backend`, ann's and mallory's memory seeded
    (tests/console_seed.py), and the keys seeding gave."""
    keys = seed_library(backend)
    app = create_app(
        backend.store, tokens=TOKENS, checkpointer=backend.checkpointer, settings=SETTINGS
    )
    client = TestClient(app)
    seed_api(client)
    yield client, keys


def missing_packages(extra: str) -> list[str]:
    """The packages of memory-plugin's optional `extra` that are not installed."""
    marker = re.compile(rf"""extra\s*==\s*["']{re.escape(extra)}["']""")
    wanted = [r for r in importlib.metadata.requires("memory-plugin") or [] if marker.search(r)]
    if not wanted:
        raise ValueError(f"memory-plugin has no extra {extra!r}")
    missing = []
    for requirement in wanted:
        name = re.match(r"[A-Za-z0-9._-]+", requirement)
        try:
            importlib.metadata.version(name.group(0) if name else requirement)
        except importlib.metadata.PackageNotFoundError:
            missing.append(requirement.split(";")[0].strip())
    return missing


def pytest_runtest_setup(item: pytest.Item) -> None:
    """A test marked `extra(name)` skips, with the reason, when the extra is not installed;
    it fails instead when MEMORY_TEST_EXTRAS names the extra (where CI installs it)."""
    for mark in item.iter_markers("extra"):
        for extra in mark.args:
            missing = missing_packages(extra)
            if not missing:
                continue
            reason = (
                f"needs the `{extra}` extra ({', '.join(missing)} not installed): "
                f"pip install -e '.[{extra}]'"
            )
            if extra in REQUIRED_EXTRAS:
                pytest.fail(f"MEMORY_TEST_EXTRAS names {extra!r}, but it {reason}")
            pytest.skip(reason)


def child_pytest(test: str, ci: str, prelude: str) -> subprocess.CompletedProcess[str]:
    """Run one test in a child pytest with CI=`ci`, after `prelude` (Python that hides a
    service from the child), with no test database given."""
    env = {k: v for k, v in os.environ.items() if k != "MEMORY_TEST_POSTGRES_URL"} | {"CI": ci}
    code = (
        f"import sys; {prelude}; import pytest; "
        f"sys.exit(pytest.main(['-p', 'no:cacheprovider', '-q', '-rs', {test!r}]))"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=Path(__file__).parent.parent,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Benchmarks leave the default run: a test marked `bench` runs when `-m` names bench or
    its file is named on the command line (CI runs `pytest -m bench` as a step of its own)."""
    if "bench" in (config.option.markexpr or ""):
        return
    named = {Path(arg.split("::")[0]).resolve() for arg in config.args}
    left_out = [i for i in items if i.get_closest_marker("bench") and i.path not in named]
    if left_out:
        config.hook.pytest_deselected(items=left_out)
        kept = set(left_out)
        items[:] = [item for item in items if item not in kept]


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto`: one pytest-xdist worker more than the cores this run may use, since many
    tests wait on a process or a server they started (3 workers on 2 cores: 10.4 min, against
    11.4 with 2)."""
    return len(os.sched_getaffinity(0)) + 1
