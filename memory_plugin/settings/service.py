"""Layered settings kept in the store: read every turn, so a change needs no restart."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from memory_plugin.context import MemoryContext
from memory_plugin.plans import Plan, arun, run
from memory_plugin.settings.env import read_env
from memory_plugin.settings.layers import (
    LAYER_KEY,
    Layer,
    apply_changes,
    empty_record,
    layer_namespace,
    require_layer_namespace,
)
from memory_plugin.settings.resolve import EffectiveSettings, resolve
from memory_plugin.settings.schema import MemorySettings

_LAYERS: tuple[Layer, ...] = ("platform", "org", "space", "user")


def _record(item: Any) -> dict[str, Any]:
    return dict(item.value) if isinstance(item, Item) else empty_record()


class SettingsCache:
    """LayeredSettings per store, for components whose store is only known at run time."""

    def __init__(self, defaults: MemorySettings | None = None) -> None:
        self.defaults = defaults
        self._by_store: dict[int, LayeredSettings] = {}

    def for_store(self, store: BaseStore) -> LayeredSettings:
        """The layered settings over this store (built once per store)."""
        layered = self._by_store.get(id(store))
        if layered is None or layered.store is not store:
            layered = self._by_store[id(store)] = LayeredSettings(store, defaults=self.defaults)
        return layered


class LayeredSettings:
    """Platform defaults -> organization -> space -> user, stored in a LangGraph store.

    `defaults` are the platform defaults in code; `MEMORY_<SETTING>` environment variables
    (read once, here) and the stored platform record override them. The last resolution is
    reused while the stored layer records are unchanged.
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        defaults: MemorySettings | None = None,
        environ: Mapping[str, str] | None = None,
    ) -> None:
        self.store = store
        self.defaults = defaults or MemorySettings()
        self.env_values, self.env_locked = read_env(os.environ if environ is None else environ)
        self._memo: tuple[dict[Layer, dict[str, Any]], EffectiveSettings] | None = None

    def effective_plan(self, ctx: MemoryContext) -> Plan[EffectiveSettings]:
        """The plan behind get and aget, for composing into other plans."""
        present = [(layer, layer_namespace(layer, ctx)) for layer in _LAYERS]
        wanted = [(layer, ns) for layer, ns in present if ns is not None]
        items = yield [GetOp(ns, LAYER_KEY) for _, ns in wanted]
        records = {layer: _record(item) for (layer, _), item in zip(wanted, items, strict=True)}
        memo = self._memo
        if memo is not None and memo[0] == records:
            return memo[1]
        platform = records.get("platform", empty_record())
        locked = self.env_locked | frozenset(platform["locked"])
        ordered: list[tuple[str, Mapping[str, Any]]] = [("env", self.env_values)]
        ordered += [(layer, records[layer]["values"]) for layer, _ in wanted]
        effective = resolve(self.defaults, ordered, locked)
        self._memo = (records, effective)
        return effective

    def update_plan(
        self,
        layer: Layer,
        ctx: MemoryContext,
        set_values: Mapping[str, Any],
        clear: Iterable[str],
        lock: Iterable[str],
        unlock: Iterable[str],
    ) -> Plan[dict[str, Any]]:
        """The plan behind update and aupdate, for composing into other plans."""
        ns = require_layer_namespace(layer, ctx)
        platform_ns = layer_namespace("platform", ctx)
        assert platform_ns is not None
        current, platform = yield [GetOp(ns, LAYER_KEY), GetOp(platform_ns, LAYER_KEY)]
        locked = self.env_locked | frozenset(_record(platform)["locked"])
        record = apply_changes(
            layer,
            _record(current),
            locked,
            set_values=set_values,
            clear=clear,
            lock=lock,
            unlock=unlock,
        )
        yield [PutOp(ns, LAYER_KEY, record, index=False)]
        return record

    def get(self, ctx: MemoryContext) -> EffectiveSettings:
        """The effective settings for a run's context."""
        return run(self.store, self.effective_plan(ctx))

    async def aget(self, ctx: MemoryContext) -> EffectiveSettings:
        """Async twin of get."""
        return await arun(self.store, self.effective_plan(ctx))

    def update(
        self,
        layer: Layer,
        ctx: MemoryContext,
        *,
        set: Mapping[str, Any] | None = None,
        clear: Iterable[str] = (),
        lock: Iterable[str] = (),
        unlock: Iterable[str] = (),
    ) -> dict[str, Any]:
        """Write one layer: set fields, clear fields back to the layer above, (un)lock fields.

        Everything is checked before anything is written; the new layer record is returned.
        """
        plan = self.update_plan(layer, ctx, set or {}, clear, lock, unlock)
        return run(self.store, plan)

    async def aupdate(
        self,
        layer: Layer,
        ctx: MemoryContext,
        *,
        set: Mapping[str, Any] | None = None,
        clear: Iterable[str] = (),
        lock: Iterable[str] = (),
        unlock: Iterable[str] = (),
    ) -> dict[str, Any]:
        """Async twin of update."""
        plan = self.update_plan(layer, ctx, set or {}, clear, lock, unlock)
        return await arun(self.store, plan)
