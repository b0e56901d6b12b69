"""The workspaces where a user has personal memory, read from the store's namespaces."""

from __future__ import annotations

from langgraph.store.base import BaseStore

from memory_plugin.scope.namespaces import ROOT, decode_id, encode_id

PAGE = 100


async def memory_workspaces(store: BaseStore, user_id: str, org_id: str | None) -> list[str]:
    """Every workspace (of `org_id`'s memory) holding personal memory of `user_id`, sorted."""
    tenant = ("org", encode_id(org_id, what="org_id")) if org_id else ()
    prefix = (ROOT, *tenant, "ws", "*", "personal", encode_id(user_id, what="user_id"))
    found: list[tuple[str, ...]] = []
    while True:
        page = await store.alist_namespaces(
            prefix=prefix, max_depth=len(prefix), limit=PAGE, offset=len(found)
        )
        found += page
        if len(page) < PAGE:
            break
    return sorted({decode_id(ns[len(tenant) + 2]) for ns in found})
