"""Layered settings kept in the store: read every turn, so a change needs no restart."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterable, Mapping
from typing import Any

from langgraph.store.base import BaseStore, GetOp, Item, PutOp

from memory_plugin.errors import SettingsError
from memory_plugin.plans import Plan, arun, run
from memory_plugin.scope.context import MemoryContext
from memory_plugin.settings.env import EnvSettings, read_env, report_unknown
from memory_plugin.settings.layers import (
    LAYER_KEY,
    Layer,
    apply_changes,
    empty_record,
    layer_namespace,
    require_layer_namespace,
)
from memory_plugin.settings.resolve import EffectiveSettings, resolve
from memory_plugin.settings.schema import LOWER_ONLY, MemorySettings

logger = logging.getLogger(__name__)
_LAYERS: tuple[Layer, ...] = ("platform", "org", "space", "user")
MAX_REMEMBERED = 1_024
Records = dict[Layer, dict[str, Any]]


def _record(item: Any) -> dict[str, Any]:
    return dict(item.value) if isinstance(item, Item) else empty_record()


class SettingsCache:
    """The one settings owner of a graph: the code defaults, the environment (read and checked
    once, when this is built) and a LayeredSettings per store, built when the store is known.
    `base` is the code defaults with the environment applied, before any stored layer."""

    def __init__(
        self, defaults: MemorySettings | None = None, *, environ: Mapping[str, str] | None = None
    ) -> None:
        if defaults is not None and not isinstance(defaults, MemorySettings):
            raise SettingsError(f"settings must be a MemorySettings, not {type(defaults).__name__}")
        environ = os.environ if environ is None else environ
        self.defaults = defaults or MemorySettings()
        self.env = read_env(environ)
        report_unknown(environ)
        self.base = resolve(self.defaults, [], self.env.locked, self.env.values).values
        self._by_store: dict[int, LayeredSettings] = {}

    def for_store(self, store: BaseStore) -> LayeredSettings:
        """The layered settings over this store (built once per store)."""
        layered = self._by_store.get(id(store))
        if layered is None or layered.store is not store:
            layered = LayeredSettings(store, defaults=self.defaults, env=self.env)
            self._by_store[id(store)] = layered
        return layered


class LayeredSettings:
    """Platform defaults -> organization -> space -> user, stored in a LangGraph store.

    `defaults` are the platform defaults in code; the stored platform record overrides them,
    and `MEMORY_<SETTING>` environment variables (read once, here, or passed as `env`) override
    and lock everything. The last resolution per context is reused while its stored records
    are unchanged, and stands in, logged, when the store cannot be read.
    """

    def __init__(
        self,
        store: BaseStore,
        *,
        defaults: MemorySettings | None = None,
        environ: Mapping[str, str] | None = None,
        env: EnvSettings | None = None,
    ) -> None:
        self.store = store
        self.defaults = defaults or MemorySettings()
        if env is None:
            environ = os.environ if environ is None else environ
            env = read_env(environ)
            report_unknown(environ)
        self.env = env
        self._last: dict[tuple[Any, ...], tuple[Records, EffectiveSettings]] = {}
        self._lock = threading.Lock()

    def _keep(self, key: tuple[Any, ...], records: Records, effective: EffectiveSettings) -> None:
        with self._lock:
            self._last.pop(key, None)
            self._last[key] = (records, effective)
            while len(self._last) > MAX_REMEMBERED:
                del self._last[next(iter(self._last))]

    def _fallback(self, key: tuple[Any, ...], exc: Exception) -> EffectiveSettings:
        last = self._last.get(key)
        if last is not None:
            logger.warning("settings unreadable (%r); using the last good values", exc)
            return last[1]
        logger.warning("settings unreadable (%r); using the defaults", exc)
        return resolve(self.defaults, [], self.env.locked, self.env.values)

    def effective_plan(self, ctx: MemoryContext) -> Plan[EffectiveSettings]:
        """The plan behind get and aget, for composing into other plans. A store that cannot
        be read gives the last good values for this context, else the defaults (logged)."""
        present = [(layer, layer_namespace(layer, ctx)) for layer in _LAYERS]
        wanted = [(layer, ns) for layer, ns in present if ns is not None]
        key = tuple(ns for _, ns in wanted)
        try:
            items = yield [GetOp(ns, LAYER_KEY) for _, ns in wanted]
        except Exception as exc:
            return self._fallback(key, exc)
        records = {layer: _record(item) for (layer, _), item in zip(wanted, items, strict=True)}
        last = self._last.get(key)
        if last is not None and last[0] == records:
            return last[1]
        platform = records.get("platform", empty_record())
        locked = self.env.locked | frozenset(platform["locked"])
        ordered = [(layer, records[layer]["values"]) for layer, _ in wanted]
        effective = resolve(self.defaults, ordered, locked, self.env.values)
        self._keep(key, records, effective)
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
        locked = self.env.locked | frozenset(_record(platform)["locked"])
        platform_values = [("platform", _record(platform)["values"])]
        above = resolve(self.defaults, platform_values, locked, self.env.values)
        record = apply_changes(
            layer,
            _record(current),
            locked,
            set_values=set_values,
            clear=clear,
            lock=lock,
            unlock=unlock,
            env_set=self.env.values,
            ceilings={name: getattr(above.values, name) for name in LOWER_ONLY},
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
