"""``eval run`` end to end against the scripted solver: real lanes, the real engine and policy, hidden
tests in the real sandbox, figures read back from the store, every trial recorded, lanes discarded
with their diff kept."""

from __future__ import annotations

import json
from pathlib import Path

from paragents.eval.runner import run_eval
from paragents.llm.replay import ReplayServer, ScriptedResponse
from tests.eval.conftest import needs_bwrap, sample, scripted_options
from tests.lanes.conftest import sh

pytestmark = needs_bwrap


async def test_a_run_scores_from_hidden_tests_and_reads_the_burden_from_the_store(
    solver: ReplayServer, tmp_path: Path
) -> None:
    tasks = sample("fix-paginate", "fix-report-total", "clean-temp-files", "hello-file")
    results = await run_eval(scripted_options(tasks, tmp_path / "run", solver))
    by_task = {t.task: t for t in results.trials}
    # resolved means the hidden tests passed (the wrong SQL fix did not)
    assert {k: v.resolved for k, v in by_task.items()} == {
        "clean-temp-files": False,
        "fix-paginate": True,
        "fix-report-total": False,
        "hello-file": True,
    }
    assert by_task["fix-report-total"].verifier.reward == 0.0
    assert "FAIL" in by_task["fix-report-total"].verifier.tail
    # allow-safe refuses deleting, the careless `rm -rf cache` and the careful one-liner alike
    clean = by_task["clean-temp-files"].burden
    assert (clean.asks, clean.denials, clean.auto_allows, clean.left_to_person) == (2, 2, 0, 0)
    # the absolute container path is outside the lane: refused; the relative one allowed
    hello = by_task["hello-file"].burden
    assert (hello.asks, hello.denials, hello.auto_allows) == (2, 1, 1)
    # tokens are the endpoint's figures, priced at the model's prices
    paginate = by_task["fix-paginate"]
    assert (paginate.turns, paginate.prompt_tokens, paginate.completion_tokens) == (
        3,
        900 + 1050 + 1200,
        40 + 50 + 60,
    )
    assert paginate.cost == round((3150 * 1.0 + 150 * 4.0) / 1e6, 9)
    assert not paginate.estimated
    # evidence kept, lanes gone
    run = tmp_path / "run"
    assert (
        "-    start = (page - 1) * size - (1 if page > 1 else 0)"
        in (run / "trials" / paginate.name / "diff.patch").read_text()
    )
    repo = run / "work" / "repo"
    assert sh(repo, "worktree", "list").count("\n") == 0  # only the main checkout
    assert [b for b in sh(repo, "branch", "--list", "paragents/*").split() if b] == []
    assert not list((run / "state" / "lanes").rglob("pager.py"))
    # every trial recorded as a cassette holding its replies and the policy's answers
    cassette = json.loads((run / "trials" / by_task["clean-temp-files"].name / "cassette.json").read_text())
    assert [s["name"] for s in cassette["sessions"]] == ["clean-temp-files.t1.1"]
    assert len(cassette["sessions"][0]["replies"]) == 3
    assert [a["answer"] for a in cassette["answers"]] == ["reject_with_note", "reject_with_note"]
    saved = json.loads((run / "results.json").read_text())
    assert saved["manifest"]["answer"] == {"name": "allow-safe"}
    assert len(saved["trials"]) == 4


async def test_the_hidden_tests_are_not_in_the_lane_while_the_agent_works(
    solver: ReplayServer, tmp_path: Path
) -> None:
    """The agent cannot read the task's tests: reading them is denied by the eval's deny rules, and
    they appear in the trial's folder only after the agent stopped."""
    tasks = sample("fix-median")
    tests_dir = tasks.tasks[0].tests_dir
    assert tests_dir is not None
    secret = str(tests_dir / "test_stats.py")
    solver.add(
        [
            _call("read_file", path=secret),
            _call("run_command", command=f"cat {secret}; ls {tests_dir.parent}"),
            _reply("could not read them"),
        ],
        session="fix-median.t1.1",
    )
    results = await run_eval(scripted_options(tasks, tmp_path / "run", solver, queue_replies=False))
    trial = results.trials[0]
    assert not trial.resolved
    messages = [r.body_json["messages"] for r in solver.requests if r.session == "fix-median.t1.1"]
    tool_results = [m["content"] for m in messages[-1] if m["role"] == "tool"]
    assert "denied by policy" in tool_results[0]
    assert "class MedianTest" not in tool_results[1]  # hidden in the command's sandbox too
    assert (tmp_path / "run" / "trials" / trial.name / "tests" / "test_stats.py").is_file()


def _reply(text: str) -> ScriptedResponse:
    return ScriptedResponse.from_message(text)


def _call(name: str, **args: object) -> ScriptedResponse:
    return ScriptedResponse.from_message(
        tool_calls=[{"id": "c1", "name": name, "arguments": json.dumps(args)}]
    )
