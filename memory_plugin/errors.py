"""Exceptions raised by memory_plugin: every one names what was wrong."""


class MemoryPluginError(Exception):
    """Base class for every error memory_plugin raises on purpose."""


class ScopeError(MemoryPluginError):
    """The run's context does not allow the requested memory scope."""


class InvalidIdError(MemoryPluginError, ValueError):
    """An id (user, workspace, org, space, agent) is empty or not a string."""


class BackendError(MemoryPluginError):
    """A backend URL is malformed or names an unknown scheme."""


class BackendUnavailableError(BackendError):
    """The backend could not be reached or initialised."""


class SettingsError(MemoryPluginError, ValueError):
    """A settings write names an unknown field or carries a malformed value."""


class LockedSettingError(SettingsError):
    """A settings write targets a field the platform has locked."""


class MemoryWriteError(MemoryPluginError, ValueError):
    """A memory write was refused by validation or screening; nothing was stored."""


class InvalidArgumentError(MemoryPluginError, ValueError):
    """A read was given a malformed argument (a page cursor, a count, a key); nothing was read."""


class ConflictError(MemoryPluginError):
    """Someone else changed the memory since it was read; nothing was stored."""


class ModelFileError(MemoryPluginError):
    """The safety screen's classifier file is missing, unreadable or damaged: nothing starts."""
