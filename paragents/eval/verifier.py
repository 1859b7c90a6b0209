"""The hidden tests of a task, run once the agent stopped (trials) or on the base and the oracle's work
(``eval validate``): copied into the trial's folder only now, mounted read-only at ``/tests`` with
``/logs`` writable, run in the lane's sandbox with the lane at the task's working directory; then the
reward is read (Harbor's ``reward.txt`` / ``reward.json``, or every SWE test id PASSED). Nothing here
imports Textual."""

from __future__ import annotations

import errno
import os
import shutil
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path

from paragents import jsonfile
from paragents.eval.results import Verifier
from paragents.eval.sandbox import CommandResult, Mount
from paragents.eval.swe import swe_resolved
from paragents.eval.tasks import Task
from paragents.lanes.git import git

RunCommand = Callable[[str, list[Mount], dict[str, str], float, bool], Awaitable[CommandResult]]
"""``run(command, mounts, env, timeout, network)``: a command in the lane's sandbox (the lane at the
task's working directory), as the trial's backend runs it."""


def prepare_logs(trial_dir: Path) -> Path:
    """``trial_dir/logs`` with Harbor's ``verifier/`` and ``agent/`` folders (mounted at ``/logs``)."""
    logs = trial_dir / "logs"
    for sub in ("verifier", "agent"):
        (logs / sub).mkdir(parents=True, exist_ok=True)
    return logs


ApplyPatch = Callable[[str], Awaitable[str | None]]
"""``apply(patch)``: apply a SWE task's hidden tests' patch to the lane's files where they are (its
container or Pod); an error text, or None."""


async def run_hidden_tests(
    task: Task, lane: Path, trial_dir: Path, run: RunCommand, apply: ApplyPatch | None = None
) -> Verifier:
    """Copy ``task``'s hidden tests into ``trial_dir``, run them against the work in ``lane`` (a
    remote lane's ``apply`` puts a SWE test patch where its files are) and read the verdict (see the
    module docstring). Never raises for the tests' own failure."""
    logs = prepare_logs(trial_dir)
    mounts = [Mount(logs, "/logs", writable=True)]
    if task.tests_dir is not None:
        tests = trial_dir / "tests"
        shutil.rmtree(tests, ignore_errors=True)
        shutil.copytree(task.tests_dir, tests, symlinks=False)
        mounts.append(Mount(tests, "/tests"))
    if task.test_patch:
        if apply is not None:
            problem = await apply(task.test_patch)
        else:
            applied = await git(
                "-c", "core.hooksPath=/dev/null", "apply", "--whitespace=nowarn", "-",
                cwd=lane, stdin=task.test_patch, check=False,
            )  # fmt: skip
            problem = None if applied.ok else applied.err
        if problem is not None:
            return Verifier(error=f"the hidden tests' patch does not apply on this work: {problem[:500]}")
    result = await run(
        task.test_command, mounts, dict(task.verifier_env), task.verifier_timeout, task.allow_internet
    )
    (trial_dir / "verifier.log").write_text(result.output, "utf-8")
    if result.timed_out:
        return Verifier(
            seconds=result.seconds,
            tail=result.output,
            error=f"the hidden tests did not finish within {task.verifier_timeout:g} s",
        )
    if task.format == "swe":
        ok, outcomes = swe_resolved(task, result.output)
        return Verifier(exit_code=result.exit_code, reward=1.0 if ok else 0.0, outcomes=outcomes,
                        seconds=result.seconds, tail=result.output[-2000:])  # fmt: skip
    reward, metrics, error = read_reward(logs / "verifier")
    return Verifier(exit_code=result.exit_code, reward=reward, metrics=metrics, seconds=result.seconds,
                    tail=result.output[-2000:], error=error)  # fmt: skip


