"""The files of a project that change paragents' security posture: what runs (MCP servers, agents,
notify, verify and lane setup commands), what is allowed (permission rules, modes) and what git runs
on the host (its config and hooks). They are protected twice:

- inside the sandbox they are read-only (``tools/sandbox.py`` binds :func:`protected_paths` of every
  writable root read-only over it);
- for the file tools and for commands whose write targets are known they are protected paths
  (``permissions/resolve.py``: changing one always asks, in every mode, ``sandbox.autoAllow`` too).

``AGENTS.md`` and ``CLAUDE.md`` are not on the list: they are instructions the user reads and edits
with the agent, and they run nothing. Nothing here imports anything but the standard library."""

from __future__ import annotations

import os
from collections.abc import Iterable

PROTECTED_FILES: tuple[str, ...] = (
    "runtime_config.json",
    "permissions.json",
    ".mcp.json",
    ".claude/settings.json",
    ".claude/settings.local.json",
    "conductor.json",
    ".codex/environments/environment.toml",
    ".cursor/worktrees.json",
    ".worktreeinclude",
    ".git/config",
)
"""Files below a project root, relative (``/``-separated): paragents' own config and permission
files, Claude Code's settings, MCP servers, lane setup files, git's config."""
PROTECTED_DIRS: tuple[str, ...] = (".paragents", ".git/hooks", ".git/info")
"""Directories below a project root whose whole content is protected (saved permission answers and
lane setup; git's hooks and ``info/attributes``)."""
PROTECTED_NAMES = frozenset(
    {"runtime_config.json", "permissions.json", "permissions.local.json", ".mcp.json", ".worktreeinclude"}
)
"""File names protected wherever they are (a copy in a subdirectory may be the project of a nested
session)."""


def protected_paths(roots: Iterable[str | os.PathLike[str]]) -> list[str]:
    """Return the existing protected paths (absolute, symlinks resolved) below each of ``roots`` (the
    sandbox's writable roots), in order, without duplicates. A path whose resolution leaves its root
    (a symlink planted to point elsewhere) is skipped: it is not this root's file."""
    found: dict[str, None] = {}
    for root in roots:
        base = os.path.realpath(root)
        for rel in (*PROTECTED_FILES, *PROTECTED_DIRS):
            path = os.path.join(base, rel)
            if not os.path.lexists(path):
                continue
            real = os.path.realpath(path)
            if real == base or not real.startswith(base.rstrip("/") + "/"):
                continue
            found[real] = None
    return list(found)


def protected_reason(path: str) -> str | None:
    """Why absolute, normalised ``path`` is one of the posture files (any directory's), or None.
    Names compare case-insensitively (for case-insensitive disks)."""
    lowered = path.lower()
    parts = lowered.split("/")
    if parts[-1] in PROTECTED_NAMES:
        return f"{path} changes paragents' configuration or permissions"
    for rel in (*PROTECTED_FILES, *PROTECTED_DIRS):
        tail = "/" + rel
        if lowered.endswith(tail) or f"{tail}/" in lowered:
            return f"{path} changes what paragents or git runs ({rel})"
    return None
