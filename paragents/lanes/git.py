"""The real ``git`` CLI, hardened (:mod:`paragents.tools.git_exec`: no program the repository's
config names ever runs, no paragents secret in git's environment), never through a shell.

Every lane operation goes through :func:`git`; inside a lane it first checks that the lane is still
the worktree paragents made and pins git to its directories (:func:`~paragents.lanes.integrity.
lane_pins`). :func:`require_git` checks once per process that git is installed and new enough
(``merge-tree --write-tree`` needs 2.38)."""

from __future__ import annotations

import re
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from paragents.lanes.errors import LaneError
from paragents.lanes.integrity import lane_pins
from paragents.tools.git_exec import GitConfigRefused, run_git

MIN_VERSION = (2, 38)
"""``git merge-tree --write-tree`` (conflict prediction and merge pre-checks) arrived in git 2.38."""

IDENTITY = {
    "GIT_AUTHOR_NAME": "paragents",
    "GIT_AUTHOR_EMAIL": "paragents@localhost",
    "GIT_COMMITTER_NAME": "paragents",
    "GIT_COMMITTER_EMAIL": "paragents@localhost",
}
"""Identity for the snapshot and recovery commits paragents writes itself (never on a branch)."""

_checked: tuple[int, ...] | None = None


@dataclass(frozen=True)
class GitResult:
    """A finished git command: exit code, stdout (text, or bytes decoded as UTF-8), stderr."""

    code: int
    out: str
    err: str

    @property
    def ok(self) -> bool:
        return self.code == 0


async def git(
    *args: str | Path,
    cwd: Path,
    env: Mapping[str, str] | None = None,
    check: bool = True,
    what: str | None = None,
    stdin: str | None = None,
    user: bool = False,
    head: bool = True,
) -> GitResult:
    """Run ``git args...`` in ``cwd`` (hardened) and return its result.

    With ``check`` (default) a non-zero exit raises :class:`LaneError` naming ``what`` (default: the
    command) and git's own message. ``stdin``: text written to git's standard input. ``user``: a
    command the user asked for with their credentials (a push: their global config is kept).
    Raises LaneError for a lane whose git files were replaced, or whose HEAD is not its branch
    (``head=False``: only inside paragents' own rebase, which detaches HEAD until it ends), whatever
    ``check`` says."""
    pins = lane_pins(cwd, head=head)
    try:
        run = await run_git(
            args,
            cwd,
            env={**pins, **(env or {})},
            stdin=None if stdin is None else stdin.encode(),
            user=user,
        )
    except FileNotFoundError as exc:
        if shutil.which("git") is None:
            raise LaneError("git is not installed (or not on PATH): install git 2.38 or newer") from exc
        raise LaneError(f"cannot run git in {cwd}: the directory does not exist") from exc
    except GitConfigRefused as exc:
        raise LaneError(str(exc)) from exc
    result = GitResult(
        run.code, run.out.decode("utf-8", "replace"), run.err.decode("utf-8", "replace").strip()
    )
    if check and not result.ok:
        label = what or "git " + " ".join(str(a) for a in args[:2])
        raise LaneError(f"{label} failed: {result.err or result.out.strip() or f'exit {result.code}'}")
    return result


def parse_version(text: str) -> tuple[int, ...]:
    """Return the numeric version in ``git --version`` output (``git version 2.39.5`` -> (2, 39, 5))."""
    match = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", text)
    if match is None:
        return ()
    return tuple(int(g) for g in match.groups() if g is not None)


async def require_git(cwd: Path) -> tuple[int, ...]:
    """Check (once per process) that git is installed and at least :data:`MIN_VERSION`; return the
    version. Raises LaneError saying what is missing."""
    global _checked
    if _checked is not None:
        return _checked
    result = await git("--version", cwd=cwd, what="git --version")
    version = parse_version(result.out)
    if version[:2] < MIN_VERSION:
        found = ".".join(map(str, version)) or result.out.strip()
        raise LaneError(
            f"git {found} is too old for lanes: conflict prediction needs `git merge-tree --write-tree` "
            "(git 2.38 or newer); upgrade git"
        )
    _checked = version
    return version
