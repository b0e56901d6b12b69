"""Merging settings layers into the effective settings of one run."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from memory_plugin.errors import SettingsError
from memory_plugin.settings.schema import LOWER_ONLY, RELATIONS, MemorySettings, field_bounds
from memory_plugin.settings.values import parse_value

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Clamped:
    """A stored value the admin bounds moved."""

    stored: Any
    effective: Any


@dataclass(frozen=True)
class EffectiveSettings:
    """The settings in force for one run, with where each value came from."""

    values: MemorySettings
    sources: dict[str, str]
    clamped: dict[str, Clamped] = field(default_factory=dict)
    ignored: dict[str, list[str]] = field(default_factory=dict)
    locked: frozenset[str] = frozenset()


def _clamp(name: str, value: Any) -> Any:
    low, high = field_bounds(name)
    if low is not None and value < low:
        return type(value)(low)
    if high is not None and value > high:
        return type(value)(high)
    return value


@lru_cache(maxsize=32)
def _dump(defaults: MemorySettings) -> dict[str, Any]:
    return defaults.model_dump()


def resolve(
    defaults: MemorySettings,
    layers: Sequence[tuple[str, Mapping[str, Any]]],
    locked: frozenset[str],
    env: Mapping[str, Any] | None = None,
) -> EffectiveSettings:
    """Apply stored layers in order (platform first), then the environment over all of them.

    A field locked by the platform ignores every layer below it; a field the environment sets
    ignores every stored layer, the platform record included; a LOWER_ONLY field is only
    lowered by the layers below the platform (a higher value is reported as clamped).
    """
    env = env or {}
    merged = dict(_dump(defaults))
    sources = dict.fromkeys(merged, "default")
    ignored: dict[str, list[str]] = {}
    clamped: dict[str, Clamped] = {}
    for layer, values in layers:
        for name, raw in values.items():
            if name not in merged:
                continue
            if name in env or (layer != "platform" and name in locked):
                ignored.setdefault(name, []).append(layer)
                continue
            try:
                value = parse_value(name, raw)
            except SettingsError as exc:
                logger.warning("ignoring stored %s setting: %s", layer, exc)
                continue
            if layer != "platform" and name in LOWER_ONLY and value > merged[name]:
                clamped[name] = Clamped(value, merged[name])
                continue
            merged[name] = value
            sources[name] = layer
    for name, value in env.items():
        merged[name] = value
        sources[name] = "env"
    for name, value in merged.items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            effective = _clamp(name, value)
            if effective != value:
                clamped[name] = Clamped(value, effective)
                merged[name] = effective
    for low_name, high_name in RELATIONS:
        if merged[low_name] > merged[high_name]:
            stored = clamped[low_name].stored if low_name in clamped else merged[low_name]
            merged[low_name] = merged[high_name]
            clamped[low_name] = Clamped(stored, merged[high_name])
    return EffectiveSettings(
        values=MemorySettings.model_validate(merged),
        sources=sources,
        clamped=clamped,
        ignored=ignored,
        locked=locked | frozenset(env),
    )
