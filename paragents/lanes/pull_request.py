"""Push a lane's branch and open a pull request: with ``gh`` installed both run (``git push -u``,
then ``gh pr create``); without it nothing runs and the exact commands are returned to be run by
hand. Arguments are passed as argv lists, never through a shell.

The push is the user's own: it runs with their global git config and ssh agent, but hardened
against the repository's config (lanes/git.py with ``user=True``: a program key the repository sets
gets the global value back, hooks do not run, a repository credential helper is refused). ``gh``
gets the allowed environment plus its own ``GH_*`` / ``GITHUB_TOKEN`` variables, never paragents'
keys, and the same config overrides for the git commands it runs itself."""

from __future__ import annotations

import asyncio
import shlex
import shutil
from collections.abc import Callable
from pathlib import Path

from paragents.lanes.errors import LaneError
from paragents.lanes.git import git
from paragents.lanes.integrity import lane_pins
from paragents.lanes.merge_result import MergeResult
from paragents.store import LaneRecord
from paragents.tools.git_exec import GitConfigRefused, user_program_env

GH_ENV = ("GH_*", "GITHUB_TOKEN", "GITHUB_ENTERPRISE_TOKEN", "SSH_AUTH_SOCK")
"""The user's variables ``gh`` gets besides the allowed ones (its credentials)."""


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
    if argv[0] == "git":
        result = await git(*argv[1:], cwd=cwd, check=False, user=True)
        code, text = result.code, "\n".join(t for t in (result.out.strip(), result.err) if t)
    else:
        try:
            env = await user_program_env(cwd, env=lane_pins(cwd), allow_env=GH_ENV)
        except GitConfigRefused as exc:
            raise LaneError(str(exc)) from exc
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
        )
        out, _ = await proc.communicate()
        code, text = proc.returncode or 0, out.decode("utf-8", "replace").strip()
    if on_output and text:
        on_output(text)
    if code != 0:
        raise LaneError(f"`{shlex.join(argv)}` failed (exit {code}): {text}", output=text)
    return text


async def open_pull_request(
    repo: Path, lane: LaneRecord, message: str | None, on_output: Callable[[str], None] | None = None
) -> MergeResult:
    """Push the lane's branch and open its PR with ``gh``; without ``gh`` run nothing and return the
    commands."""
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
