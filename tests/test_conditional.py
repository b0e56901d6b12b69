"""Conditional writes: no writer silently loses another's update, on every backend."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

from memory_plugin import Backend
from memory_plugin.backends.conditional import aput_if_version, put_if_version

NS = ("memory_plugin", "cas")


def test_insert_then_update_by_version(backend: Backend) -> None:
    first = put_if_version(backend.store, NS, "doc", {"text": "v1"}, None)
    assert first == {"text": "v1", "version": 1}
    assert put_if_version(backend.store, NS, "doc", {"text": "again"}, None) is None
    assert put_if_version(backend.store, NS, "doc", {"text": "stale"}, 7) is None
    second = put_if_version(backend.store, NS, "doc", {"text": "v2"}, 1)
    assert second is not None and second["version"] == 2
    item = backend.store.get(NS, "doc")
    assert item is not None and item.value == {"text": "v2", "version": 2}


def test_concurrent_increments_all_land(backend: Backend) -> None:
    put_if_version(backend.store, NS, "counter", {"n": 0}, None)

    def increment(_: int) -> int:
        attempts = 0
        while True:
            attempts += 1
            item = backend.store.get(NS, "counter")
            assert item is not None
            new = {"n": item.value["n"] + 1}
            if put_if_version(backend.store, NS, "counter", new, item.value["version"]):
                return attempts

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(increment, range(40)))
    item = backend.store.get(NS, "counter")
    assert item is not None and item.value["n"] == 40 and item.value["version"] == 41


async def test_async_concurrent_increments_all_land(abackend: Backend) -> None:
    await aput_if_version(abackend.store, NS, "counter", {"n": 0}, None)

    async def increment() -> None:
        while True:
            item = await abackend.store.aget(NS, "counter")
            assert item is not None
            new = {"n": item.value["n"] + 1}
            if await aput_if_version(abackend.store, NS, "counter", new, item.value["version"]):
                return

    await asyncio.gather(*(increment() for _ in range(25)))
    item = await abackend.store.aget(NS, "counter")
    assert item is not None and item.value["n"] == 25
