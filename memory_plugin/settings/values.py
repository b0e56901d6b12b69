"""Validating single setting values, from Python callers and from environment variables."""

from __future__ import annotations

from functools import cache
from typing import Any, get_args, get_origin

from pydantic import TypeAdapter, ValidationError

from memory_plugin.errors import SettingsError
from memory_plugin.settings.schema import MemorySettings


def known_field(name: str) -> str:
    """Return name if it is a setting, else raise naming the unknown field."""
    if name not in MemorySettings.model_fields:
        raise SettingsError(f"unknown setting {name!r}")
    return name


@cache
def _adapter(name: str) -> TypeAdapter[Any]:
    annotation = MemorySettings.model_fields[name].annotation
    assert annotation is not None
    return TypeAdapter(annotation)


def parse_value(name: str, value: Any) -> Any:
    """Type-check one value for a setting (bounds are applied at read time, not here)."""
    known_field(name)
    try:
        parsed = _adapter(name).validate_python(value)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"]
        raise SettingsError(f"setting {name!r}: {value!r} is malformed ({problem})") from None
    return _adapter(name).dump_python(parsed, mode="json")


def parse_env_value(name: str, raw: str) -> Any:
    """Parse an environment variable's text for a setting."""
    annotation = MemorySettings.model_fields[name].annotation
    if get_origin(annotation) is tuple:
        return parse_value(name, [part.strip() for part in raw.split(",") if part.strip()])
    if type(None) in get_args(annotation) and raw.strip().lower() in ("", "none", "null"):
        return None
    return parse_value(name, raw.strip())
