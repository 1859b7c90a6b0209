"""``eval run --on k8s`` against the loopback API server (tests/backends/kube_server.py: the real
protocol the client speaks, NOT a cluster; docs/remote.md says what that proves): a trial's lane is a
Pod of ``lanes.image`` with the task's working directory mounted from the workspace volume and
``/tests`` and ``/logs`` as emptyDir volumes; the agent's calls and the hidden tests run there through
the exec websocket; the Pod is deleted at the end; a replay scores the same."""

from __future__ import annotations

import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from paragents.eval.errors import EvalError
from paragents.eval.loader import load_tasks
from paragents.eval.replay import replay_run
from paragents.eval.runner import run_eval
from paragents.llm.replay import ReplayServer
from tests.backends.kube_server import LoopbackApiServer
from tests.eval.conftest import scripted_options
from tests.eval.placed import harbor_task, solve

pytestmark = pytest.mark.skipif(
    shutil.which("bwrap") is None, reason="the loopback server runs pods with bwrap"
)


@pytest.fixture
async def api() -> AsyncIterator[LoopbackApiServer]:
    server = LoopbackApiServer("loopback-token-ev01")
    await server.start()
    yield server
    await server.close()


async def test_a_trial_runs_in_a_pod_and_its_tests_run_there(
    solver: ReplayServer, api: LoopbackApiServer, tmp_path: Path
) -> None:
    harbor_task(tmp_path / "tasks", "fix-calc", "python:3.11-slim")
    tasks = load_tasks(str(tmp_path / "tasks"))
    solve(solver, "fix-calc.t1.1")
    kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
    lanes: dict[str, Any] = {"image": "lane-image:1", "kubernetes": {"kubeconfig": str(kubeconfig)}}
    options = scripted_options(tasks, tmp_path / "run", solver, queue_replies=False)
    options.on, options.lanes = "k8s", lanes
    results = await run_eval(options)

    (trial,) = results.trials
    assert trial.status == "completed" and trial.resolved, (trial.error, trial.verifier)
    note = results.manifest.task_notes["fix-calc"][0]
    assert note.startswith("the trial ran in a Pod of lanes.image lane-image:1, its lane at /app")
    created = [p for (method, p) in api.requests if method == "POST" and p.endswith("/pods")]
    assert len(created) == 1 and not api.pods  # one Pod, deleted with the lane
    calls = [r for r in solver.requests if r.session == "fix-calc.t1.1"]
    assert "/workspace" in calls[2].body_json["messages"][-1]["content"]  # the agent's command: in the Pod
    log = (tmp_path / "run" / "trials" / "fix-calc.t1.1" / "verifier.log").read_text()
    assert "cwd: /app" in log and "tests: " in log  # /app (the workspace volume again) and /tests
    assert (
        tmp_path / "run" / "trials" / "fix-calc.t1.1" / "logs" / "verifier" / "reward.txt"
    ).read_text() == "1\n"
    patch = (tmp_path / "run" / "trials" / "fix-calc.t1.1" / "diff.patch").read_text()
    assert "+    return a + b" in patch

    outcome = await replay_run(tmp_path / "run", tmp_path / "replayed", lanes=lanes)
    assert outcome.identical, outcome.differences
    assert not api.pods


async def test_a_cluster_that_does_not_answer_stops_the_run_with_one_error(
    solver: ReplayServer, api: LoopbackApiServer, tmp_path: Path
) -> None:
    harbor_task(tmp_path / "tasks", "fix-calc", "python:3.11-slim")
    kubeconfig = api.kubeconfig(tmp_path / "kubeconfig")
    await api.stop()  # the API server is gone
    options = scripted_options(
        load_tasks(str(tmp_path / "tasks")), tmp_path / "run", solver, queue_replies=False
    )
    options.on = "k8s"
    options.lanes = {"image": "lane-image:1", "kubernetes": {"kubeconfig": str(kubeconfig)}}
    with pytest.raises(EvalError) as caught:
        await run_eval(options)
    assert caught.value.exit_code == 2 and str(caught.value).startswith(
        "--on k8s: the cluster of the kubeconfig"
    )
    assert "\n" not in str(caught.value) and not (tmp_path / "run").exists()
