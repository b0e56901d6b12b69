"""The settings table for docs/settings.md: `python -m memory_plugin.settings.table` prints it."""

from __future__ import annotations

from typing import Any

from memory_plugin.settings.env import env_var
from memory_plugin.settings.schema import MemorySettings, field_bounds, field_layers


def _show(value: Any) -> str:
    if isinstance(value, bool):
        return "on" if value else "off"
    if isinstance(value, int):
        return f"{value:,}"
    if value is None:
        return "none"
    if isinstance(value, tuple):
        return ", ".join(value) or "none"
    return str(value)


def settings_table() -> str:
    """A Markdown table: setting, environment variable, default, bounds, layers, reason."""
    rows = [
        "| setting | env variable | default | bounds | layers | why |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for name, info in MemorySettings.model_fields.items():
        low, high = field_bounds(name)
        bounds = f"{_show(low)} to {_show(high)}" if low is not None else ""
        extra = info.json_schema_extra
        reason = extra.get("reason", "") if isinstance(extra, dict) else ""
        layers = ", ".join(field_layers(name))
        rows.append(
            f"| `{name}` | `{env_var(name)}` | {_show(info.default)} | {bounds} | {layers} "
            f"| {reason} |"
        )
    return "\n".join(rows)


if __name__ == "__main__":
    print(settings_table())
