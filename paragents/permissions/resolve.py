"""Path spellings and resolutions for permission checks, and the protected paths.

A path is checked in every way it could be read: the lexical spelling (``..`` removed, no symlinks),
that spelling with symlinks resolved (``realpath`` resolves through the deepest existing ancestor for
files that do not exist yet), and the kernel's order (symlinks first, then ``..``). An allow must hold
for all of them, a deny or ask for any.
"""

from __future__ import annotations

import os
from pathlib import Path

PERMISSION_FILE_NAMES = frozenset({"permissions.json", "permissions.local.json", "runtime_config.json"})
SHELL_RC_FILES = (".bashrc", ".zshrc", ".profile", ".bash_profile", ".zprofile")


def absolute(path: str, cwd: str | Path, home: str | Path) -> str:
    """Return ``path`` made absolute against ``cwd`` with a leading ``~`` expanded to ``home``.

    ``~user`` forms are left as written (they then sit under cwd and match nothing special)."""
    if path == "~" or path.startswith("~/"):
        path = str(home) + path[1:]
    return os.path.join(cwd, path)


def resolutions(path: str) -> list[str]:
    """Return the distinct resolutions of absolute ``path``: lexical, lexical+symlinks, kernel order."""
    lexical = os.path.normpath(path)
    out = [lexical]
    forms = (lexical, path) if "/.." in path else (lexical,)
    for form in forms:
        real = os.path.realpath(form)
        if real not in out:
            out.append(real)
    return out


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


def protected_reason(path: str, home: str, managed: str) -> str | None:
    """Return why absolute ``path`` is protected (never changed without asking), or None.

    Protected: permission and config files (``permissions.json``, ``permissions.local.json``,
    ``runtime_config.json``, the managed file), anything in ``.paragents/`` or ``.git/``, and the shell
    start-up files in ``home``. Names are compared case-insensitively (for case-insensitive disks)."""
    lowered = path.lower().split("/")
    if ".git" in lowered:
        return f"{path} is inside .git/ (repository internals)"
    if ".paragents" in lowered:
        return f"{path} is inside .paragents/ (saved permission answers)"
    if lowered[-1] in PERMISSION_FILE_NAMES:
        return f"{path} is a permission/config file"
    if path in (managed, os.path.realpath(managed)):
        return f"{path} is the managed permissions file"
    parent, name = os.path.split(path)
    if name in SHELL_RC_FILES and parent in (home, os.path.realpath(home)):
        return f"{path} is a shell start-up file"
    return None
