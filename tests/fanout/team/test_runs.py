"""Reviews and splits are kept as fan-out evidence: ``paragents runs list`` shows them with their kind
and ``paragents runs show ID`` reads back the specialists' answers, the merged report and its patch,
or the plan, each subtask's lane and outcome and the integration lane."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from paragents.cli import main
from paragents.fanout.recording import record_choice
from paragents.fanout.review import ReviewError, ReviewRequest, run_review
from paragents.fanout.split import Plan, Schedule, run_split
from paragents.llm.replay import ReplayServer, ThreadedReplayServer
from tests.fanout.team.findings import SQL, findings
from tests.runtime_env import MakeRuntime, reply

DIFF = "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n-readme\n+read me\n"


@pytest.fixture
def changed(repo: Path) -> Path:
    (repo / "app.py").write_text('def hello(name):\n    return f"SELECT * FROM users WHERE name = {name}"\n')
    return repo


def runs(capsys: pytest.CaptureFixture[str], *argv: str) -> Any:
    capsys.readouterr()
    assert main(["runs", *argv]) == 0
    out = capsys.readouterr().out
    return json.loads(out) if "--json" in argv else out


def test_a_review_run_is_listed_and_shown_with_its_findings_and_patch(
    changed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ThreadedReplayServer(models=["m"]) as replay:
        replay.add(reply(findings(SQL)), session="review-security")
        replay.add([reply("prose"), reply("still prose")], session="review-test")
        replay.add(reply(f"```diff\n{DIFF}```"), session="review-patch")
        argv = ["fanout", "--review", "security,test", "--patch", "--output", "json", "--dir", str(changed)]
        assert main([*argv, "--endpoint", replay.base_url, "--model", "m"]) == 4  # test failed
    [listed] = runs(capsys, "list", "--dir", str(changed), "--json")
    assert listed["kind"] == "review" and listed["state"] == "done"
    assert listed["prompt"] == "review by security, test of git diff HEAD" and listed["base_ref"] == "HEAD"
    assert "review " in runs(capsys, "list", "--dir", str(changed))

    shown = runs(capsys, "show", listed["id"][:8], "--dir", str(changed), "--json")
    assert shown["kind"] == "review"
    assert shown["group"]["settings"]["specialists"] == ["security", "test"]
    security, test, patcher = shown["candidates"]
    assert security["session"] == "review-security" and security["state"] == "done"
    assert security["evidence"]["findings"][0]["title"] == SQL["title"]
    assert test["state"] == "failed" and "invalid answer" in test["evidence"]["error"]
    assert patcher["evidence"]["role"] == "patch" and patcher["patch"] == DIFF
    [finding] = shown["findings"]
    assert finding["file"] == "app.py" and finding["specialists"] == ["security"]
    assert shown["report"]["patch"] == DIFF and "invalid answer" in shown["report"]["failed"]["test"]

    text = runs(capsys, "show", listed["id"], "--dir", str(changed))
    assert "[high] app.py:2 SQL query built from user input (security)" in text
    assert "review-test  [failed]" in text and "your choice: -" in text


async def test_the_users_answer_to_the_patch_is_the_review_groups_choice(
    server: ReplayServer, runtime: MakeRuntime, changed: Path
) -> None:
    rt, _ = await runtime(changed)
    server.add(reply(findings(SQL)), session="review-security")
    report = await run_review(rt, ReviewRequest(["security"]))
    assert report.group_id is not None
    await record_choice(rt.store.fanout, report.group_id, "apply patch", state="applied", applied=True)
    group = await rt.store.fanout.get_group(report.group_id)
    assert group is not None and group.state == "applied"
    assert group.choice is not None and group.choice["apply patch"]["applied"] is True


async def test_a_review_that_failed_is_kept_failed_with_the_reason(
    server: ReplayServer, runtime: MakeRuntime, changed: Path
) -> None:
    rt, _ = await runtime(changed)
    server.add([reply("prose"), reply("prose")], session="review-security")
    with pytest.raises(ReviewError):
        await run_review(rt, ReviewRequest(["security"]))
    [group] = await rt.store.fanout.list_groups()
    assert group.kind == "review" and group.state == "failed" and group.finished_at is not None
    assert group.settings["exit_code"] == 3 and "invalid answer" in group.settings["error"]


def test_a_split_run_is_listed_and_shown_with_its_plan_subtasks_and_integration_lane(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = {
        "subtasks": [
            {"id": "docs", "title": "write docs", "prompt": "write docs", "paths": ["docs/"]},
            {"id": "api", "title": "api", "prompt": "api", "paths": ["api.py"], "depends_on": ["docs"]},
            {"id": "ui", "title": "ui", "prompt": "ui", "paths": ["ui.py"], "depends_on": ["api"]},
        ]
    }
    write = {
        "id": "w",
        "name": "write_file",
        "arguments": json.dumps({"path": "docs/a.md", "content": "# a\n"}),
    }
    argv = ["--dir", str(repo), "--model", "m", "--mode", "acceptEdits", "--yes", "document it"]
    with ThreadedReplayServer(models=["m"]) as replay:
        replay.add(reply(json.dumps(plan)), session="planner")
        replay.add([reply(tool_calls=[write]), reply("done")], session="split-1-docs")
        # nothing scripted for api: the endpoint answers 500 and the subtask fails
        assert main(["fanout", "--split", "--endpoint", replay.base_url, *argv]) == 4
    [listed] = runs(capsys, "list", "--dir", str(repo), "--json")
    assert listed["kind"] == "split" and listed["prompt"] == "document it" and listed["state"] == "failed"

    shown = runs(capsys, "show", listed["id"], "--dir", str(repo), "--json")
    assert [t["id"] for t in shown["plan"]["subtasks"]] == ["docs", "api", "ui"]
    assert shown["schedule"]["after"] == {"docs": [], "api": ["docs"], "ui": ["api"]}
    docs, api, ui = shown["candidates"]
    assert docs["state"] == "merged" and docs["session"] == "split-1-docs"
    assert docs["lane"] == "split-1-docs" and docs["branch"] and docs["evidence"]["paths"] == ["docs/"]
    assert api["state"] == "failed" and api["evidence"]["subtask"] == "api"
    assert (
        ui["state"] == "skipped" and ui["session_id"] is None and ui["evidence"]["detail"] == "waits on api"
    )
    assert shown["integration"]["lane"] == "split-1" and shown["integration"]["branch"] == "paragents/split-1"
    assert shown["choice"]["approve plan"]["action"] == "approve plan"

    text = runs(capsys, "show", listed["id"], "--dir", str(repo))
    assert "docs: write docs [docs/] depends on -" in text and "1. docs  [merged]" in text
    assert "integration lane split-1 (branch paragents/split-1)" in text


async def test_a_refused_plan_is_kept_with_the_refusal(
    server: ReplayServer, runtime: MakeRuntime, repo: Path
) -> None:
    rt, _ = await runtime(repo)
    plan = {"subtasks": [{"id": "a", "title": "a", "prompt": "a", "paths": ["a.py"]}]}
    server.add(reply(json.dumps(plan)), session="planner")

    async def no(plan: Plan, order: Schedule) -> bool:
        return False

    assert await run_split(rt, "build it", no) is None
    [group] = await rt.store.fanout.list_groups()
    assert group.kind == "split" and group.state == "refused" and group.candidates == ()
    assert group.settings["plan"] == plan | {"subtasks": [plan["subtasks"][0] | {"depends_on": []}]}
    assert group.choice is not None and "refuse plan" in group.choice


def test_runs_show_of_an_unknown_group_is_a_usage_error_exit_2(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["runs", "show", "nosuch", "--dir", str(repo)]) == 2
    assert "no fan-out group 'nosuch'" in capsys.readouterr().err
