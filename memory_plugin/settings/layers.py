"""Where each settings layer lives in the store, and how a write to one is checked."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

from memory_plugin.errors import LockedSettingError, SettingsError
from memory_plugin.scope.context import MemoryContext
from memory_plugin.scope.namespaces import encode_id, namespace
from memory_plugin.settings.env import env_var
from memory_plugin.settings.schema import LOWER_ONLY, field_layers
from memory_plugin.settings.values import check_value, known_field

Layer = Literal["platform", "org", "space", "user"]
LAYER_KEY = "layer"


def layer_namespace(layer: Layer, ctx: MemoryContext) -> tuple[str, ...] | None:
    """The namespace of a layer's record for this context, None when the context lacks its id."""
    tenant = ("org", encode_id(ctx.org_id)) if ctx.org_id else ()
    if layer == "platform":
        return namespace("settings", "platform")
    if layer == "org":
        return namespace("settings", *tenant) if ctx.org_id else None
    if layer == "space":
        if not ctx.space_id:
            return None
        return namespace("settings", *tenant, "space", encode_id(ctx.space_id))
    if layer == "user":
        if not ctx.user_id:
            return None
        return namespace("settings", *tenant, "user", encode_id(ctx.user_id))
    raise SettingsError(f"unknown settings layer {layer!r}; use one of platform, org, space, user")


def require_layer_namespace(layer: Layer, ctx: MemoryContext) -> tuple[str, ...]:
    """Like layer_namespace, but a missing id is an error naming it."""
    ns = layer_namespace(layer, ctx)
    if ns is None:
        raise SettingsError(f"writing the {layer} settings layer needs {layer}_id in the context")
    return ns


def empty_record() -> dict[str, Any]:
    """A layer that sets nothing."""
    return {"values": {}, "locked": []}


def apply_changes(
    layer: Layer,
    record: Mapping[str, Any],
    locked: Iterable[str],
    *,
    set_values: Mapping[str, Any],
    clear: Iterable[str],
    lock: Iterable[str],
    unlock: Iterable[str],
    env_set: Iterable[str] = (),
    ceilings: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Return the layer record after a write, or raise before anything is changed.

    Values are checked as written (exact type, finite, within bounds); `env_set` names the
    fields the environment sets, which no layer may set or unlock; `ceilings` gives the
    platform's value of each LOWER_ONLY field, which a layer below it may not exceed.
    """
    clear, lock, unlock = list(clear), list(lock), list(unlock)
    for name in (*set_values, *clear, *lock, *unlock):
        known_field(name)
    overlap = set(set_values) & set(clear)
    if overlap:
        raise SettingsError(f"cannot both set and clear {sorted(overlap)}")
    if (lock or unlock) and layer != "platform":
        raise SettingsError("only the platform layer can lock or unlock settings")
    for name in set_values:
        if layer not in field_layers(name):
            allowed = ", ".join(field_layers(name))
            raise SettingsError(f"setting {name!r} can only be set at the {allowed} layer")
    by_env = sorted((set(set_values) | set(unlock)) & set(env_set))
    if by_env:
        names = ", ".join(env_var(name) for name in by_env)
        raise LockedSettingError(
            f"setting(s) {by_env} are set by the deployment's environment ({names})"
        )
    if layer != "platform":
        refused = sorted(set(set_values) & set(locked))
        if refused:
            raise LockedSettingError(f"setting(s) {refused} are locked by the platform")
    parsed = {name: check_value(name, value) for name, value in set_values.items()}
    if layer != "platform":
        for name in set(parsed) & set(LOWER_ONLY) & set(ceilings or {}):
            ceiling = (ceilings or {})[name]
            if parsed[name] > ceiling:
                raise SettingsError(
                    f"setting {name!r} can only be lowered below the platform's {ceiling} at "
                    f"the {layer} layer, not raised to {parsed[name]}"
                )
    values = {k: v for k, v in dict(record.get("values", {})).items() if k not in clear}
    values.update(parsed)
    new_locks = (set(record.get("locked", [])) | set(lock)) - set(unlock)
    return {"values": values, "locked": sorted(new_locks)}
