"""Facts about the repository a lane is made from: its top level, HEAD, bases and where lanes live."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from paragents.lanes.errors import LaneError
from paragents.lanes.git import git, require_git
from paragents.lanes.integrity import BRANCH_PREFIX as BRANCH_PREFIX  # re-exported
from paragents.lanes.integrity import lanes_root as lanes_root
from paragents.lanes.integrity import project_hash as project_hash

_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


@dataclass(frozen=True)
class Base:
    """Where a lane starts: ``ref`` is what merges go back to (a branch, or ``origin/main``),
    ``commit`` the exact commit the lane was made from."""

    ref: str
    commit: str


def recovery_dir() -> Path:
    """``<state>/lanes/recovery``: bundles written by ``lanes gc --force``."""
    return lanes_root() / "recovery"


def gone_dir(path: Path) -> str | None:
    """None while ``path`` is a directory; else the words saying it is gone (a lane discarded by fan-out's
    compare screen or ``lanes gc``, a folder the user removed) and where a discarded lane's work is
    kept (said only for a lane's directory). One stat. The refusals of a session whose directory is gone
    (reopening it, and each tool call of an open one) start from these words."""
    if path.is_dir():
        return None
    if not path.is_relative_to(lanes_root()):
        return f"its directory {path} no longer exists"
    kept = recovery_dir()
    return (
        f"its directory {path} no longer exists (a discarded lane's work is kept as a git bundle in {kept})"
    )


def lane_path(repo: Path, name: str) -> Path:
    return lanes_root() / project_hash(repo) / name


def check_lane_name(name: str) -> str:
    """Return ``name`` when it can name a lane and its branch; else raise LaneError saying why."""
    if not _NAME.match(name) or ".." in name or name.endswith((".lock", ".")):
        raise LaneError(
            f"{name!r} cannot name a lane: use letters, digits, '.', '_' or '-' "
            "(at most 64, starting with a letter or digit)"
        )
    return name


async def toplevel(where: Path) -> Path:
    """Return the main checkout's top level for ``where`` (also when ``where`` is inside a lane).

    Raises LaneError when git is missing or too old, or ``where`` is not in a git repository."""
    await require_git(where)
    result = await git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=where, check=False)
    if not result.ok:
        raise LaneError(
            f"{where} is not inside a git repository: run `git init` there, or pick another --dir"
        )
    common = Path(result.out.strip())
    if common.name == ".git":
        return common.parent.resolve()
    top = await git("rev-parse", "--show-toplevel", cwd=where)
    return Path(top.out.strip()).resolve()


async def head_commit(repo: Path) -> str:
    """Return HEAD's commit; raises LaneError naming the fix for a repository with no commits."""
    result = await git("rev-parse", "--verify", "-q", "HEAD^{commit}", cwd=repo, check=False)
    if not result.ok:
        raise LaneError(
            f"the repository {repo} has no commits yet, so a lane has nothing to start from: "
            "run `git commit --allow-empty -m init` first"
        )
    return result.out.strip()


async def current_branch(repo: Path) -> str | None:
    """Return the branch checked out in ``repo``, or None when HEAD is detached."""
    result = await git("symbolic-ref", "-q", "--short", "HEAD", cwd=repo, check=False)
    return result.out.strip() if result.ok else None


async def resolve_base(repo: Path, base: str) -> Base:
    """Resolve a ``--base`` (``head``, a branch, ``origin/main``...) to a :class:`Base`.

    Raises LaneError for a repository with no commits, a detached HEAD with ``head``, or a base that
    does not exist."""
    commit = await head_commit(repo)
    if base.lower() in ("head", ""):
        branch = await current_branch(repo)
        if branch is None:
            raise LaneError(
                f"HEAD is detached (at {commit[:12]}), so there is no branch to merge the lane back to: "
                "check out a branch, or pass --base BRANCH"
            )
        return Base(branch, commit)
    result = await git("rev-parse", "--verify", "-q", f"{base}^{{commit}}", cwd=repo, check=False)
    if not result.ok:
        hint = f"run `git fetch {base.split('/', 1)[0]}` first, or " if "/" in base else ""
        raise LaneError(f"the base {base!r} does not exist in {repo}: {hint}pass an existing branch")
    return Base(base, result.out.strip())


async def branch_exists(repo: Path, branch: str) -> bool:
    result = await git("show-ref", "--verify", "-q", f"refs/heads/{branch}", cwd=repo, check=False)
    return result.ok


OWN_DIR = ".paragents/"
"""paragents' own folder in a checkout (saved permission answers, its .gitignore): files paragents
wrote there never count as the user's changes."""


async def is_dirty(path: Path) -> list[str]:
    """Return the ``git status --porcelain`` lines of a checkout (empty when clean)."""
    result = await git("status", "--porcelain", "--untracked-files=all", cwd=path)
    return [line for line in result.out.splitlines() if line.strip()]


def is_own(line: str) -> bool:
    """True for a ``git status --porcelain`` line of an untracked file in paragents' own folder."""
    return line.startswith("?? ") and line[3:].lstrip('"').startswith(OWN_DIR)


async def own_changes(path: Path) -> list[str]:
    """The user's uncommitted changes in a checkout (:func:`is_dirty` without paragents' own
    untracked files, :data:`OWN_DIR`)."""
    return [line for line in await is_dirty(path) if not is_own(line)]
