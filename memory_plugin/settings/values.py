"""Validating single setting values: strictly where they are written, leniently where read."""

from __future__ import annotations

import difflib
import math
from functools import cache
from typing import Any, get_args, get_origin

from pydantic import TypeAdapter, ValidationError

from memory_plugin.errors import SettingsError
from memory_plugin.settings.schema import MemorySettings, field_bounds


def known_field(name: str) -> str:
    """Return name if it is a setting, else raise naming the unknown field (and the closest)."""
    if name not in MemorySettings.model_fields:
        raise SettingsError(f"unknown setting {name!r}{did_you_mean(name)}")
    return name


def did_you_mean(name: str) -> str:
    """`; did you mean 'x'?` for the setting closest to name, or nothing."""
    close = difflib.get_close_matches(name.lower(), MemorySettings.model_fields, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


@cache
def _adapter(name: str) -> TypeAdapter[Any]:
    annotation = MemorySettings.model_fields[name].annotation
    assert annotation is not None
    return TypeAdapter(annotation)


def _validate(name: str, value: Any, *, strict: bool) -> Any:
    try:
        return _adapter(name).validate_python(value, strict=strict)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"]
        raise SettingsError(f"setting {name!r}: {value!r} is malformed ({problem})") from None


def _finite(name: str, value: Any) -> bool:
    if isinstance(value, float) and not math.isfinite(value):
        raise SettingsError(f"setting {name!r}: {value!r} is not a finite number")
    return isinstance(value, int | float) and not isinstance(value, bool)


def parse_value(name: str, value: Any) -> Any:
    """Type-check a stored value leniently (bounds are applied at read time, not here)."""
    known_field(name)
    parsed = _validate(name, value, strict=False)
    _finite(name, parsed)
    return _adapter(name).dump_python(parsed, mode="json")


def _in_bounds(name: str, value: Any) -> None:
    if not _finite(name, value):
        return
    low, high = field_bounds(name)
    if (low is not None and value < low) or (high is not None and value > high):
        raise SettingsError(f"setting {name!r}: {value!r} is out of range ({low} to {high})")


def check_value(name: str, value: Any) -> Any:
    """Validate a value being written: the exact type (a list stands for a tuple), a finite
    number within the setting's bounds; returns it as stored (JSON)."""
    known_field(name)
    if get_origin(MemorySettings.model_fields[name].annotation) is tuple and isinstance(
        value, list
    ):
        value = tuple(value)
    parsed = _validate(name, value, strict=True)
    _in_bounds(name, parsed)
    return _adapter(name).dump_python(parsed, mode="json")


def parse_env_value(name: str, raw: str) -> Any:
    """Parse an environment variable's text for a setting, then check it like a write."""
    annotation = MemorySettings.model_fields[name].annotation
    if get_origin(annotation) is tuple:
        return check_value(name, [part.strip() for part in raw.split(",") if part.strip()])
    if type(None) in get_args(annotation) and raw.strip().lower() in ("", "none", "null"):
        return None
    parsed = _validate(name, raw.strip(), strict=False)
    _in_bounds(name, parsed)
    return _adapter(name).dump_python(parsed, mode="json")
