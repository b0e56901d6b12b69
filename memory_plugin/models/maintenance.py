"""The model memory's own work uses: summaries, flush notes, profile consolidation, document
compression and nightly consolidation.

It is the model given for memory work (`maintenance_model=`, by default the agent's model), or
the one the `maintenance_model` setting names (MEMORY_MAINTENANCE_MODEL, a spec for
memory_plugin.models.choose.resolve_model). Never the agent's tool-bound model instance.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from langchain_core.language_models import BaseChatModel

from memory_plugin.errors import SettingsError
from memory_plugin.models.choose import resolve_model
from memory_plugin.settings import MemorySettings

logger = logging.getLogger(__name__)
Loader = Callable[[str], BaseChatModel]


RETRY_SECONDS = 300.0
"""How long a model that could not be loaded is refused before it is tried again."""


class MaintenanceModel:
    """Picks the model for memory work from a turn's settings; each named model is loaded
    once, and one that failed to load is not tried again for RETRY_SECONDS."""

    def __init__(self, default: BaseChatModel | None, loader: Loader | None = None) -> None:
        self.default = default
        self._loader = loader
        self._loaded: dict[str, BaseChatModel] = {}
        self._failed: dict[str, tuple[float, Exception]] = {}

    def load(self, spec: str) -> BaseChatModel:
        """The model a spec names (loaded once); SettingsError when it cannot be loaded."""
        found = self._loaded.get(spec)
        if found is not None:
            return found
        until, failure = self._failed.get(spec, (0.0, None))
        if failure is not None and time.monotonic() < until:
            raise SettingsError(f"setting 'maintenance_model' ({spec!r}): {failure}") from failure
        try:
            found = (self._loader or resolve_model)(spec)
        except Exception as exc:
            self._failed[spec] = (time.monotonic() + RETRY_SECONDS, exc)
            raise SettingsError(f"setting 'maintenance_model' ({spec!r}): {exc}") from exc
        self._loaded[spec] = found
        self._failed.pop(spec, None)
        return found

    def __call__(self, settings: MemorySettings) -> BaseChatModel | None:
        """The model for memory work under these settings; a named model that cannot be
        loaded is logged and the default used."""
        spec = settings.maintenance_model
        if not spec:
            return self.default
        try:
            return self.load(spec)
        except SettingsError:
            logger.warning("maintenance model not loaded; using the default", exc_info=True)
            return self.default


def maintenance_of(model: BaseChatModel | MaintenanceModel | None) -> MaintenanceModel:
    """A MaintenanceModel for a plain model (its default), or the one given."""
    return model if isinstance(model, MaintenanceModel) else MaintenanceModel(model)
