"""Push a lane's branch and open a pull request: with ``gh`` installed both run (``git push -u``,
then ``gh pr create``); without it nothing runs and the exact commands are returned to be run by
hand. Arguments are passed as argv lists, never through a shell."""

from __future__ import annotations

import asyncio
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from paragents.lanes.errors import LaneError
from paragents.lanes.git import git
from paragents.store import LaneRecord

if TYPE_CHECKING:
    from paragents.lanes.merge_result import MergeResult


def pr_argvs(lane: LaneRecord, message: str | None) -> list[list[str]]:
    """The two commands that open a pull request for ``lane``: the push and ``gh pr create`` (title
    and body from ``message``, else ``--fill`` from the commits)."""
    target = lane.base_ref
    remote, base = target.split("/", 1) if "/" in target else ("origin", target)
    gh = ["gh", "pr", "create", "--base", base, "--head", lane.branch]
    if message and message.strip():
        title, _, body = message.strip().partition("\n")
        gh += ["--title", title.strip(), "--body", body.strip()]
    else:
        gh.append("--fill")
    return [["git", "push", "-u", remote, lane.branch], gh]


def pr_commands(lane: LaneRecord, message: str | None) -> list[str]:
    """:func:`pr_argvs` as shell-quoted lines (for showing and for copying)."""
    return [shlex.join(argv) for argv in pr_argvs(lane, message)]


async def _run(argv: list[str], cwd: Path, on_output: Callable[[str], None] | None) -> str:
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=str(cwd),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
    )
    out, _ = await proc.communicate()
    text = out.decode("utf-8", "replace").strip()
    if on_output and text:
        on_output(text)
    if proc.returncode != 0:
        raise LaneError(f"`{shlex.join(argv)}` failed (exit {proc.returncode}): {text}", output=text)
    return text


async def open_pull_request(
    repo: Path, lane: LaneRecord, message: str | None, on_output: Callable[[str], None] | None = None
) -> MergeResult:
    """Push the lane's branch and open its PR with ``gh``; without ``gh`` run nothing and return the
    commands."""
    from paragents.lanes.merge_result import MergeResult

    argvs = pr_argvs(lane, message)
    commands = [shlex.join(argv) for argv in argvs]
    target = lane.base_ref
    if shutil.which("gh") is None:
        return MergeResult(
            lane.name, "pr", target, None, "gh is not installed: run these to open the pull request", commands
        )
    remote = argvs[0][3]
    if not (await git("remote", "get-url", remote, cwd=repo, check=False)).ok:
        raise LaneError(f"there is no remote {remote!r}: add one with `git remote add {remote} URL`")
    await _run(argvs[0], repo, on_output)
    url = await _run(argvs[1], Path(lane.path), on_output)
    last = url.splitlines()[-1] if url else ""
    return MergeResult(lane.name, "pr", target, None, f"pull request opened: {last}", commands)
