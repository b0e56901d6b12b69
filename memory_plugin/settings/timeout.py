"""The process-wide seconds `connect` resolves: store_timeout_seconds and exit_wait_seconds.

How long a store that is down may hold a turn, and how long the process waits at exit for
background memory work. `MEMORY_STORE_TIMEOUT_SECONDS` / `MEMORY_EXIT_WAIT_SECONDS` (deployment
switches) win over the settings passed to `connect`, which win over the default; they are read
when the backend is opened. The backends take the resolved number of seconds
(memory_plugin.connection resolves it here).
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from memory_plugin.errors import SettingsError
from memory_plugin.settings.env import env_var
from memory_plugin.settings.schema import MemorySettings
from memory_plugin.settings.values import parse_env_value

FIELD = "store_timeout_seconds"
EXIT_FIELD = "exit_wait_seconds"


def store_timeout(
    settings: MemorySettings | None = None, environ: Mapping[str, str] | None = None
) -> float:
    """The store timeout in seconds, from the environment, else `settings`, else the default."""
    return _seconds(FIELD, settings, environ)


def exit_wait(
    settings: MemorySettings | None = None, environ: Mapping[str, str] | None = None
) -> float:
    """How long the process waits for background memory work at exit, in seconds, from the
    environment, else `settings`, else the default."""
    return _seconds(EXIT_FIELD, settings, environ)


def _seconds(
    field: str, settings: MemorySettings | None, environ: Mapping[str, str] | None
) -> float:
    raw = (os.environ if environ is None else environ).get(env_var(field))
    if raw is None:
        return float(getattr(settings or MemorySettings(), field))
    try:
        return float(parse_env_value(field, raw))
    except SettingsError as exc:
        raise SettingsError(f"environment variable {env_var(field)}: {exc}") from None
