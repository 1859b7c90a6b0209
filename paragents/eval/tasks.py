"""A task of ``paragents eval`` and the loading of a task set (docs/eval.md, "Task formats").

Two formats load into the same :class:`Task`:

- a Harbor / terminal-bench 2.0 task directory (``task.toml``, ``instruction.md``, ``environment/``,
  ``tests/test.sh``, optional ``solution/solve.sh``): :mod:`paragents.eval.harbor`;
- a SWE-bench-style JSONL file for local repositories (one instance per line: repository path, base
  commit, problem statement, FAIL_TO_PASS / PASS_TO_PASS test ids): :mod:`paragents.eval.swe`.

:func:`paragents.eval.loader.load_tasks` reads a set in either format, or ``sample``: the built-in set
shipped in ``paragents/eval/sample/`` (Harbor format). Nothing here imports Textual."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from paragents.eval.errors import EvalError

TaskFormat = Literal["harbor", "swe"]

_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def check_task_id(text: str, where: str) -> str:
    """Return ``text`` when it can name a task (letters, digits, ``._-``, at most 64 characters, used
    in branch and session names); else raise EvalError naming ``where``."""
    if not _ID.match(text) or ".." in text or text.endswith((".", ".lock")):
        raise EvalError(
            f"{where}: {text!r} cannot be a task id (use letters, digits, '.', '_' and '-', at most 64)"
        )
    return text


@dataclass(frozen=True)
class Task:
    """One task, whatever its format.

    - ``id``: unique in its set (a Harbor task's directory name, a SWE instance's ``instance_id``).
    - ``instruction``: the prompt the agent gets.
    - ``files``: the workspace the trial's lane starts from (Harbor: what ``environment/Dockerfile``
      copies into its working directory; empty for SWE, whose lane starts from ``base_commit``).
    - ``repo`` / ``base_commit``: a SWE instance's local repository and commit.
    - ``workdir``: the container's working directory the task was written for (Harbor: the
      Dockerfile's last ``WORKDIR``, else ``/app``); the lane is mounted there for the hidden tests.
    - ``tests_dir``: the hidden tests (Harbor ``tests/``), copied in only after the agent stopped.
    - ``test_command``: what runs them (in the lane's sandbox, from ``workdir``).
    - ``solution_dir`` / ``solution_patch``: the oracle (Harbor ``solution/``, SWE ``patch``).
    - ``test_patch``, ``fail_to_pass``, ``pass_to_pass``: a SWE instance's hidden tests.
    - ``verifier_env`` / ``solution_env``: environment of the verifier and the oracle (Harbor).
    - ``agent_timeout`` / ``verifier_timeout``: seconds (Harbor ``[agent]`` / ``[verifier]``).
    - ``allow_internet``: the verifier's network (Harbor ``environment.allow_internet``).
    - ``notes``: what this local run does differently from the task's own environment (shown per task
      in the report, e.g. "environment/Dockerfile not built: ran in a local lane").
    - ``hidden``: paths the agent must not read (the task's tests and solution), as deny rules.
    - ``source``: where it came from (a directory or ``file.jsonl:LINE``)."""

    id: str
    format: TaskFormat
    instruction: str
    source: str
    files: dict[str, bytes] = field(default_factory=dict)
    modes: dict[str, int] = field(default_factory=dict)
    repo: Path | None = None
    base_commit: str | None = None
    workdir: str = "/app"
    tests_dir: Path | None = None
    test_command: str = "bash /tests/test.sh"
    solution_dir: Path | None = None
    solution_patch: str | None = None
    test_patch: str | None = None
    fail_to_pass: tuple[str, ...] = ()
    pass_to_pass: tuple[str, ...] = ()
    verifier_env: dict[str, str] = field(default_factory=dict)
    solution_env: dict[str, str] = field(default_factory=dict)
    agent_timeout: float = 600.0
    verifier_timeout: float = 600.0
    allow_internet: bool = True
    notes: tuple[str, ...] = ()
    hidden: tuple[Path, ...] = ()
    metadata: dict[str, object] = field(default_factory=dict)

    @property
    def has_oracle(self) -> bool:
        """True when the task has a reference solution ``eval validate`` can check."""
        return self.solution_dir is not None or bool(self.solution_patch)


@dataclass(frozen=True)
class TaskSet:
    """The tasks of one ``--tasks`` argument, in a stable order (by id), and where they came from."""

    name: str
    source: str
    tasks: tuple[Task, ...]

    def get(self, task_id: str) -> Task:
        """Return the task ``task_id`` (KeyError when absent)."""
        for task in self.tasks:
            if task.id == task_id:
                return task
        raise KeyError(task_id)

    def only(self, ids: list[str]) -> TaskSet:
        """The subset named by ``ids`` (EvalError naming an unknown id)."""
        known = {t.id for t in self.tasks}
        unknown = [i for i in ids if i not in known]
        if unknown:
            raise EvalError(
                f"--task: no task {', '.join(map(repr, unknown))} in {self.name} "
                f"(it has {', '.join(sorted(known)) or 'none'})"
            )
        return TaskSet(self.name, self.source, tuple(t for t in self.tasks if t.id in ids))
