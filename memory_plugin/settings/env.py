"""Deployment switches: `MEMORY_<SETTING>` environment variables set the platform layer."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from memory_plugin.errors import SettingsError
from memory_plugin.settings.schema import MemorySettings
from memory_plugin.settings.values import known_field, parse_env_value

PREFIX = "MEMORY_"
LOCKED_VAR = "MEMORY_LOCKED"


def env_var(name: str) -> str:
    """The environment variable that sets a setting."""
    return PREFIX + name.upper()


def read_env(environ: Mapping[str, str]) -> tuple[dict[str, Any], frozenset[str]]:
    """Settings values and platform locks named by the environment."""
    values: dict[str, Any] = {}
    for name in MemorySettings.model_fields:
        raw = environ.get(env_var(name))
        if raw is None:
            continue
        try:
            values[name] = parse_env_value(name, raw)
        except SettingsError as exc:
            raise SettingsError(f"environment variable {env_var(name)}: {exc}") from None
    locked = frozenset(
        known_field(part.strip()) for part in environ.get(LOCKED_VAR, "").split(",") if part.strip()
    )
    return values, locked
