"""Task formats: Harbor task directories (task.toml, instruction.md, the Dockerfile's WORKDIR and COPY,
the reward files) and SWE-style JSONL; every bad input is one error naming the file and the field."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from paragents.eval.errors import EvalError
from paragents.eval.harbor import load_harbor_set, load_harbor_task
from paragents.eval.loader import load_tasks
from paragents.eval.swe import load_swe_file, parse_outcomes, swe_resolved
from paragents.eval.verifier import read_reward
from tests.lanes.conftest import commit_all, sh


def make_task(root: Path, name: str = "t1", *, dockerfile: str | None = None, toml: str = "") -> Path:
    folder = root / name
    (folder / "tests").mkdir(parents=True)
    (folder / "tests" / "test.sh").write_text("echo 1 > /logs/verifier/reward.txt\n")
    (folder / "instruction.md").write_text("Do the thing in /app.\n")
    (folder / "task.toml").write_text('version = "1.0"\n' + toml)
    if dockerfile is not None:
        (folder / "environment").mkdir()
        (folder / "environment" / "Dockerfile").write_text(dockerfile)
    return folder


def test_a_harbor_task_takes_its_workdir_and_copied_files_from_the_dockerfile(tmp_path: Path) -> None:
    folder = make_task(
        tmp_path,
        dockerfile=(
            "FROM python:3.13-slim\nRUN apt-get update && \\\n    apt-get install -y git\nWORKDIR /srv\n"
            'COPY src/ ./src/\nCOPY ["run.sh", "data.txt", "./"]\nCOPY --from=builder /out /srv/out\n'
            "COPY ../outside.txt /srv/\nCOPY etc.conf /etc/app.conf\nWORKDIR app\n"
        ),
        toml='[agent]\ntimeout_sec = 42.0\n[verifier]\ntimeout_sec = 7.0\nenv = { MODE = "strict" }\n'
        '[environment]\nallow_internet = false\n[metadata]\ndifficulty = "hard"\n',
    )
    env = folder / "environment"
    (env / "src" / "pkg").mkdir(parents=True)
    (env / "src" / "pkg" / "mod.py").write_text("X = 1\n")
    (env / "run.sh").write_text("#!/bin/sh\n")
    os.chmod(env / "run.sh", 0o755)
    (env / "data.txt").write_text("data\n")
    (env / "etc.conf").write_text("conf\n")
    (tmp_path / "outside.txt").write_text("secret\n")
    (env / "link.txt").symlink_to(tmp_path / "outside.txt")
    task = load_harbor_task(folder)
    assert task.workdir == "/srv/app"
    # WORKDIR moved to /srv/app after the copies into /srv: only what lands under /srv/app is kept
    assert task.files == {}
    task2 = load_harbor_task(_rewrite(folder, "WORKDIR app\n", ""))
    assert task2.workdir == "/srv"
    assert task2.files == {"src/pkg/mod.py": b"X = 1\n", "run.sh": b"#!/bin/sh\n", "data.txt": b"data\n"}
    assert task2.modes["run.sh"] & 0o111
    notes = " ".join(task2.notes)
    assert "base image python:3.13-slim not used" in notes and "1 RUN step(s) not run" in notes
    assert "outside the build context" in notes and "outside the working directory /srv" in notes
    assert "--from=builder" in notes
    assert "secret" not in str(task2.files)
    assert (task2.agent_timeout, task2.verifier_timeout, task2.verifier_env) == (
        42.0,
        7.0,
        {"MODE": "strict"},
    )
    assert task2.allow_internet is False and task2.metadata == {"difficulty": "hard"}
    assert task2.hidden == (folder / "tests", folder / "solution")


def _rewrite(folder: Path, old: str, new: str) -> Path:
    path = folder / "environment" / "Dockerfile"
    path.write_text(path.read_text().replace(old, new))
    return folder


def test_a_task_without_a_dockerfile_runs_in_an_empty_lane_at_app(tmp_path: Path) -> None:
    task = load_harbor_task(make_task(tmp_path, toml='[environment]\ndocker_image = "org/img:1"\n'))
    assert task.workdir == "/app" and task.files == {}
    assert task.notes == (
        "the prebuilt image org/img:1: ran in a local lane that starts empty, working directory /app",
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda f: (f / "instruction.md").unlink(), "instruction.md: missing"),
        (lambda f: (f / "tests" / "test.sh").unlink(), "test.sh: missing"),
        (lambda f: (f / "task.toml").write_text("version = [\n"), "task.toml: not valid TOML"),
        (
            lambda f: (f / "task.toml").write_text('[verifier]\ntimeout_sec = "soon"\n'),
            "task.toml: verifier.timeout_sec:",
        ),
        (lambda f: (f / "instruction.md").write_text("  \n"), "instruction.md: empty"),
    ],
)
def test_a_broken_task_is_one_error_naming_the_file_and_field(
    tmp_path: Path, change: object, message: str
) -> None:
    folder = make_task(tmp_path)
    change(folder)  # type: ignore[operator]
    with pytest.raises(EvalError) as caught:
        load_harbor_task(folder)
    assert message in str(caught.value) and str(folder) in str(caught.value)


def test_a_set_is_every_task_below_sorted_and_refuses_duplicates(tmp_path: Path) -> None:
    make_task(tmp_path / "a", "zeta")
    make_task(tmp_path / "b", "alpha")
    make_task(tmp_path / ".hidden", "ghost")
    assert [t.id for t in load_harbor_set(tmp_path).tasks] == ["alpha", "zeta"]
    make_task(tmp_path / "c", "alpha")
    with pytest.raises(EvalError, match="two tasks are named 'alpha'"):
        load_harbor_set(tmp_path)
    with pytest.raises(EvalError, match="holds no Harbor task"):
        load_harbor_set(tmp_path / "a" / "zeta" / "tests")
    with pytest.raises(EvalError, match="does not exist"):
        load_tasks(str(tmp_path / "nope"))


def test_the_sample_set_has_sixteen_harbor_tasks_with_oracles() -> None:
    tasks = load_tasks("sample")
    assert len(tasks.tasks) == 16
    assert all(t.format == "harbor" and t.has_oracle and t.allow_internet is False for t in tasks.tasks)
    assert tasks.get("clean-temp-files").files["cache/index.db"].startswith(b"SQLite format 3")


def test_rewards_are_read_as_harbor_writes_them(tmp_path: Path) -> None:
    assert read_reward(tmp_path) == (
        None,
        {},
        "the verifier wrote no reward (/logs/verifier/reward.txt or reward.json)",
    )
    (tmp_path / "reward.json").write_text(json.dumps({"accuracy": 0.5, "speed": 1}))
    assert read_reward(tmp_path) == (0.5, {"accuracy": 0.5, "speed": 1.0}, None)
    (tmp_path / "reward.json").write_text(json.dumps({"reward": 1, "accuracy": 0.5}))
    assert read_reward(tmp_path)[0] == 1.0
    (tmp_path / "reward.json").write_text(json.dumps({"reward": "yes"}))
    assert read_reward(tmp_path)[2] == "reward.json: reward is not a number"
    (tmp_path / "reward.txt").write_text("1\n")  # reward.txt wins
    assert read_reward(tmp_path) == (1.0, {}, None)
    (tmp_path / "reward.txt").write_text("passed")
    assert read_reward(tmp_path)[2] == "reward.txt holds 'passed', not a number"


def _swe_repo(tmp_path: Path) -> tuple[Path, str]:
    repo = tmp_path / "proj"
    repo.mkdir()
    sh(repo, "init", "-q", "-b", "main")
    (repo / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    return repo, commit_all(repo, "init")


def test_swe_lines_load_with_json_text_test_ids_and_relative_repos(tmp_path: Path) -> None:
    repo, commit = _swe_repo(tmp_path)
    line = {
        "instance_id": "proj-1", "repo": "proj", "base_commit": commit, "problem_statement": "add subtracts",
        "FAIL_TO_PASS": json.dumps(["test_calc.py::test_add"]), "PASS_TO_PASS": [], "hints_text": "ignored",
    }  # fmt: skip
    (tmp_path / "set.jsonl").write_text(json.dumps(line) + "\n\n")
    task = load_swe_file(tmp_path / "set.jsonl").tasks[0]
    assert (task.id, task.repo, task.base_commit) == ("proj-1", repo.resolve(), commit)
    assert task.fail_to_pass == ("test_calc.py::test_add",)
    assert task.test_command.endswith("'test_calc.py::test_add'")
    assert task.hidden == ((tmp_path / "set.jsonl").resolve(),)


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"base_commit": "not-a-sha"}, ":1: base_commit: Value error, expected a commit id"),
        ({"FAIL_TO_PASS": "[oops"}, ":1: FAIL_TO_PASS: Value error, expected a list of test ids"),
        ({"repo": "missing"}, ":1: repo: missing is not a local git repository"),
        ({"problem_statement": ""}, ":1: problem_statement:"),
        ({"FAIL_TO_PASS": [], "PASS_TO_PASS": []}, "both empty"),
        ({"instance_id": "../x"}, "cannot be a task id"),
    ],
)
def test_a_bad_swe_line_names_the_file_line_and_field(
    tmp_path: Path, patch: dict[str, object], message: str
) -> None:
    _repo, commit = _swe_repo(tmp_path)
    line = {"instance_id": "p", "repo": "proj", "base_commit": commit, "problem_statement": "x",
            "FAIL_TO_PASS": ["t::a"], **patch}  # fmt: skip
    (tmp_path / "set.jsonl").write_text(json.dumps(line) + "\n")
    with pytest.raises(EvalError) as caught:
        load_swe_file(tmp_path / "set.jsonl")
    assert message in str(caught.value) and "set.jsonl" in str(caught.value)


def test_every_listed_test_must_pass_for_a_swe_task_to_resolve(tmp_path: Path) -> None:
    output = "PASSED t.py::a\nFAILED t.py::b - assert 1 == 2\nPASSED t.py::c[x-1]\n"
    assert parse_outcomes(output) == {"t.py::a": "PASSED", "t.py::b": "FAILED", "t.py::c[x-1]": "PASSED"}
    _repo, commit = _swe_repo(tmp_path)
    line = {"instance_id": "p", "repo": "proj", "base_commit": commit, "problem_statement": "x",
            "FAIL_TO_PASS": ["t.py::a"], "PASS_TO_PASS": ["t.py::c[x-1]", "t.py::d"]}  # fmt: skip
    (tmp_path / "set.jsonl").write_text(json.dumps(line) + "\n")
    task = load_swe_file(tmp_path / "set.jsonl").tasks[0]
    assert swe_resolved(task, output) == (
        False,
        {"t.py::a": "PASSED", "t.py::c[x-1]": "PASSED", "t.py::d": "missing"},
    )
    assert swe_resolved(task, output + "PASSED t.py::d\n")[0]
