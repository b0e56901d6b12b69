"""Choosing a chat model from a string: a provider model, or a Python object path."""

from __future__ import annotations

import importlib
import importlib.util
import os
from pathlib import Path
from typing import Any

from langchain_core.language_models import BaseChatModel

from memory_plugin.errors import MemoryPluginError
from memory_plugin.settings.env import env_var

MODEL_ENV = "MEMORY_MODEL"
MAINTENANCE_ENV = env_var("maintenance_model")


def _load_object(spec: str) -> Any:
    location, _, attr = spec.rpartition(":")
    if location.endswith(".py") or "/" in location:
        path = Path(location)
        module_spec = importlib.util.spec_from_file_location(path.stem, path)
        if module_spec is None or module_spec.loader is None:
            raise MemoryPluginError(f"cannot load {location}")
        module = importlib.util.module_from_spec(module_spec)
        module_spec.loader.exec_module(module)
    else:
        module = importlib.import_module(location)
    return getattr(module, attr)


TIMEOUT_PROVIDERS = frozenset({"openai", "azure_openai", "anthropic"})
"""Providers whose LangChain chat model takes `timeout` (seconds per request) and
`max_retries`."""


def resolve_model(spec: str | None = None, *, timeout: float | None = None) -> BaseChatModel:
    """A chat model from `spec` or $MEMORY_MODEL.

    `provider:model` (for example `openai:gpt-4o-mini`) goes through LangChain's
    `init_chat_model`; for the providers in TIMEOUT_PROVIDERS `timeout` is a call's whole
    budget: one request of at most `timeout` seconds, never retried;
    `package.module:name` or `path/to/file.py:name` names a chat model object, or a function
    returning one (set its timeout there).
    """
    spec = spec or os.environ.get(MODEL_ENV)
    if not spec:
        raise MemoryPluginError(
            f"no model configured: pass --model or set {MODEL_ENV} (for example "
            f"{MODEL_ENV}=openai:gpt-4o-mini)"
        )
    location = spec.rpartition(":")[0]
    try:
        if "." in location or "/" in location:
            found = _load_object(spec)
            model = found() if callable(found) and not isinstance(found, BaseChatModel) else found
        else:
            from langchain.chat_models import init_chat_model

            provider = location.lower()
            limits: dict[str, Any] = {}
            if timeout is not None and provider in TIMEOUT_PROVIDERS:
                limits = {"timeout": timeout, "max_retries": 0}
            model = init_chat_model(spec, **limits)
    except MemoryPluginError:
        raise
    except Exception as exc:
        raise MemoryPluginError(f"cannot load model {spec!r}: {exc}") from exc
    if not isinstance(model, BaseChatModel):
        raise MemoryPluginError(f"{spec!r} is not a chat model")
    return model
