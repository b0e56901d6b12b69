"""CI runs the sharded nightly-job benchmark once on tiny sizes, so it keeps working."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.benches import run_bench

pytestmark = [pytest.mark.bench, pytest.mark.slow]


@pytest.mark.parametrize("kind", ["sqlite", "postgres", "pgbouncer"])
def test_consolidation_shards_runs_on_tiny_sizes(
    kind: str, request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    from tests.conftest import url_for

    url = url_for(kind, request, tmp_path)
    args = ["--url", url, "--scopes", "12", "--notes", "2", "--workers", "1,2"]
    done = run_bench("consolidation_shards.py", args)
    assert done.returncode == 0, done.stderr
    rows = [line.split("|")[1:-1] for line in done.stdout.splitlines() if re.match(r"\| \d", line)]
    assert [(r[0].strip(), r[1].strip(), r[-1].strip()) for r in rows] == [
        ("1", "12", "24"),
        ("2", "12", "24"),
    ]
    assert rows[0][5].strip() == "1.00x"
    assert all(float(r[4]) > 0 for r in rows)
