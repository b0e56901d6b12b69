"""Routes over the settings layers: effective and stored values side by side, writes by the
layer's admins (locks refuse them), and "use the platform default" clearing a layer."""

from __future__ import annotations

from typing import Annotated, Any, Literal, get_args

from fastapi import APIRouter, HTTPException, Query
from langgraph.store.base import Item

from memory_plugin.scope.namespaces import MAX_ID_BYTES
from memory_plugin.server import schemas
from memory_plugin.server.access import Caller, CallerDep, forbidden
from memory_plugin.server.console import Console, ConsoleDep, written_by
from memory_plugin.settings import MemorySettings, field_bounds, field_layers
from memory_plugin.settings.layers import LAYER_KEY, layer_namespace

router = APIRouter(prefix="/api/settings", tags=["settings"])
LayerName = Literal["platform", "org", "space", "user"]
LAYERS: tuple[LayerName, ...] = get_args(LayerName)
WEB_SEARCH_BLOCKS = (
    "Context memory is unavailable while web search is enabled, to keep user data out of "
    "external search queries."
)
Space = Annotated[
    str | None, Query(max_length=MAX_ID_BYTES, description="the space whose settings apply")
]


def field_json(name: str) -> dict[str, Any]:
    """One setting's description: type, default, bounds, layers."""
    info = MemorySettings.model_fields[name]
    extra = info.json_schema_extra
    low, high = field_bounds(name)
    annotation = info.annotation
    return {
        "name": name,
        "type": getattr(annotation, "__name__", str(annotation)),
        "default": info.default,
        "description": str(extra.get("reason", "")) if isinstance(extra, dict) else "",
        "minimum": low,
        "maximum": high,
        "layers": list(field_layers(name)),
    }


def visible(caller: Caller, layer: LayerName, space: str | None) -> bool:
    """Whether the caller sees a layer's record: their own user layer, layers they administer."""
    return caller.administers(layer, space) and (layer != "org" or caller.org_id is not None)


async def settings_answer(console: Console, caller: Caller, space: str | None) -> dict[str, Any]:
    """The GET answer: fields, effective values, environment, locks, visible layers."""
    ctx = caller.settings_context(space)
    effective = await console.settings.aget(ctx)
    values = effective.values
    layers: dict[str, Any] = {}
    for layer in LAYERS:
        ns = layer_namespace(layer, ctx)
        if ns is None or not visible(caller, layer, space):
            continue
        item = await console.store.aget(ns, LAYER_KEY)
        record = dict(item.value) if isinstance(item, Item) else {}
        layers[layer] = {
            "values": dict(record.get("values", {})),
            "locked": list(record.get("locked", [])),
            "editable": True,
        }
    blocked = values.web_search and not values.profile_with_web_search
    return {
        "fields": [field_json(name) for name in MemorySettings.model_fields],
        "effective": values.model_dump(mode="json"),
        "env": sorted(console.settings.env.values),
        "locked": sorted(effective.locked),
        "layers": layers,
        "profile_switch": {
            "enabled": not blocked,
            "disabled_reason": WEB_SEARCH_BLOCKS if blocked else None,
        },
    }


def writable(caller: Caller, layer: LayerName, space: str | None) -> Any:
    """The context to write `layer` in, once the caller may (403 otherwise)."""
    ctx = caller.settings_context(space)
    if layer == "space" and space is None:
        raise HTTPException(status_code=400, detail="the space layer needs ?space=<space id>")
    if layer == "org" and caller.org_id is None:
        raise forbidden("your token names no organisation, so you administer no org layer")
    if not caller.administers(layer, space):
        raise forbidden(f"you do not administer the {layer} settings layer")
    return ctx


@router.get("", response_model=schemas.SettingsAnswer)
async def read_settings(caller: CallerDep, console: ConsoleDep, space: Space = None) -> Any:
    """Effective and stored values side by side (stored: the layers the caller may see)."""
    return await settings_answer(console, caller, space)


@router.put("/{layer}", response_model=schemas.SettingsAnswer)
async def write_settings(
    layer: LayerName,
    body: schemas.SettingsBody,
    caller: CallerDep,
    console: ConsoleDep,
    space: Space = None,
) -> Any:
    """Set, clear, lock or unlock values of one layer (locks: platform only)."""
    ctx = writable(caller, layer, space)
    with written_by(caller):
        await console.settings.aupdate(
            layer, ctx, set=body.set, clear=body.clear, lock=body.lock, unlock=body.unlock
        )
    return await settings_answer(console, caller, space)


@router.delete("/{layer}", response_model=schemas.SettingsAnswer)
async def clear_settings(
    layer: LayerName, caller: CallerDep, console: ConsoleDep, space: Space = None
) -> Any:
    """Use the platform default: clear every value the layer sets (its locks stay)."""
    ctx = writable(caller, layer, space)
    ns = layer_namespace(layer, ctx)
    assert ns is not None
    item = await console.store.aget(ns, LAYER_KEY)
    stored = list(dict(item.value).get("values", {})) if isinstance(item, Item) else []
    with written_by(caller):
        await console.settings.aupdate(layer, ctx, clear=stored)
    return await settings_answer(console, caller, space)
