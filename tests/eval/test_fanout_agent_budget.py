"""Trial variants: a best-of-N fan-out per trial (the fan-out's store rows and evidence order pick the
candidate the hidden tests judge), an external ACP agent as the target (re-scored from its evidence on
replay: no cassette can play an agent), and a budget cap that pauses a trial (answered ``stop`` and
counted in the burden)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from paragents.eval.loader import load_tasks
from paragents.eval.replay import replay_run
from paragents.eval.runner import run_eval
from paragents.eval.targets import Target
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.store import Store
from tests.acp.conftest import FAKE_AGENT
from tests.eval.conftest import needs_bwrap, sample, scripted_options
from tests.eval.solver import MEDIAN

pytestmark = needs_bwrap


def call(name: str, **args: object) -> ScriptedResponse:
    return ScriptedResponse.from_message(
        tool_calls=[{"id": "c1", "name": name, "arguments": json.dumps(args)}]
    )


async def test_a_fanout_trial_tests_the_candidate_first_in_evidence_order(
    solver: ReplayServer, tmp_path: Path
) -> None:
    solver.add([call("write_file", path="stats.py", content=MEDIAN), ScriptedResponse.from_message("done")],
               session="fix-median.t1.1c1")  # fmt: skip
    solver.add([ScriptedResponse.from_message("I cannot do this.")], session="fix-median.t1.1c2")
    run = tmp_path / "run"
    results = await run_eval(
        scripted_options(sample("fix-median"), run, solver, fanout=2, queue_replies=False)
    )
    (trial,) = results.trials
    assert trial.fanout == 2 and trial.chosen == 1 and trial.resolved
    assert (run / "trials" / trial.name / "diff.c1.patch").read_text().count("+") > 2
    assert (run / "trials" / trial.name / "diff.c2.patch").read_text() == ""
    assert trial.turns == 3  # both candidates' requests
    store = await Store.open(run / "state" / "t1.db")
    try:
        (group,) = await store.fanout.list_groups()
        assert (group.kind, group.name, group.state) == ("best_of", "fix-median.t1.1", "finished")
        assert [c.session_name for c in group.candidates] == ["fix-median.t1.1c1", "fix-median.t1.1c2"]
        assert group.candidates[1].patch == ""
    finally:
        await store.close()


def agent_task(root: Path) -> Path:
    folder = root / "tasks" / "hello-agent"
    (folder / "tests").mkdir(parents=True)
    (folder / "task.toml").write_text('version = "1.0"\n[environment]\nallow_internet = false\n')
    (folder / "instruction.md").write_text("write hello.txt Hello, world!\n")  # the fake agent's script
    (folder / "tests" / "test.sh").write_text(
        "mkdir -p /logs/verifier\n"
        "if [ \"$(cat /app/hello.txt)\" = 'Hello, world!' ]; then r=1; else r=0; fi\n"
        "echo $r > /logs/verifier/reward.txt\n"
    )
    return folder.parent


async def test_an_acp_agent_target_runs_and_replays_from_its_evidence(
    solver: ReplayServer, tmp_path: Path
) -> None:
    tasks = load_tasks(str(agent_task(tmp_path)))
    options = scripted_options(tasks, tmp_path / "run", solver, queue_replies=False)
    options.targets = [Target("agent:fake", "agent", "fake", 1)]
    options.endpoints = {}
    options.shaping = {
        **options.shaping,
        "agents": {"fake": {"command": sys.executable, "args": [str(FAKE_AGENT)]}},
    }
    results = await run_eval(options)
    (trial,) = results.trials
    assert trial.status == "completed" and trial.resolved, trial
    assert trial.cassette is None  # an agent's own model traffic is not paragents' to record
    assert (trial.burden.asks, trial.burden.auto_allows) == (1, 1)  # the agent's edit, allowed by allow-safe
    outcome = await replay_run(tmp_path / "run", tmp_path / "replay")
    assert outcome.identical
    assert [t.replayed for t in outcome.results.trials] == ["evidence"]


async def test_a_budget_cap_stops_the_trial_and_counts_as_a_pause(
    solver: ReplayServer, tmp_path: Path
) -> None:
    options = scripted_options(sample("fix-paginate"), tmp_path / "run", solver, max_budget="2500")
    results = await run_eval(options)
    (trial,) = results.trials
    assert trial.status == "failed" and not trial.resolved
    assert "budget" in (trial.error or "")
    assert (trial.burden.budget_pauses, trial.burden.loop_guard_trips) == (1, 0)
    assert trial.turns < 3  # stopped before the request that would cross the cap
    assert solver.pending("fix-paginate.t1.1") == 3 - trial.turns
