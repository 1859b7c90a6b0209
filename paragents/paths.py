"""Where paragents keeps its files: config, state (the SQLite store) and caches.

Paths come from platformdirs (XDG on Linux) and can be overridden for tests and
portable installs with the environment variables ``PARAGENTS_CONFIG_DIR`` and
``PARAGENTS_STATE_DIR``. Nothing here creates directories except :func:`ensure_dir`.
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

APP_NAME = "paragents"


def config_dir() -> Path:
    """Return the user config dir (``~/.config/paragents`` on Linux, or ``$PARAGENTS_CONFIG_DIR``)."""
    override = os.environ.get("PARAGENTS_CONFIG_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_config_dir(APP_NAME))


def state_dir() -> Path:
    """Return the user state dir holding the store (``~/.local/state/paragents``, or
    ``$PARAGENTS_STATE_DIR``)."""
    override = os.environ.get("PARAGENTS_STATE_DIR")
    if override:
        return Path(override).expanduser()
    return Path(platformdirs.user_state_dir(APP_NAME))


def managed_settings_path() -> Path:
    """Return the admin-managed permissions file (``/etc/paragents/managed-permissions.json``).

    ``$PARAGENTS_MANAGED_SETTINGS`` overrides it (used by tests)."""
    override = os.environ.get("PARAGENTS_MANAGED_SETTINGS")
    if override:
        return Path(override).expanduser()
    return Path("/etc/paragents/managed-permissions.json")


def user_runtime_config_path() -> Path:
    """Return the user-level ``runtime_config.json`` path inside :func:`config_dir`."""
    return config_dir() / "runtime_config.json"


def user_permissions_path() -> Path:
    """Return the user-level permissions file (``permissions.json`` in :func:`config_dir`)."""
    return config_dir() / "permissions.json"


def db_path() -> Path:
    """Return the SQLite store path (``paragents.db`` in :func:`state_dir`)."""
    return state_dir() / "paragents.db"


def ensure_dir(path: Path, mode: int = 0o700) -> Path:
    """Create ``path`` (and parents) if missing with ``mode``; return it. Raises OSError on failure."""
    path.mkdir(parents=True, exist_ok=True, mode=mode)
    return path


def norm_dir(path: Path | str) -> str:
    """Return the absolute, resolved text form of a directory path, as the store keeps a project's
    directory (and as its rows are looked up)."""
    return str(Path(path).expanduser().resolve())
