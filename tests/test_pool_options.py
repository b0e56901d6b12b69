"""PostgreSQL pool options in the URL (`?pool_max=N&pool_min=N&pool_timeout=S`): validated
with clear errors, applied to the one pool the store and the checkpointer share."""

from __future__ import annotations

import pytest

from memory_plugin import aconnect, connect
from memory_plugin.backends import parse_url
from memory_plugin.backends.url import PoolConfig, split_pool_options
from memory_plugin.errors import BackendError

BASE = "postgresql://ann:s3cret-pw@db.example:5432/app"


def test_pool_options_are_taken_out_of_the_url() -> None:
    target, config = split_pool_options(
        f"{BASE}?sslmode=disable&pool_max=4&pool_timeout=2.5&pool_min=0"
    )
    assert target == f"{BASE}?sslmode=disable"
    assert config == PoolConfig(max_size=4, min_size=0, timeout=2.5)
    assert split_pool_options(BASE) == (BASE, PoolConfig())
    options = "options=-c%20plan_cache_mode%3Dforce_custom_plan"
    assert split_pool_options(f"{BASE}?pool_max=2&{options}")[0] == f"{BASE}?{options}"


def test_other_url_options_reach_postgresql_as_written(postgres_url: str) -> None:
    options = "options=-c%20plan_cache_mode%3Dforce_custom_plan%20-c%20work_mem%3D8MB"
    url = f"{postgres_url}?pool_max=2&{options}"
    with connect(url) as backend, backend.store.conn.connection() as conn:  # type: ignore[attr-defined]
        assert conn.execute("SHOW plan_cache_mode").fetchone() == {
            "plan_cache_mode": "force_custom_plan"
        }
        assert conn.execute("SHOW work_mem").fetchone() == {"work_mem": "8MB"}


@pytest.mark.parametrize(
    ("query", "says"),
    [
        ("pool_max=0", "pool_max='0' in PostgreSQL URL"),
        ("pool_max=ten", "must be an integer from 1 to 1000"),
        ("pool_timeout=-1", "pool_timeout='-1' in PostgreSQL URL"),
        ("pool_timeout=soon", "must be a number of seconds from 0.1 to 600"),
        ("pool_size=3", "unknown pool option 'pool_size'"),
        ("pool_min=5&pool_max=2", "pool_min=5 exceeds pool_max=2"),
    ],
)
def test_bad_pool_options_are_refused_clearly(query: str, says: str) -> None:
    with pytest.raises(BackendError) as raised:
        parse_url(f"{BASE}?{query}")
    assert says in str(raised.value)
    assert "s3cret-pw" not in str(raised.value)


def test_a_bad_pool_option_opens_nothing(postgres_url: str) -> None:
    with pytest.raises(BackendError, match="pool_max"):
        connect(f"{postgres_url}?pool_max=-3")


@pytest.mark.slow
def test_connect_applies_the_pool_options_to_the_shared_pool(postgres_url: str) -> None:
    with connect(f"{postgres_url}?pool_max=2&pool_timeout=1.5") as backend:
        pool = backend.store.conn  # type: ignore[attr-defined]
        assert backend.checkpointer.conn is pool  # type: ignore[attr-defined]
        assert (pool.max_size, pool.timeout) == (2, 1.5)
        busy = r"no free connection .* within 1\.5 s"
        with pool.connection(), pool.connection(), pytest.raises(Exception, match=busy):
            backend.store.get(("pool", "test"), "k")
        assert backend.store.get(("pool", "test"), "k") is None


async def test_aconnect_applies_the_pool_options(postgres_url: str) -> None:
    async with aconnect(f"{postgres_url}?pool_max=3&pool_min=0&pool_timeout=2") as backend:
        pool = backend.store.conn  # type: ignore[attr-defined]
        assert backend.checkpointer.conn is pool  # type: ignore[attr-defined]
        assert (pool.max_size, pool.min_size, pool.timeout) == (3, 0, 2.0)
        assert await backend.store.aget(("pool", "test"), "k") is None
