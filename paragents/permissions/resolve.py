"""Path spellings and resolutions for permission checks, and the protected paths.

A path is checked in every way it could be read: the lexical spelling (``..`` removed, no symlinks),
that spelling with symlinks resolved (``realpath`` resolves through the deepest existing ancestor for
files that do not exist yet), and the kernel's order (symlinks first, then ``..``). An allow must hold
for all of them, a deny or ask for any.
"""

from __future__ import annotations

import os
from pathlib import Path

from paragents.permissions.host_paths import startup_reason
from paragents.protected import protected_reason as posture_reason

PERMISSION_FILE_NAMES = frozenset({"permissions.json", "permissions.local.json", "runtime_config.json"})
SHELL_RC_FILES = (".bashrc", ".zshrc", ".profile", ".bash_profile", ".zprofile")


def absolute(path: str, cwd: str | Path, home: str | Path) -> str:
    """Return ``path`` made absolute against ``cwd`` with a leading ``~`` expanded to ``home``.

    ``~user`` forms are left as written (they then sit under cwd and match nothing special)."""
    if path == "~" or path.startswith("~/"):
        path = str(home) + path[1:]
    return os.path.join(cwd, path)


def resolutions(path: str, real_dirs: dict[str, str] | None = None) -> list[str]:
    """Return the distinct resolutions of absolute ``path``: lexical, lexical+symlinks, kernel order.

    ``real_dirs`` (directory → its ``realpath``) is a cache for the checks of one call: a compound
    command names many paths in the same few directories, and resolving each from ``/`` again costs
    one ``lstat`` per component."""
    lexical = os.path.normpath(path)
    out = [lexical]
    forms = (lexical, path) if "/.." in path else (lexical,)
    for form in forms:
        real = os.path.realpath(form) if real_dirs is None or "/.." in form else _realpath(form, real_dirs)
        if real not in out:
            out.append(real)
    return out


def _real_cached(path: str, real_dirs: dict[str, str]) -> str:
    """``os.path.realpath(path)``, remembered in ``real_dirs``."""
    real = real_dirs.get(path)
    if real is None:
        real = real_dirs[path] = os.path.realpath(path)
    return real


def _realpath(path: str, real_dirs: dict[str, str]) -> str:
    """``os.path.realpath`` of a normalised absolute ``path`` (no ``..``), its directory taken from
    ``real_dirs`` (filled on a miss): the same result, one ``lstat`` instead of one per component."""
    parent, name = os.path.split(path)
    if not name:
        return os.path.realpath(path)
    real_parent = _real_cached(parent, real_dirs)
    candidate = os.path.join(real_parent, name)
    return os.path.realpath(candidate) if os.path.islink(candidate) else candidate


def is_inside(path: str, dirs: list[str]) -> bool:
    """Return True when absolute ``path`` is one of the normalised ``dirs`` or lies below one of them."""
    return any(path == d or path.startswith(d.rstrip("/") + "/") for d in dirs)


def working_dirs(dirs: list[str | Path]) -> list[str]:
    """Return ``dirs`` normalised, each followed by its symlink-resolved form when that differs."""
    out: list[str] = []
    for d in dirs:
        for form in (os.path.normpath(d), os.path.realpath(d)):
            if form not in out:
                out.append(form)
    return out


def protected_reason(
    path: str, home: str, managed: str, real_dirs: dict[str, str] | None = None
) -> str | None:
    """Return why absolute ``path`` is protected (never changed without asking), or None.

    Protected: permission and config files (``permissions.json``, ``permissions.local.json``,
    ``runtime_config.json``, the managed file), anything in ``.paragents/`` or ``.git/``, the other
    files of :mod:`paragents.protected` (``.mcp.json``, ``.claude/settings*.json``, lane setup files),
    the shell start-up files in ``home`` and the other start-up places of
    :func:`~paragents.permissions.host_paths.startup_reason` (``~/.gitconfig``, ``~/.ssh``,
    ``~/.local/bin``, systemd units, ``.vscode``, ``.husky``, system directories ...). Names are
    compared case-insensitively (for case-insensitive disks).
    ``real_dirs``: the call's realpath cache (see :func:`resolutions`)."""
    lowered = path.lower().split("/")
    if ".git" in lowered:
        return f"{path} is inside .git/ (repository internals)"
    if ".paragents" in lowered:
        return f"{path} is inside .paragents/ (saved permission answers)"
    if lowered[-1] in PERMISSION_FILE_NAMES:
        return f"{path} is a permission/config file"
    posture = posture_reason(path)  # .mcp.json, .claude/settings*.json, lane setup files
    if posture:
        return posture
    real = os.path.realpath if real_dirs is None else (lambda p: _real_cached(p, real_dirs))
    if path in (managed, real(managed)):
        return f"{path} is the managed permissions file"
    parent, name = os.path.split(path)
    if name in SHELL_RC_FILES and parent in (home, real(home)):
        return f"{path} is a shell start-up file"
    return startup_reason(path, home) or (startup_reason(path, real(home)) if real(home) != home else None)
