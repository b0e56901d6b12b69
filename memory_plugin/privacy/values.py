"""Checking a stored value of a user's memory before an import writes it: not too deep, and as
its kind's own check reads it (each kind's shelf names its check: the value's schema, typed
with memory_plugin.holdings.values, and its reader), so an import cannot plant what the kind's
reads cannot serve (docs/privacy.md)."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError

from memory_plugin.holdings import Shelf

MAX_DEPTH = 32
"""How deeply a stored value may nest lists and objects (the deepest a kind writes is 4)."""


def depth(value: Any) -> int:
    """How deeply `value` nests lists and objects (0 for a scalar), without recursing."""
    deepest, stack = 0, [(value, 0)]
    while stack:
        inner, level = stack.pop()
        if isinstance(inner, dict):
            inner = list(inner.values())
        elif not isinstance(inner, list):
            continue
        deepest = max(deepest, level + 1)
        if deepest > MAX_DEPTH:
            return deepest
        stack += [(each, level + 1) for each in inner]
    return deepest


def _explained(error: ValidationError) -> str:
    first = error.errors()[0]
    where = ".".join(str(part) for part in first["loc"])
    return f"{where}: {first['msg']}" if where else str(first["msg"])


def problem(shelf: Shelf, key: str, value: dict[str, Any]) -> str | None:
    """What is wrong with a value at `key` of the shelf as its kind reads it (too deep, a
    field missing or of the wrong type, a key its reader would not find), or None."""
    if depth(value) > MAX_DEPTH:
        return f"the value nests lists and objects more than {MAX_DEPTH} deep"
    if shelf.check is None:
        return None
    try:
        return shelf.check(key, value)
    except ValidationError as exc:
        return _explained(exc)
    except (KeyError, TypeError, ValueError) as exc:
        return f"its reader cannot read it ({type(exc).__name__}: {exc})"
