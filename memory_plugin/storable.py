"""Values every backend can store: text without NUL or lone surrogates, 64-bit integers.

PostgreSQL's jsonb refuses U+0000 and a UTF-8 encoder refuses lone surrogates; msgpack and
the databases refuse integers beyond signed 64 bits. A user's text or a model's tool
arguments may hold any of them, so values are normalised before they are written: NUL and
lone surrogates become U+FFFD (a valid surrogate pair becomes its character), and an
integer beyond signed 64 bits becomes its decimal string. Nothing else changes, and an
unchanged value is returned as the same object.

Memory itself never gets that far: every memory write refuses text holding NUL or a lone
surrogate, naming it (`unstorable_character`, checked by the safety screen and by key and
id validation), so what is normalised here is the rest: checkpoints, journals, search text.
"""

from __future__ import annotations

import re
from typing import Any

import orjson
from langgraph.store.base import Op, PutOp, SearchOp
from pydantic import BaseModel

REPLACEMENT = "\ufffd"
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_UNSTORABLE = re.compile("[\x00\ud800-\udfff]")
_SURROGATE = re.compile("[\ud800-\udfff]")
# orjson refuses lone surrogates, and with STRICT_INTEGER integers beyond 53 bits
_CHECK = orjson.OPT_NON_STR_KEYS | orjson.OPT_STRICT_INTEGER


def unstorable_character(text: str) -> str | None:
    """The first NUL or surrogate code point in the text, named (as "U+0000 (NUL)" or
    "U+D800 (a lone surrogate)"), else None: what no memory write may hold."""
    found = _UNSTORABLE.search(text)
    if found is None:
        return None
    char = found.group()
    return f"U+{ord(char):04X} ({'NUL' if char == chr(0) else 'a lone surrogate'})"


def storable_text(text: str) -> str:
    """The text with NUL and lone surrogates replaced by U+FFFD."""
    if not _UNSTORABLE.search(text):
        return text
    if _SURROGATE.search(text):
        text = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return text.replace("\x00", REPLACEMENT)


def storable(value: Any) -> Any:
    """The value with every string (keys included) and out-of-range integer normalised,
    through dicts, lists, tuples (named ones keep their type) and pydantic models."""
    return value if _as_is(value) else _normalised(value)


def _as_is(value: Any) -> bool:
    """A fast check that a JSON value needs nothing (False may still need nothing)."""
    try:
        data = orjson.dumps(value, option=_CHECK)
    except TypeError:
        return False
    return b"\\u0000" not in data


def _normalised(value: Any) -> Any:
    if isinstance(value, str):
        return storable_text(value)
    if isinstance(value, bool):
        return value
    if isinstance(value, int):
        return value if INT64_MIN <= value <= INT64_MAX else str(value)
    if isinstance(value, dict):
        pairs = [(_normalised(k), _normalised(v)) for k, v in value.items()]
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True)):
            return value
        return dict(pairs)
    if isinstance(value, list | tuple):
        items = [_normalised(item) for item in value]
        if all(new is old for new, old in zip(items, value, strict=True)):
            return value
        if isinstance(value, list):
            return items
        return type(value)(*items) if hasattr(value, "_fields") else tuple(items)
    if isinstance(value, BaseModel):
        fields = {name: getattr(value, name) for name in type(value).model_fields}
        changed = {
            name: new for name, old in fields.items() if (new := _normalised(old)) is not old
        }
        return value.model_copy(update=changed) if changed else value
    return value


def storable_op(op: Op) -> Op:
    """A store operation whose written value and search text every backend accepts."""
    if isinstance(op, PutOp) and op.value is not None:
        value = storable(op.value)
        return op if value is op.value else op._replace(value=value)
    if isinstance(op, SearchOp) and (op.query or op.filter):
        query = storable_text(op.query) if op.query else op.query
        found = storable(op.filter) if op.filter else op.filter
        if query is op.query and found is op.filter:
            return op
        return op._replace(query=query, filter=found)
    return op
