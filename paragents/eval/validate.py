"""``eval validate``: check a task set before trusting its scores. For each task: its hidden tests
fail on the base (else the task measures nothing), and pass once its oracle solution is applied
(else no agent can pass it). Each check runs in a fresh checkout of the task's base commit, in the
same sandbox the trials' hidden tests run in. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from paragents.eval.errors import EvalError
from paragents.eval.results import Verifier
from paragents.eval.sandbox import CommandResult, Mount, SandboxUnavailable, bwrap_path, run_in_sandbox
from paragents.eval.tasks import Task, TaskSet
from paragents.eval.verifier import RunCommand, is_resolved, run_hidden_tests, run_oracle
from paragents.eval.workspace import prepare_repo
from paragents.lanes import LaneError
from paragents.lanes.git import git


@dataclass(frozen=True)
class Validation:
    """One task's checks: ``base`` (the hidden tests on the base: they must fail), ``oracle`` (after
    the oracle: they must pass; None when the task has no oracle) and the ``problems`` found."""

    task: str
    base: Verifier
    oracle: Verifier | None
    problems: tuple[str, ...]

    @property
    def ok(self) -> bool:
        return not self.problems


async def validate_tasks(tasks: TaskSet, work: Path | None = None, parallel: int = 2) -> list[Validation]:
    """Validate every task of ``tasks`` (see the module docstring). EvalError when the sandbox or the
    repository cannot be made."""
    try:
        bwrap_path()
    except SandboxUnavailable as exc:
        raise EvalError(f"validate runs the hidden tests in a sandbox, and {exc}") from None
    with contextlib.ExitStack() as stack:
        root = work or Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="paragents-validate-")))
        repo = root / "repo"
        bases = await prepare_repo(repo, tasks)
        gate = asyncio.Semaphore(max(1, parallel))

        async def one(task: Task) -> Validation:
            async with gate:
                return await _validate(task, repo, bases[task.id], root / "checks" / task.id)

        return list(await asyncio.gather(*(one(t) for t in tasks.tasks)))


async def _checkout(repo: Path, commit: str, where: Path) -> None:
    shutil.rmtree(where, ignore_errors=True)
    where.parent.mkdir(parents=True, exist_ok=True)
    await git("worktree", "add", "-q", "--detach", where, commit, cwd=repo)


async def _validate(task: Task, repo: Path, commit: str, folder: Path) -> Validation:
    problems: list[str] = []

    def runner(lane: Path) -> RunCommand:
        async def run(
            command: str, mounts: list[Mount], env: dict[str, str], timeout: float, network: bool
        ) -> CommandResult:
            return await run_in_sandbox(
                command,
                mounts=[Mount(lane, task.workdir, writable=True), *mounts],
                workdir=task.workdir,
                env=env,
                timeout=timeout,
                network=network,
            )

        return run

    try:
        base_lane = folder / "base" / "work"
        await _checkout(repo, commit, base_lane)
        base = await run_hidden_tests(task, base_lane, folder / "base", runner(base_lane))
        if is_resolved(base):
            problems.append("the hidden tests pass on the base: the task measures nothing")
        oracle: Verifier | None = None
        if task.has_oracle:
            oracle_lane = folder / "oracle" / "work"
            await _checkout(repo, commit, oracle_lane)
            done = await run_oracle(task, oracle_lane, folder / "oracle", runner(oracle_lane))
            if isinstance(done, str):
                problems.append(done)
            elif done.exit_code != 0:
                problems.append(f"the oracle failed (exit {done.exit_code}): {done.output[-300:].strip()}")
            oracle = await run_hidden_tests(task, oracle_lane, folder / "oracle", runner(oracle_lane))
            if not is_resolved(oracle):
                why = oracle.error or f"reward {oracle.reward}"
                problems.append(f"the hidden tests fail after the oracle's solution ({why})")
        else:
            problems.append("no oracle solution: nobody has shown the task can be solved")
    except LaneError as exc:
        raise EvalError(f"validate: {task.id}: {exc}", 1) from None
    finally:
        await git("worktree", "prune", cwd=repo, check=False)
    return Validation(task.id, base, oracle, tuple(problems))
