"""The errors of the config: :class:`ConfigError` (one readable message naming file and field) and
its kinds."""

from __future__ import annotations

from paragents.trust import UntrustedError


class ConfigError(Exception):
    """A config file or value is invalid. ``str(err)`` is one readable message naming file and field."""


class UntrustedConfig(ConfigError):
    """The project's files that add commands or weaken the sandbox and permissions are not trusted
    (``paragents.trust``); ``items`` are those files, ``str(err)`` names them and ``paragents trust``."""

    def __init__(self, error: UntrustedError) -> None:
        super().__init__(str(error))
        self.project_dir = error.project_dir
        self.items = error.items


class MissingKeyError(ConfigError):
    """``api_key_env`` names an environment variable that is not set (the TUI opens /setup for it)."""
