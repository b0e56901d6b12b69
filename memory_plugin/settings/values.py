"""Validating single setting values: strictly where they are written, leniently where read.

The strict check of a write (`check_value`, `known_field`, `did_you_mean`) lives in
memory_plugin.settings.schema, which constructing MemorySettings needs; it is re-exported
here. This module only imports the schema, never the other way round.
"""

from __future__ import annotations

from typing import Any, get_args, get_origin

from memory_plugin.settings.schema import (
    MemorySettings,
    check_bounds,
    check_value,
    did_you_mean,
    field_adapter,
    is_number,
    known_field,
    validate_field,
)

__all__ = ["check_value", "did_you_mean", "known_field", "parse_env_value", "parse_value"]


def parse_value(name: str, value: Any) -> Any:
    """Type-check a stored value leniently (bounds are applied at read time, not here)."""
    known_field(name)
    parsed = validate_field(name, value, strict=False)
    is_number(name, parsed)
    return field_adapter(name).dump_python(parsed, mode="json")


def parse_env_value(name: str, raw: str) -> Any:
    """Parse an environment variable's text for a setting, then check it like a write."""
    annotation = MemorySettings.model_fields[name].annotation
    if get_origin(annotation) is tuple:
        return check_value(name, [part.strip() for part in raw.split(",") if part.strip()])
    if type(None) in get_args(annotation) and raw.strip().lower() in ("", "none", "null"):
        return None
    parsed = validate_field(name, raw.strip(), strict=False)
    check_bounds(name, parsed)
    return field_adapter(name).dump_python(parsed, mode="json")
