"""A task in Harbor's newer task.toml schema (1.3: ``[task]``, ``artifacts``, phase ``network_mode``,
``[verifier.env]``, ``[solution.env]``) runs: it loads, validates (base fails, oracle passes with its
solution environment) and is resolved by a trial that writes the file where the instruction says."""

from __future__ import annotations

import json
from pathlib import Path

from paragents.eval.loader import load_tasks
from paragents.eval.runner import run_eval
from paragents.eval.validate import validate_tasks
from paragents.llm.replay import ReplayServer, ScriptedResponse
from tests.eval.conftest import DATA, needs_bwrap, scripted_options

pytestmark = needs_bwrap
HARBOR = DATA / "harbor"


def test_the_schema_1_3_fields_are_read() -> None:
    task = load_tasks(str(HARBOR)).get("hello-world")
    assert task.workdir == "/app" and task.files == {}
    assert task.allow_internet is False  # [verifier] network_mode = "no-network" overrides the baseline
    assert task.verifier_env == {"EXPECTED": "Hello, world!"}
    assert task.solution_env == {"GREETING": "Hello, world!"}
    assert task.notes[0].startswith("environment/Dockerfile not built: ran in a local lane at /app")
    assert "base image ubuntu:24.04 not used; 1 RUN step(s) not run" in task.notes[0]


async def test_it_validates_and_a_trial_resolves_it(solver: ReplayServer, tmp_path: Path) -> None:
    tasks = load_tasks(str(HARBOR))
    (check,) = await validate_tasks(tasks, tmp_path / "validate")
    assert check.ok, check.problems
    write = {"path": "hello.txt", "content": "Hello, world!\n"}
    solver.add(
        [
            ScriptedResponse.from_message(
                tool_calls=[{"id": "c1", "name": "write_file", "arguments": json.dumps(write)}]
            ),
            ScriptedResponse.from_message("Created it."),
        ],
        session="hello-world.t1.1",
    )
    results = await run_eval(scripted_options(tasks, tmp_path / "run", solver, queue_replies=False))
    (trial,) = results.trials
    assert trial.resolved and trial.verifier.tail.strip().endswith("ok")
    first = next(r for r in solver.requests if r.session == "hello-world.t1.1")
    prompt = first.body_json["messages"][-1]["content"]
    assert "Create a file at `/app/hello.txt`" in prompt
    assert "here that directory is your current working directory" in prompt
    assert results.manifest.task_notes["hello-world"][0].startswith("environment/Dockerfile not built")
