"""A cheap fingerprint of a working tree, so the loop guard can tell whether a command changed files.

In a git work tree: ``git status --porcelain -z --untracked-files=all``, run the hardened way
(:mod:`paragents.tools.git_exec`: the command just run may have rewritten ``.git/config``, and no
program it names may run here; ``GIT_OPTIONAL_LOCKS=0`` so it never takes the index lock another git
command may need; in a lane, pinned to the lane's git directories, and not run at all when the lane's
``.git`` was replaced) plus the size and mtime of every path
it lists, so editing an already-modified file again changes the fingerprint too. Elsewhere: the size
and mtime of every file under the directory (skipping ``.git``, ``node_modules``, virtual envs and
caches), given up past :data:`WALK_LIMIT` entries. None means "could not tell" (no git, too big,
timeout), and the caller then counts the command as a change so the guard never pauses on a guess.
Nothing here imports Textual; the functions block (run them in a thread).
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from paragents.lanes.errors import LaneError
from paragents.lanes.integrity import lane_pins
from paragents.tools.git_exec import run_git_sync

WALK_LIMIT = 20_000
"""Files a non-git directory may hold before the fingerprint gives up (returns None)."""
SKIP_DIRS = frozenset({".git", "node_modules", ".venv", "venv", "__pycache__", ".mypy_cache", ".ruff_cache"})


def _stat(path: Path) -> str:
    try:
        st = path.stat()
    except OSError:
        return "-"
    return f"{st.st_size}:{st.st_mtime_ns}"


def _run(root: Path, *args: str) -> bytes | None:
    """stdout of a hardened ``git args...`` in ``root``; None when it failed or must not run."""
    try:
        pins = lane_pins(root)
        done = run_git_sync(args, root, env=pins, timeout=5)
    except (OSError, subprocess.TimeoutExpired, LaneError):
        return None
    return done.out if done.code == 0 else None


def _git(root: Path) -> str | None:
    out = _run(root, "status", "--porcelain=v1", "-z", "--untracked-files=all")
    if out is None:
        return None
    digest = hashlib.sha256(out)
    top = root
    for entry in out.split(b"\0"):
        if len(entry) > 3:
            rel = entry[3:].decode(errors="replace")
            digest.update(_stat(top / rel).encode())
    return "git:" + digest.hexdigest()


def _walk(root: Path) -> str | None:
    digest = hashlib.sha256()
    seen = 0
    for base, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS)
        for name in sorted(files):
            seen += 1
            if seen > WALK_LIMIT:
                return None
            path = Path(base, name)
            digest.update(f"{path}\0{_stat(path)}\0".encode())
    return "walk:" + digest.hexdigest()


def fingerprint(root: Path) -> str | None:
    """Return a fingerprint of the files under ``root`` (see module docstring), None when unknown."""
    if not root.is_dir():
        return None
    if (root / ".git").exists():
        return _git(root)
    inside = _run(root, "rev-parse", "--is-inside-work-tree")
    if inside is not None and inside.strip() == b"true":
        return _git(root)
    return _walk(root)
