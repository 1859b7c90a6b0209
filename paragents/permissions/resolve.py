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


def absolute(path: str, cwd: Path, home: Path) -> Path:
    """Return ``path`` made absolute against ``cwd`` with a leading ``~`` expanded to ``home``.

    ``~user`` forms are left as written (they then sit under cwd and match nothing special)."""
    if path == "~" or path.startswith("~/"):
        path = str(home) + path[1:]
    return Path(os.path.join(cwd, path))


def resolutions(path: Path) -> list[Path]:
    """Return the distinct resolutions of absolute ``path``: lexical, lexical+symlinks, kernel order."""
    lexical = os.path.normpath(path)
    out: list[Path] = []
    for candidate in (lexical, os.path.realpath(lexical), os.path.realpath(path)):
        as_path = Path(candidate)
        if as_path not in out:
            out.append(as_path)
    return out


def is_inside(path: Path, dirs: list[Path]) -> bool:
    """Return True when ``path`` is one of ``dirs`` or lies below one of them."""
    return any(path == d or d in path.parents for d in dirs)


def working_dirs(dirs: list[Path]) -> list[Path]:
    """Return ``dirs`` normalised, each followed by its symlink-resolved form when that differs."""
    out: list[Path] = []
    for d in dirs:
        for form in (Path(os.path.normpath(d)), Path(os.path.realpath(d))):
            if form not in out:
                out.append(form)
    return out


def protected_reason(path: Path, home: Path, managed: Path) -> str | None:
    """Return why ``path`` is protected (never changed without asking), or None.

    Protected: permission and config files (``permissions.json``, ``permissions.local.json``,
    ``runtime_config.json``, the managed file), anything in ``.paragents/`` or ``.git/``, and the shell
    start-up files in ``home``. Names are compared case-insensitively (for case-insensitive disks)."""
    lowered = [part.lower() for part in path.parts]
    if ".git" in lowered:
        return f"{path} is inside .git/ (repository internals)"
    if ".paragents" in lowered:
        return f"{path} is inside .paragents/ (saved permission answers)"
    if lowered and lowered[-1] in PERMISSION_FILE_NAMES:
        return f"{path} is a permission/config file"
    if path in (managed, Path(os.path.realpath(managed))):
        return f"{path} is the managed permissions file"
    if path.parent in (home, Path(os.path.realpath(home))) and path.name in SHELL_RC_FILES:
        return f"{path} is a shell start-up file"
    return None
