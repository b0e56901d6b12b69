"""all_items_plan reads every item under a namespace prefix page by page: every backend, sync
and async, each item once, the prefix's children included."""

from __future__ import annotations

from langgraph.store.base import Item, PutOp

from memory_plugin import Backend
from memory_plugin.plans import Plan, all_items_plan, arun, run

PAGE = 3
BASE = ("paging_test", "base")
CHILD = (*BASE, "child")
OTHER = ("paging_test", "other")


def seed_plan() -> Plan[set[tuple[tuple[str, ...], str]]]:
    """Items in BASE and its child (more than two pages together) and in a sibling, one write
    at a time; the (namespace, key) pairs under BASE."""
    written = [(BASE, f"k{n}", n) for n in range(2 * PAGE + 1)]
    written += [(CHILD, f"c{n}", n) for n in range(PAGE)] + [(OTHER, "o", 0)]
    for namespace, key, n in written:
        yield [PutOp(namespace, key, {"n": n, "odd": n % 2 == 1})]
    return {(namespace, key) for namespace, key, _ in written if namespace != OTHER}


def pairs(items: list[Item]) -> list[tuple[tuple[str, ...], str]]:
    return [(tuple(item.namespace), item.key) for item in items]


def test_every_item_once_sync(backend: Backend) -> None:
    expected = run(backend.store, seed_plan())
    found = pairs(run(backend.store, all_items_plan(BASE, page=PAGE)))
    assert sorted(found) == sorted(expected)
    odd = pairs(run(backend.store, all_items_plan(BASE, page=PAGE, filter={"odd": True})))
    assert sorted(odd) == sorted(p for p in expected if int(p[1][1:]) % 2 == 1)
    assert run(backend.store, all_items_plan(("paging_test", "empty"), page=PAGE)) == []


async def test_every_item_once_async(abackend: Backend) -> None:
    expected = await arun(abackend.store, seed_plan())
    found = pairs(await arun(abackend.store, all_items_plan(BASE, page=PAGE)))
    assert sorted(found) == sorted(expected)
    exact = pairs(await arun(abackend.store, all_items_plan(CHILD, page=PAGE)))
    assert sorted(exact) == sorted(p for p in expected if p[0] == CHILD)
    assert await arun(abackend.store, all_items_plan(("paging_test", "empty"), page=PAGE)) == []
