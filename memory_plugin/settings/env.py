"""Deployment switches: `MEMORY_<SETTING>` environment variables, read once when a graph is built.

A setting named by the environment wins over every stored layer (the platform record
included) and cannot be changed by any of them: the environment is the deployment's lock.
`MEMORY_LOCKED` locks further fields at their platform value. An unknown `MEMORY_*` variable is
reported with the closest setting's variable, and a malformed value is a SettingsError.
"""

from __future__ import annotations

import difflib
import logging
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from memory_plugin.errors import SettingsError
from memory_plugin.settings.schema import MemorySettings
from memory_plugin.settings.values import known_field, parse_env_value

logger = logging.getLogger(__name__)
PREFIX = "MEMORY_"
LOCKED_VAR = "MEMORY_LOCKED"
# MEMORY_* variables the project reads that are not settings.
OTHER_VARIABLES = frozenset(
    {"MEMORY_URL", "MEMORY_MODEL", LOCKED_VAR, "MEMORY_TEST_POSTGRES_URL", "MEMORY_AUTH_TOKENS"}
)


def env_var(name: str) -> str:
    """The environment variable that sets a setting."""
    return PREFIX + name.upper()


@dataclass(frozen=True)
class EnvSettings:
    """What the environment sets (and so locks) and what it locks besides."""

    values: Mapping[str, Any]
    locked: frozenset[str]

    @property
    def pinned(self) -> frozenset[str]:
        """Fields no stored layer may change: those set here, and those locked here."""
        return frozenset(self.values) | self.locked


def read_env(environ: Mapping[str, str]) -> EnvSettings:
    """The settings and locks named by the environment; a malformed value is a SettingsError."""
    values: dict[str, Any] = {}
    for name in MemorySettings.model_fields:
        raw = environ.get(env_var(name))
        if raw is None:
            continue
        try:
            values[name] = parse_env_value(name, raw)
        except SettingsError as exc:
            raise SettingsError(f"environment variable {env_var(name)}: {exc}") from None
    try:
        locked = frozenset(
            known_field(part.strip())
            for part in environ.get(LOCKED_VAR, "").split(",")
            if part.strip()
        )
    except SettingsError as exc:
        raise SettingsError(f"environment variable {LOCKED_VAR}: {exc}") from None
    return EnvSettings(values, locked)


def unknown_variables(environ: Mapping[str, str]) -> dict[str, str | None]:
    """`MEMORY_*` variables that name no setting, each with the closest setting's variable."""
    known = {env_var(name) for name in MemorySettings.model_fields} | OTHER_VARIABLES
    unknown = sorted(var for var in environ if var.startswith(PREFIX) and var not in known)
    names = sorted(known - OTHER_VARIABLES)
    return {var: next(iter(difflib.get_close_matches(var, names, n=1)), None) for var in unknown}


_reported: set[tuple[str, str]] = set()


def report_unknown(environ: Mapping[str, str]) -> None:
    """Log a warning, once per process, for every unknown `MEMORY_*` variable, naming the
    closest setting's variable."""
    for var, close in unknown_variables(environ).items():
        if (var, environ[var]) in _reported:
            continue
        _reported.add((var, environ[var]))
        hint = f"; did you mean {close}?" if close else ""
        logger.warning("environment variable %s is not a memory_plugin setting%s", var, hint)
