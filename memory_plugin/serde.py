"""A checkpoint serializer that decodes each stored message once per process.

Loading a checkpoint rebuilds every message of the thread, which dominates a turn on long
threads. Messages are stored as msgpack extension records; identical records decode to the
same message, so a bounded cache keyed by the record's bytes turns that rebuild into
lookups, and callers get a shallow copy, never the cached object itself. Messages inside a
DeltaChannel snapshot go through the same cache.

msgpack cannot hold an integer beyond 64 bits (a model may put one in tool arguments): a
checkpoint value that fails to encode is encoded again normalised by `storable`, the same
rule every store write follows, so the thread stays usable.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

import ormsgpack
from langchain_core.messages import BaseMessage
from langgraph.checkpoint.serde.jsonplus import JsonPlusSerializer

from memory_plugin.compat import EXT_DELTA_SNAPSHOT, DeltaSnapshot
from memory_plugin.storable import storable

OPTIONS = ormsgpack.OPT_NON_STR_KEYS


class CachingSerializer(JsonPlusSerializer):
    """JsonPlusSerializer with a per-process cache of decoded messages."""

    def __init__(self, *args: Any, max_cached: int = 50_000, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        decode = self._unpack_ext_hook
        cache: OrderedDict[tuple[int, bytes], BaseMessage] = OrderedDict()
        lock = threading.Lock()

        def cached_hook(code: int, data: bytes) -> Any:
            if code == EXT_DELTA_SNAPSHOT:
                inner = ormsgpack.unpackb(data, ext_hook=cached_hook, option=OPTIONS)
                return DeltaSnapshot(inner)
            key = (code, data)
            hit = cache.get(key)
            if hit is None:
                value = decode(code, data)
                if not isinstance(value, BaseMessage):
                    return value
                with lock:
                    cache[key] = hit = value
                    if len(cache) > max_cached:
                        cache.popitem(last=False)
            return hit.model_copy()

        self._unpack_ext_hook = cached_hook

    def dumps_typed(self, obj: Any) -> tuple[str, bytes]:
        """Encode a value; one msgpack cannot hold is encoded again normalised."""
        try:
            return super().dumps_typed(obj)
        except TypeError:
            normalised = storable(obj)
            if normalised is obj:
                raise
            return super().dumps_typed(normalised)
