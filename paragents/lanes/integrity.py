"""Where lanes live, and the check that a lane still is the worktree paragents made.

A lane is ``<state>/lanes/<project-hash>/<name>``: a git worktree whose ``.git`` file says
``gitdir: <repo>/.git/worktrees/<id>``. A session's commands can write in the lane, so before git
runs there, :func:`lane_pins` checks that the ``.git`` file, the worktree's ``gitdir`` and
``commondir`` files and the project hash all agree (a ``.git`` replaced by a directory holding a
fresh ``git init``, or pointing at another repository, is refused with a :class:`LaneError` naming
the lane), that the lane's ``HEAD`` is its own branch ``paragents/<name>`` (not another branch, not
detached: paragents' commits, verify and merge trust HEAD nowhere, but a lane whose HEAD moved is
not the lane paragents made) and that this branch is a plain ref (not a symbolic ref to another
branch), and returns ``GIT_DIR`` / ``GIT_COMMON_DIR`` / ``GIT_WORK_TREE`` so git uses exactly those
directories whatever the files say later. The refusal never suggests ``git worktree repair`` for a
lane whose pointers lead out of the repository's own ``.git/worktrees/`` (repair would follow them)."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from paragents import paths, treefiles
from paragents.lanes.errors import LaneError

BRANCH_PREFIX = "paragents/"
"""Every lane works on the branch ``paragents/<name>``."""


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
    """The first 4096 bytes of a pointer file, as text: a regular file only (a FIFO a command put in
    place of the lane's ``.git`` would block the host forever: paragents.treefiles)."""
    return treefiles.read_head(path, 4096).decode("utf-8").strip()


def _problem(lane: Path, head: bool = True) -> tuple[str | None, bool, dict[str, str]]:
    """(what is wrong or None, whether ``git worktree repair`` is a safe fix, the pins); a HEAD or
    branch that is not the lane's raises its own LaneError (the fix differs)."""
    dotgit = lane / ".git"
    if dotgit.is_symlink() or not dotgit.exists():
        return "its .git file is missing or is a symbolic link", False, {}
    if dotgit.is_dir():
        return "its .git is a directory (a separate repository), not the worktree's .git file", False, {}
    try:
        text = _read(dotgit)
    except (OSError, UnicodeDecodeError):
        return "its .git file cannot be read", False, {}
    if not text.startswith("gitdir: "):
        return "its .git file does not say `gitdir: ...`", False, {}
    gitdir = Path(os.path.realpath(os.path.join(lane, text[len("gitdir: ") :].strip())))
    common = gitdir.parent.parent
    if gitdir.parent.name != "worktrees" or common.name != ".git" or not common.is_dir():
        return f"its .git file points at {gitdir}, which is not a worktree of a repository's .git", False, {}
    if project_hash(common.parent) != lane.parent.name:
        return (
            f"its .git file points at {gitdir}, a repository other than the one it was made from",
            False,
            {},
        )
    if (common / "commondir").exists():
        return (
            f"the repository's {common} holds a `commondir` file, which sends git to another directory's "
            "config and objects (paragents never writes one); look at it and remove it before running "
            "git in that checkout",
            False,
            {},
        )
    try:
        back = Path(os.path.realpath(os.path.join(gitdir, _read(gitdir / "gitdir"))))
        commondir = Path(os.path.realpath(os.path.join(gitdir, _read(gitdir / "commondir"))))
    except (OSError, UnicodeDecodeError):
        return f"{gitdir} lacks its gitdir or commondir file", False, {}
    if back != Path(os.path.realpath(dotgit)) or commondir != common:
        inside = _inside(back, lanes_root()) and commondir == common
        return f"{gitdir} does not point back at the lane (gitdir {back}, commondir {commondir})", inside, {}
    pins = {"GIT_DIR": str(gitdir), "GIT_COMMON_DIR": str(common), "GIT_WORK_TREE": str(lane)}
    if head:
        wrong = _head_problem(lane, gitdir, common)
        if wrong is not None:
            raise LaneError(
                f"lane {lane.name} ({lane}): {wrong}. paragents commits, verifies and merges nothing "
                "there (a session's command may have done it: look at the lane before trusting it)"
            )
    return None, False, pins


def _inside(path: Path, root: Path) -> bool:
    real = os.path.realpath(root)
    return str(path) == real or str(path).startswith(real.rstrip("/") + "/")


def _head_problem(lane: Path, gitdir: Path, common: Path) -> str | None:
    """Why the lane's HEAD or branch is not what paragents made, or None."""
    branch = f"refs/heads/{BRANCH_PREFIX}{lane.name}"
    try:
        head = _read(gitdir / "HEAD")
    except (OSError, UnicodeDecodeError):
        return f"{gitdir}/HEAD cannot be read"
    if head != f"ref: {branch}":
        shown = head[5:].strip() if head.startswith("ref: ") else f"detached at {head[:12]}"
        return (
            f"its HEAD is {shown!r}, not its branch {branch}; put it back with "
            f"`git -C {lane} switch {BRANCH_PREFIX}{lane.name}`"
        )
    try:
        ref = _read(common / branch)
    except FileNotFoundError:
        return None  # packed
    except (OSError, UnicodeDecodeError):
        return f"its branch file {common / branch} cannot be read"
    if ref.startswith("ref:"):
        return (
            f"its branch {branch} is a symbolic ref ({ref!r}): writing it would move another branch; "
            f"put it back with `git update-ref --no-deref {branch} <commit>` in the main checkout"
        )
    return None


def _refusal(lane: Path, problem: str, repair: bool) -> LaneError:
    if repair:
        fix = (
            f"To repair it run `git worktree repair {lane}` in the main checkout; to drop it, "
            f"`git worktree remove --force {lane}` there"
        )
    else:
        fix = (
            f"To drop it, look at its files, then `rm -rf {lane}` and `git worktree prune` in the main "
            "checkout (not `git worktree repair`: it would follow the lane's pointers)"
        )
    return LaneError(
        f"lane {lane.name} ({lane}) is no longer the worktree paragents made: {problem}. paragents "
        "does not run git there (a session's command may have replaced it: look before trusting "
        f"its contents). {fix}"
    )


def lane_pins(cwd: Path, *, head: bool = True) -> dict[str, str]:
    """For a ``cwd`` inside a lane: the ``GIT_DIR`` / ``GIT_COMMON_DIR`` / ``GIT_WORK_TREE`` git
    must use there; {} elsewhere. Raises LaneError (naming the lane and what to do) when the
    lane's git files were replaced, or (``head``, the default) when its HEAD is not its branch."""
    lane = lane_dir_of(cwd)
    if lane is None or not lane.is_dir():
        return {}
    problem, repair, pins = _problem(lane, head)
    if problem is not None:
        raise _refusal(lane, problem, repair)
    return pins
