"""How long a store that is down may hold a turn: the store_timeout_seconds setting.

`MEMORY_STORE_TIMEOUT_SECONDS` (a deployment switch) wins over the settings passed to
`connect`, which win over the default; it is read when the backend is opened. The backends
take the resolved number of seconds (memory_plugin.connection resolves it here).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from memory_plugin.errors import SettingsError
from memory_plugin.settings.env import env_var
from memory_plugin.settings.schema import MemorySettings
from memory_plugin.settings.values import parse_env_value

FIELD = "store_timeout_seconds"


def store_timeout(
    settings: MemorySettings | None = None, environ: Mapping[str, str] | None = None
) -> float:
    """The store timeout in seconds, from the environment, else `settings`, else the default."""
    raw = (os.environ if environ is None else environ).get(env_var(FIELD))
    if raw is None:
        return (settings or MemorySettings()).store_timeout_seconds
    try:
        return float(parse_env_value(FIELD, raw))
    except SettingsError as exc:
        raise SettingsError(f"environment variable {env_var(FIELD)}: {exc}") from None
