"""``eval run --on container`` through the real Docker engine (tests/backends/engine.py starts a
private dockerd; in CI, PARAGENTS_CI=1, the tests fail rather than skip without one): a Harbor task's
``environment/Dockerfile`` ``FROM`` the offline test image is built and is the trial's image, the
agent's tool calls run in its container, the hidden tests are copied in only after the agent stopped
and run there (``/app``, read-only ``/tests``, ``/logs``), the diff is kept, no container is left,
and a replay scores the same. A task whose base image is not on the engine runs in a local lane and
its notes say so."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

from paragents.backends.container import REPO_LABEL
from paragents.config import LaneSettings
from paragents.eval.loader import load_tasks
from paragents.eval.remote import PlacedBackend
from paragents.eval.replay import replay_run
from paragents.eval.report import write_reports
from paragents.eval.runner import run_eval
from paragents.lanes.repo import project_hash
from paragents.llm.replay import ReplayServer
from tests.backends.engine import Engine
from tests.eval.conftest import needs_bwrap, scripted_options
from tests.eval.placed import harbor_task, solve


def containers(engine: Engine) -> set[str]:
    done = subprocess.run(
        ["docker", "ps", "-aq"], env={"DOCKER_HOST": engine.host, "PATH": "/usr/local/bin:/usr/bin:/bin"},
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    return set(done.stdout.split())


def lanes_of(engine: Engine) -> dict[str, Any]:
    return {"container": {"host": engine.host, "connect_timeout": 5}}


async def test_a_trial_runs_in_a_container_of_the_built_image_and_replays(
    solver: ReplayServer, tmp_path: Path, docker_engine: Engine
) -> None:
    harbor_task(tmp_path / "tasks", "fix-calc", docker_engine.image)
    tasks = load_tasks(str(tmp_path / "tasks"))
    solve(solver, "fix-calc.t1.1")
    before = containers(docker_engine)
    options = scripted_options(tasks, tmp_path / "run", solver, queue_replies=False)
    options.on, options.lanes = "container", lanes_of(docker_engine)
    results = await run_eval(options)

    (trial,) = results.trials
    assert trial.status == "completed" and trial.resolved, (trial.error, trial.verifier)
    note = results.manifest.task_notes["fix-calc"][0]
    assert note.startswith("environment/Dockerfile built as paragents-eval:") and "build network none" in note
    # the agent's command ran in the container of the built image, in its workspace
    calls = [r for r in solver.requests if r.session == "fix-calc.t1.1"]
    tool_output = calls[2].body_json["messages"][-1]["content"]
    assert "made-at-build" in tool_output and "/workspace" in tool_output
    # the hidden tests ran in the container, from /app, with /tests owned by root and read-only
    log = (tmp_path / "run" / "trials" / "fix-calc.t1.1" / "verifier.log").read_text()
    assert "user: lane" in log and "cwd: /app" in log and "made-at-build" in log
    assert "tests: root 555 root 444" in log and "tests read-only" in log
    assert (
        tmp_path / "run" / "trials" / "fix-calc.t1.1" / "logs" / "verifier" / "reward.txt"
    ).read_text() == "1\n"
    # the diff is the evidence; the base commit was the image's /app (built.txt made by its RUN step)
    patch = (tmp_path / "run" / "trials" / "fix-calc.t1.1" / "diff.patch").read_text()
    assert "+    return a + b" in patch and "built.txt" not in patch
    assert containers(docker_engine) == before  # the trial's container is gone

    solve(solver, "unused")  # a replay has its own server: this one gets no more requests
    outcome = await replay_run(tmp_path / "run", tmp_path / "replayed", lanes=lanes_of(docker_engine))
    assert outcome.identical, outcome.differences
    assert outcome.results.trials[0].resolved
    assert containers(docker_engine) == before


@needs_bwrap
async def test_a_task_whose_base_image_is_missing_runs_in_a_local_lane_with_a_note(
    solver: ReplayServer, tmp_path: Path, docker_engine: Engine
) -> None:
    harbor_task(tmp_path / "tasks", "fix-calc", "paragents-no-such-image:1")
    tasks = load_tasks(str(tmp_path / "tasks"))
    solve(solver, "fix-calc.t1.1")
    options = scripted_options(tasks, tmp_path / "run", solver, queue_replies=False)
    options.on, options.lanes = "container", lanes_of(docker_engine)
    results = await run_eval(options)

    (trial,) = results.trials
    notes = results.manifest.task_notes["fix-calc"]
    assert notes[0] == (
        "--on container: the base image paragents-no-such-image:1 is not on the Docker engine and no image "
        "registry is reachable from here, so environment/Dockerfile was not built: ran in a local lane"
    )
    assert notes[1].startswith("environment/Dockerfile not built: ran in a local lane at /app")
    log = (tmp_path / "run" / "trials" / "fix-calc.t1.1" / "verifier.log").read_text()
    assert "user: lane" not in log and "built.txt: No such file" in log  # the local sandbox: no image
    assert trial.resolved  # the fix itself is judged the same
    md, _page = write_reports(results, tmp_path / "run")
    assert "paragents-no-such-image:1 is not on the Docker engine" in md.read_text()


async def test_the_end_of_a_run_removes_containers_a_stopped_run_left(
    tmp_path: Path, docker_engine: Engine
) -> None:
    repo = tmp_path / "work" / "repo"
    repo.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    env = {"DOCKER_HOST": docker_engine.host, "PATH": "/usr/local/bin:/usr/bin:/bin"}
    label = f"{REPO_LABEL}={project_hash(repo)}"
    left = subprocess.run(
        ["docker", "create", "--label", label, "--network", "none", docker_engine.image, "true"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    other = subprocess.run(
        ["docker", "create", "--network", "none", docker_engine.image, "true"],
        env=env, capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    try:
        backend = PlacedBackend("container", LaneSettings.model_validate(lanes_of(docker_engine)))
        await backend.finish(repo)
        now = containers(docker_engine)
        assert left[:12] not in now and other[:12] in now  # only the eval repository's
    finally:
        subprocess.run(["docker", "rm", "-f", left, other], env=env, capture_output=True, check=False)
