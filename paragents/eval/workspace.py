"""The git repository an eval run works in (``OUT/work/repo``): one branch ``eval/<task>`` per task, the
base commit every trial's lane of that task starts from.

A Harbor task's branch is a root commit of its workspace files, written with a fixed identity and
date, so the same task always has the same base commit (a replayed run starts from the same trees). A
SWE-style task's branch is its ``base_commit``, fetched from its local repository (the repository
itself is only read). The main branch holds one README commit: lanes are made from this repository,
never from the user's project. Nothing here imports Textual."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from paragents.eval.errors import EXIT_FAILURE, EvalError
from paragents.eval.tasks import Task, TaskSet
from paragents.lanes import LaneError
from paragents.lanes.git import git

FIXED = {
    "GIT_AUTHOR_NAME": "paragents eval",
    "GIT_AUTHOR_EMAIL": "eval@paragents.invalid",
    "GIT_COMMITTER_NAME": "paragents eval",
    "GIT_COMMITTER_EMAIL": "eval@paragents.invalid",
    "GIT_AUTHOR_DATE": "2000-01-01T00:00:00+0000",
    "GIT_COMMITTER_DATE": "2000-01-01T00:00:00+0000",
}
"""Identity and date of the commits written here (so a task's base commit is always the same)."""
BRANCH = "eval/"


def branch_of(task: Task) -> str:
    """The branch holding ``task``'s base commit."""
    return BRANCH + task.id


async def prepare_repo(root: Path, tasks: TaskSet) -> dict[str, str]:
    """Make (or reuse) the repository at ``root`` with a branch per task; return task id -> base
    commit. Raises EvalError (exit 1) when git fails, or (exit 2) for a SWE base commit not found."""
    try:
        if not (root / ".git").exists():
            root.mkdir(parents=True, exist_ok=True)
            await git("init", "-q", "-b", "main", cwd=root)
            await git("config", "core.hooksPath", os.devnull, cwd=root)
            await git("config", "gc.auto", "0", cwd=root)  # no gc under trials working in parallel
            (root / "README.md").write_text(
                "Working repository of a `paragents eval` run: one branch eval/<task> per task.\n", "utf-8"
            )
            await git("add", "README.md", cwd=root)
            await git("commit", "-q", "--no-verify", "-m", "eval repository", cwd=root, env=FIXED)
        bases: dict[str, str] = {}
        for task in tasks.tasks:
            if task.format == "swe":
                bases[task.id] = await _fetch_base(root, task)
            else:
                bases[task.id] = await _write_base(root, task)
        return bases
    except LaneError as exc:
        raise EvalError(f"the eval repository {root} could not be prepared: {exc}", EXIT_FAILURE) from None
    except OSError as exc:
        raise EvalError(f"the eval repository {root} could not be prepared: {exc}", EXIT_FAILURE) from None


async def _write_base(root: Path, task: Task) -> str:
    """Write ``task.files`` as a root commit on ``eval/<task>`` (through a private index; the main
    checkout is not touched) and return it."""
    with tempfile.TemporaryDirectory(prefix="paragents-eval-index-") as tmp:
        env = {**FIXED, "GIT_INDEX_FILE": str(Path(tmp) / "index")}
        entries = []
        for rel in sorted(task.files):
            path = Path(tmp) / "blob"
            path.write_bytes(task.files[rel])
            sha = (await git("hash-object", "-w", "--no-filters", path, cwd=root, env=env)).out.strip()
            mode = "100755" if task.modes.get(rel, 0o644) & 0o111 else "100644"
            entries.append(f"{mode} {sha}\t{rel}")
        if entries:
            await git(
                "update-index", "--add", "--index-info", cwd=root, env=env, stdin="\n".join(entries) + "\n"
            )
        tree = (await git("write-tree", cwd=root, env=env)).out.strip()
        commit = (
            await git("commit-tree", tree, "-m", f"eval task {task.id}: base", cwd=root, env=FIXED)
        ).out.strip()
    await git("update-ref", f"refs/heads/{branch_of(task)}", commit, cwd=root)
    return commit


async def _fetch_base(root: Path, task: Task) -> str:
    """Fetch ``task.base_commit`` from its local repository into ``eval/<task>`` and return it."""
    assert task.repo is not None and task.base_commit is not None
    ref = f"refs/heads/{branch_of(task)}"
    have = await git("rev-parse", "--verify", "-q", f"{task.base_commit}^{{commit}}", cwd=root, check=False)
    if not have.ok:
        got = await git("fetch", "-q", "--no-tags", str(task.repo), task.base_commit, cwd=root, check=False)
        if not got.ok:  # a server that refuses a bare commit id: take every branch, then look again
            await git(
                "fetch", "-q", "--no-tags", str(task.repo), f"+refs/heads/*:refs/eval-src/{task.id}/*",
                cwd=root, check=False,
            )  # fmt: skip
        have = await git(
            "rev-parse", "--verify", "-q", f"{task.base_commit}^{{commit}}", cwd=root, check=False
        )
    if not have.ok:
        raise EvalError(f"{task.source}: base_commit {task.base_commit} is not in {task.repo}")
    commit = have.out.strip()
    await git("update-ref", ref, commit, cwd=root)
    return commit
