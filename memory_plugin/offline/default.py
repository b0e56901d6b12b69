"""The chat model memory uses where none is given: the one the environment names, else the
built-in offline model, with a warning naming the setting (the console, the Studio agent and
the nightly graph fall back alike)."""

from __future__ import annotations

import logging
import os

from langchain_core.language_models import BaseChatModel

from memory_plugin.models.choose import MAINTENANCE_ENV, MODEL_ENV, resolve_model
from memory_plugin.offline.model import OfflineModel

logger = logging.getLogger(__name__)


def default_model(*, maintenance: bool = False) -> BaseChatModel:
    """The model $MEMORY_MAINTENANCE_MODEL (with `maintenance`) or else $MEMORY_MODEL names,
    else the built-in offline model, with a logged warning naming the setting."""
    names = (MAINTENANCE_ENV, MODEL_ENV) if maintenance else (MODEL_ENV,)
    for name in names:
        spec = os.environ.get(name)
        if spec:
            return resolve_model(spec)
    unset = f"neither {' nor '.join(names)} is set" if maintenance else f"{MODEL_ENV} is not set"
    logger.warning(
        "%s: using the built-in offline model (memory_plugin.offline.OfflineModel); set "
        "%s=openai:gpt-4o-mini (or package.module:name) for a real model",
        unset,
        MODEL_ENV,
    )
    return OfflineModel()