async def run_oracle(task: Task, lane: Path, trial_dir: Path, run: RunCommand) -> CommandResult | str:
    """Apply ``task``'s reference solution to the work in ``lane``: Harbor's ``solution/solve.sh`` run
    from the working directory with ``solution/`` at ``/solution``; a SWE ``patch`` applied with git.
    Returns the command's result, or a readable error."""
    if task.solution_patch:
        applied = await git(
            "-c", "core.hooksPath=/dev/null", "apply", "--whitespace=nowarn", "-",
            cwd=lane, stdin=task.solution_patch, check=False,
        )  # fmt: skip
        return (
            CommandResult(0, "", 0.0) if applied.ok else f"the reference patch does not apply: {applied.err}"
        )
    if task.solution_dir is None:
        return "the task has no oracle (no solution/solve.sh, no patch)"
    solution = trial_dir / "solution"
    shutil.rmtree(solution, ignore_errors=True)
    shutil.copytree(task.solution_dir, solution, symlinks=False)
    logs = prepare_logs(trial_dir)
    mounts = [Mount(solution, "/solution"), Mount(logs, "/logs", writable=True)]
    return await run(
        "bash /solution/solve.sh", mounts, dict(task.solution_env), task.agent_timeout, task.allow_internet
    )


REWARD_LIMIT = 1 << 20
"""Bytes of ``reward.txt`` / ``reward.json`` read at most (a bigger one is an error)."""


def _read_plain(folder: int, name: str) -> str | None:
    """The text of ``name`` in the open directory ``folder``, or None when it is absent. The file the
    hidden tests left must be a regular file: a symbolic link is never followed (``O_NOFOLLOW``: it
    would make the host read, into the results, a file the sandbox could not see) and a FIFO never
    waited on (``O_NONBLOCK``). Raises :class:`ValueError` with the reason otherwise."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=folder)
    except FileNotFoundError:
        return None
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise ValueError(f"{name} is a symbolic link (paragents does not follow it)") from None
        raise ValueError(f"{name} cannot be read ({exc.strerror or exc})") from None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            raise ValueError(f"{name} is not a regular file")
        data = handle.read(REWARD_LIMIT + 1)
    if len(data) > REWARD_LIMIT:
        raise ValueError(f"{name} is larger than {REWARD_LIMIT} bytes")
    return data.decode("utf-8", "replace")


def read_reward(folder: Path) -> tuple[float | None, dict[str, float], str | None]:
    """Harbor's reward: ``reward.txt`` (one number), else ``reward.json`` (metrics; its ``reward`` key,
    else the smallest metric, is the reward). Returns (reward, metrics, error). ``folder`` and both
    files are written by the hidden tests, which run the agent's code: a link among them is refused,
    never followed (see :func:`_read_plain`)."""
    try:
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            return None, {}, "/logs/verifier is not a folder (a link is not followed): no reward read"
        return None, {}, "the verifier wrote no reward (/logs/verifier/reward.txt or reward.json)"
    try:
        text = _read_plain(fd, "reward.txt")
        raw_json = _read_plain(fd, "reward.json") if text is None else None
    except ValueError as exc:
        return None, {}, f"{exc}: no reward read"
    finally:
        os.close(fd)
    if text is not None:
        raw = text.strip()
        try:
            return float(raw), {}, None
        except ValueError:
            return None, {}, f"reward.txt holds {raw[:40]!r}, not a number"
    if raw_json is not None:
        try:
            data = jsonfile.loads(raw_json, "reward.json")
        except jsonfile.JsonFileError as exc:
            return None, {}, f"reward.json: {exc.problem}"
        if not isinstance(data, dict) or not data:
            return None, {}, "reward.json holds no metrics"
        metrics: dict[str, float] = {}
        for key, value in data.items():
            if isinstance(value, bool) or not isinstance(value, int | float):
                return None, {}, f"reward.json: {key} is not a number"
            metrics[str(key)] = float(value)
        return metrics.get("reward", min(metrics.values())), metrics, None
    return None, {}, "the verifier wrote no reward (/logs/verifier/reward.txt or reward.json)"


def is_resolved(verifier: Verifier) -> bool:
    """Resolved: the verifier ran, and its reward is 1 (every listed test passed, for SWE)."""
    return verifier.error is None and verifier.reward is not None and verifier.reward >= 1.0
