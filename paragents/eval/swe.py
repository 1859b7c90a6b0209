"""SWE-bench-style task files for local repositories (docs/eval.md, "SWE-style JSONL").

One JSON object per line, SWE-bench's field names:

- ``instance_id`` (the task id), ``repo`` (a local repository: a path, relative to the JSONL file),
  ``base_commit``, ``problem_statement`` (the prompt);
- ``FAIL_TO_PASS`` / ``PASS_TO_PASS``: test ids that must pass after the change (a list, or a JSON
  string holding one, as SWE-bench ships them);
- ``test_patch``: the hidden tests, applied to the lane only after the agent stopped;
- ``patch``: the reference change (the oracle ``eval validate`` checks);
- ``test_cmd`` (paragents' addition, optional): the command the test ids are appended to (default
  ``python3 -m pytest -rA -p no:cacheprovider``); its output's ``PASSED id`` / ``FAILED id`` lines
  (pytest's ``-rA`` summary) decide each id.

A task is resolved when every FAIL_TO_PASS and PASS_TO_PASS id passed. Nothing here imports Textual."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from paragents.eval.errors import EvalError
from paragents.eval.tasks import Task, TaskSet, check_task_id

DEFAULT_TEST_CMD = "python3 -m pytest -rA -p no:cacheprovider"
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


class SweInstance(BaseModel):
    """One line of the file (unknown SWE-bench fields such as ``hints_text`` are ignored)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    instance_id: str
    repo: str
    base_commit: str
    problem_statement: str = Field(min_length=1)
    FAIL_TO_PASS: tuple[str, ...] = ()
    PASS_TO_PASS: tuple[str, ...] = ()
    test_patch: str = ""
    patch: str = ""
    test_cmd: str = DEFAULT_TEST_CMD

    @field_validator("FAIL_TO_PASS", "PASS_TO_PASS", mode="before")
    @classmethod
    def _ids(cls, value: Any) -> Any:
        if isinstance(value, str):  # SWE-bench ships them as JSON text
            try:
                value = json.loads(value) if value.strip() else []
            except ValueError:
                raise ValueError("expected a list of test ids (or JSON text of one)") from None
        return value

    @field_validator("base_commit")
    @classmethod
    def _sha(cls, value: str) -> str:
        if not _SHA.match(value):
            raise ValueError("expected a commit id (hexadecimal)")
        return value


def load_swe_file(path: Path) -> TaskSet:
    """Load every instance of ``path`` (EvalError naming ``file:LINE`` and the field)."""
    path = path.resolve()
    try:
        lines = path.read_text("utf-8").splitlines()
    except (OSError, UnicodeDecodeError) as exc:
        raise EvalError(f"{path}: cannot be read ({exc})") from None
    tasks: list[Task] = []
    seen: set[str] = set()
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        where = f"{path}:{number}"
        try:
            inst = SweInstance.model_validate(json.loads(line))
        except ValueError as exc:  # json.JSONDecodeError and pydantic's ValidationError
            if isinstance(exc, ValidationError):
                first = exc.errors()[0]
                field = ".".join(str(p) for p in first["loc"]) or "(line)"
                raise EvalError(f"{where}: {field}: {first['msg']}") from None
            raise EvalError(f"{where}: not a JSON object ({exc})") from None
        task_id = check_task_id(inst.instance_id, f"{where}: instance_id")
        if task_id in seen:
            raise EvalError(f"{where}: instance_id {task_id!r} appears twice")
        seen.add(task_id)
        repo = Path(inst.repo).expanduser()
        repo = (path.parent / repo).resolve() if not repo.is_absolute() else repo.resolve()
        if not (repo / ".git").exists():
            raise EvalError(f"{where}: repo: {inst.repo} is not a local git repository ({repo})")
        if not inst.FAIL_TO_PASS and not inst.PASS_TO_PASS:
            raise EvalError(f"{where}: FAIL_TO_PASS and PASS_TO_PASS are both empty: nothing decides it")
        ids = " ".join(_quote(t) for t in (*inst.FAIL_TO_PASS, *inst.PASS_TO_PASS))
        tasks.append(
            Task(
                id=task_id,
                format="swe",
                instruction=inst.problem_statement,
                source=where,
                repo=repo,
                base_commit=inst.base_commit,
                workdir="/repo",
                test_command=f"{inst.test_cmd} {ids}",
                solution_patch=inst.patch or None,
                test_patch=inst.test_patch or None,
                fail_to_pass=inst.FAIL_TO_PASS,
                pass_to_pass=inst.PASS_TO_PASS,
                agent_timeout=1800.0,
                verifier_timeout=1800.0,
                allow_internet=False,
                hidden=(path,),
            )
        )
    if not tasks:
        raise EvalError(f"{path}: no instance in it")
    return TaskSet(path.stem, str(path), tuple(sorted(tasks, key=lambda t: t.id)))


_RESULT = re.compile(r"^(PASSED|FAILED|ERROR|XFAIL|XPASS|SKIPPED) (\S+)", re.MULTILINE)


def parse_outcomes(output: str) -> dict[str, str]:
    """The outcome of each test id on pytest's ``-rA`` summary lines (``PASSED tests/t.py::test_a``)."""
    found: dict[str, str] = {}
    for match in _RESULT.finditer(output):
        found[match.group(2)] = match.group(1)
    return found


def swe_resolved(task: Task, output: str) -> tuple[bool, dict[str, str]]:
    """Whether every FAIL_TO_PASS and PASS_TO_PASS id of ``task`` PASSED in ``output``; and the
    outcome per id (``missing`` for an id the output never names)."""
    outcomes = parse_outcomes(output)
    wanted = (*task.fail_to_pass, *task.pass_to_pass)
    per_id = {t: outcomes.get(t, "missing") for t in wanted}
    return all(v == "PASSED" for v in per_id.values()), per_id


def _quote(text: str) -> str:
    """Shell-quote one test id (ids hold ``::`` and brackets)."""
    return "'" + text.replace("'", "'\\''") + "'"
