"""Where lanes live, and the check that a lane still is the worktree paragents made.

A lane is ``<state>/lanes/<project-hash>/<name>``: a git worktree whose ``.git`` file says
``gitdir: <repo>/.git/worktrees/<id>``. A session's commands can write in the lane, so before git
runs there, :func:`lane_pins` checks that the ``.git`` file, the worktree's ``gitdir`` and
``commondir`` files and the project hash all agree (a ``.git`` replaced by a directory holding a
fresh ``git init``, or pointing at another repository, is refused with a :class:`LaneError` naming
the lane), and returns ``GIT_DIR`` / ``GIT_COMMON_DIR`` / ``GIT_WORK_TREE`` so git uses exactly
those directories whatever the files say later."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from paragents import paths
from paragents.lanes.errors import LaneError


def lanes_root() -> Path:
    """``<state>/lanes``: every lane's worktree lives below it, never inside the repository."""
    return paths.state_dir() / "lanes"


def project_hash(repo: Path) -> str:
    """A short stable hash of the repository's top-level path (names its folder of lanes)."""
    return hashlib.sha256(str(repo).encode()).hexdigest()[:12]


def lane_dir_of(cwd: Path) -> Path | None:
    """The lane directory (``<lanes root>/<hash>/<name>``) ``cwd`` is in, or None."""
    root = os.path.realpath(lanes_root())
    here = os.path.realpath(cwd)
    if not here.startswith(root + os.sep):
        return None
    parts = here[len(root) + 1 :].split(os.sep)
    if len(parts) < 2 or parts[0] == "recovery" or len(parts[0]) != 12:
        return None
    return Path(root, parts[0], parts[1])


def _read(path: Path) -> str:
    with open(path, encoding="utf-8") as f:
        return f.read(4096).strip()


def _problem(lane: Path) -> tuple[str | None, dict[str, str]]:
    """(what is wrong or None, the pins)."""
    dotgit = lane / ".git"
    if dotgit.is_symlink() or not dotgit.exists():
        return "its .git file is missing or is a symbolic link", {}
    if dotgit.is_dir():
        return "its .git is a directory (a separate repository), not the worktree's .git file", {}
    try:
        text = _read(dotgit)
    except (OSError, UnicodeDecodeError):
        return "its .git file cannot be read", {}
    if not text.startswith("gitdir: "):
        return "its .git file does not say `gitdir: ...`", {}
    gitdir = Path(os.path.realpath(os.path.join(lane, text[len("gitdir: ") :].strip())))
    common = gitdir.parent.parent
    if gitdir.parent.name != "worktrees" or common.name != ".git" or not common.is_dir():
        return f"its .git file points at {gitdir}, which is not a worktree of a repository's .git", {}
    if project_hash(common.parent) != lane.parent.name:
        return f"its .git file points at {gitdir}, a repository other than the one it was made from", {}
    try:
        back = Path(os.path.realpath(os.path.join(gitdir, _read(gitdir / "gitdir"))))
        commondir = Path(os.path.realpath(os.path.join(gitdir, _read(gitdir / "commondir"))))
    except (OSError, UnicodeDecodeError):
        return f"{gitdir} lacks its gitdir or commondir file", {}
    if back != Path(os.path.realpath(dotgit)) or commondir != common:
        return f"{gitdir} does not point back at the lane (gitdir {back}, commondir {commondir})", {}
    pins = {"GIT_DIR": str(gitdir), "GIT_COMMON_DIR": str(common), "GIT_WORK_TREE": str(lane)}
    return None, pins


def lane_pins(cwd: Path) -> dict[str, str]:
    """For a ``cwd`` inside a lane: the ``GIT_DIR`` / ``GIT_COMMON_DIR`` / ``GIT_WORK_TREE`` git
    must use there; {} elsewhere. Raises LaneError (naming the lane and what to do) when the
    lane's git files were replaced."""
    lane = lane_dir_of(cwd)
    if lane is None or not lane.is_dir():
        return {}
    problem, pins = _problem(lane)
    if problem is not None:
        raise LaneError(
            f"lane {lane.name} ({lane}) is no longer the worktree paragents made: {problem}. paragents "
            "does not run git there (a session's command may have replaced it: look before trusting "
            "its contents). To repair it run `git worktree repair "
            f"{lane}` in the main checkout; to drop it, `git worktree remove --force {lane}` there"
        )
    return pins
