"""The workspaces where a user holds memory: those of their personal memory, read from the
store's namespaces, and those of the threads they own, read from the graph's owner records."""

from __future__ import annotations

from langgraph.store.base import BaseStore

from memory_plugin.context_management.owners import workspaces_plan
from memory_plugin.plans import arun
from memory_plugin.scope.identity import UserKey
from memory_plugin.scope.namespaces import ROOT, decode_id, encode_id

PAGE = 100


async def memory_workspaces(store: BaseStore, user_id: str, org_id: str | None) -> list[str]:
    """Every workspace (of `org_id`'s memory) holding personal memory of `user_id`, or a
    thread the graph recorded as theirs, sorted."""
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
    personal = {decode_id(ns[len(tenant) + 2]) for ns in found}
    chatted = await arun(store, workspaces_plan(UserKey(org_id, user_id)))
    return sorted(personal.union(chatted))
