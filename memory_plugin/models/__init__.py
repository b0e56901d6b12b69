"""The chat models memory works with: choosing one from a string (`choose`), the maintenance
model memory's own work uses (`maintenance`), and checking a model's reply before it may
replace stored memory (`replies`)."""

from memory_plugin.models.choose import MAINTENANCE_ENV, MODEL_ENV, resolve_model
from memory_plugin.models.maintenance import MaintenanceModel

__all__ = ["MAINTENANCE_ENV", "MODEL_ENV", "MaintenanceModel", "resolve_model"]
