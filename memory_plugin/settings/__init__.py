"""Layered, typed settings: platform defaults -> organization -> space -> user."""

from memory_plugin.settings.layers import Layer
from memory_plugin.settings.resolve import Clamped, EffectiveSettings
from memory_plugin.settings.schema import MemorySettings, field_bounds, field_layers
from memory_plugin.settings.service import LayeredSettings, SettingsCache

__all__ = [
    "Clamped",
    "EffectiveSettings",
    "Layer",
    "LayeredSettings",
    "MemorySettings",
    "SettingsCache",
    "field_bounds",
    "field_layers",
]
