"""Reproducible: a recorded run replays without any model and scores the same; a change that changes an
outcome shows up as a score difference (exit code 9). The committed run of the sample set
(``tests/eval/data/sample-run``, ``scripts/eval-record-sample``) is replayed here, so CI catches a
change to the agent loop, the policy, the tools or a sample task that changes a score."""

from __future__ import annotations

import shutil
from pathlib import Path

from paragents.cli import main
from paragents.eval.errors import EXIT_REPLAY
from paragents.eval.loader import load_tasks
from paragents.eval.replay import replay_run
from paragents.eval.results import load_results
from paragents.eval.runner import run_eval
from paragents.eval.scores import score_run
from paragents.llm.replay import ReplayServer, ScriptedResponse
from tests.eval.conftest import DATA, needs_bwrap, scripted_options

pytestmark = needs_bwrap
SAMPLE_RUN = DATA / "sample-run"


async def test_the_committed_sample_run_replays_with_identical_scores(tmp_path: Path) -> None:
    recorded = load_results(SAMPLE_RUN)
    assert len(recorded.trials) == 16 and recorded.manifest.tasks == "sample"
    outcome = await replay_run(SAMPLE_RUN, tmp_path / "replay")
    assert outcome.differences == {}, outcome.differences
    assert [s.row() | {"wall_seconds": 0} for s in score_run(outcome.results)] == [
        s.row() | {"wall_seconds": 0} for s in score_run(recorded)
    ]
    assert sum(t.resolved for t in outcome.results.trials) == 12
    assert outcome.results.manifest.replay_of == str(SAMPLE_RUN)


async def test_a_changed_hidden_test_changes_the_replayed_score(solver: ReplayServer, tmp_path: Path) -> None:
    tasks_dir = tmp_path / "tasks"
    for name in ("fix-median", "fix-paginate"):
        shutil.copytree(load_tasks("sample").get(name).source, tasks_dir / name)
    run = tmp_path / "run"
    recorded = await run_eval(scripted_options(load_tasks(str(tasks_dir)), run, solver))
    assert all(t.resolved for t in recorded.trials)
    same = await replay_run(run, tmp_path / "same")
    assert same.identical, same.differences
    test = tasks_dir / "fix-median" / "tests" / "test_stats.py"
    test.write_text(test.read_text().replace("2.5)", "2.75)"))  # the task now wants another answer
    changed = await replay_run(run, tmp_path / "changed")
    assert set(changed.differences) == {"fix-median.t1.1"}, changed.differences
    assert changed.differences["fix-median.t1.1"]["resolved"] == (True, False)


def test_the_cli_exits_9_when_a_replay_differs(tmp_path: Path, capsys: object) -> None:
    """One trial of the committed run whose recorded score is altered: the replay scores it as it is."""
    run = tmp_path / "run"
    shutil.copytree(SAMPLE_RUN, run)
    results = load_results(run)
    trial = next(t for t in results.trials if t.task == "fix-median")
    manifest = results.manifest.model_copy(update={"task_ids": ["fix-median"]})
    altered = trial.model_copy(update={"resolved": not trial.resolved})
    results.model_copy(update={"manifest": manifest, "trials": [altered]}).save(run)
    code = main(["eval", "run", "--replay", str(run), "--out", str(tmp_path / "again")])
    assert code == EXIT_REPLAY
    err = capsys.readouterr().err  # type: ignore[attr-defined]
    assert "fix-median.t1.1: resolved: False -> True" in err


async def test_a_replay_runs_at_the_recorded_path_and_puts_the_recording_back(
    solver: ReplayServer, tmp_path: Path
) -> None:
    """An endpoint without usage: tokens are estimated from requests that name the lane's path, so the
    replay runs where the recording ran (the recording set aside meanwhile) and estimates the same."""
    run = tmp_path / "run"
    tasks = load_tasks("sample").only(["fix-paginate"])
    options = scripted_options(tasks, run, solver, queue_replies=False)
    solver.add(
        [ScriptedResponse.from_message("I would change the slice start.")],  # no usage: estimated
        session="fix-paginate.t1.1",
    )
    recorded = await run_eval(options)
    assert recorded.trials[0].estimated and recorded.trials[0].prompt_tokens > 0
    before = (run / "results.json").read_text()
    outcome = await replay_run(run)
    assert outcome.identical, outcome.differences
    assert outcome.out == run / "replays" / "1" and (outcome.out / "results.json").is_file()
    assert (run / "results.json").read_text() == before  # the recording is back, unchanged
    assert sorted(p.name for p in tmp_path.iterdir()) == ["run"]  # nothing left set aside


async def test_a_trial_that_ran_into_its_timeout_replays_without_waiting_it_out(
    solver: ReplayServer, tmp_path: Path
) -> None:
    """The endpoint streamed part of a reply, then went quiet until the agent's timeout cut the turn.
    The replay serves the same part, sees the recorded stream end, and ends the trial as the same
    timeout at once."""
    tasks_dir = tmp_path / "tasks"
    shutil.copytree(load_tasks("sample").get("fix-median").source, tasks_dir / "slow")
    toml = tasks_dir / "slow" / "task.toml"
    toml.write_text(toml.read_text().replace("timeout_sec = 300.0", "timeout_sec = 20.0"))
    hanging = ScriptedResponse.from_message("Let me think about the median", done=False)
    hanging.hang = True
    solver.add([hanging], session="slow.t1.1")
    run = tmp_path / "run"
    recorded = await run_eval(scripted_options(load_tasks(str(tasks_dir)), run, solver, queue_replies=False))
    (trial,) = recorded.trials
    assert trial.status == "timeout" and trial.wall_seconds >= 20
    outcome = await replay_run(run)
    assert outcome.identical, outcome.differences
    (again,) = outcome.results.trials
    assert again.status == "timeout" and again.wall_seconds < 12
