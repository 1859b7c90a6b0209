"""Headless ``paragents review`` (``fanout --review``), ``split`` and ``decisions``: the merged report
as JSON, the patch output and each exit code."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from paragents.cli import main
from paragents.llm.replay import ThreadedReplayServer
from tests.fanout.team.findings import SQL, findings
from tests.runtime_env import reply


@pytest.fixture
def changed(repo: Path) -> Path:
    (repo / "app.py").write_text('def hello(name):\n    return f"SELECT * FROM users WHERE name = {name}"\n')
    return repo


def review(replay: ThreadedReplayServer, repo: Path, *extra: str) -> int:
    return main(["review", "--dir", str(repo), "--endpoint", replay.base_url, "--model", "m", *extra])


def test_review_security_test_output_json_prints_one_merged_report(
    changed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ThreadedReplayServer(models=["m"]) as replay:
        replay.add(reply(findings(SQL)), session="review-security")
        replay.add(
            reply(findings({**SQL, "title": "SQL query built from user input!"})), session="review-test"
        )
        code = review(replay, changed, "security,test", "--output", "json")
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["exit_code"] == 0 and doc["specialists"] == ["security", "test"] and doc["failed"] == {}
    [finding] = doc["findings"]
    assert finding["specialists"] == ["security", "test"] and finding["file"] == "app.py"


@pytest.mark.parametrize(
    ("answers", "expected"),
    [
        ({"security": ["prose", "prose"]}, 3),
        ({"security": [findings(SQL)], "test": ["prose", "prose"]}, 4),
    ],
)
def test_review_exit_codes_for_bad_answers(
    changed: Path, answers: dict[str, list[str]], expected: int
) -> None:
    with ThreadedReplayServer(models=["m"]) as replay:
        for name, texts in answers.items():
            replay.add([reply(t) for t in texts], session=f"review-{name}")
        assert review(replay, changed, ",".join(answers), "--output", "json") == expected


def test_review_exit_codes_for_bad_input(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with ThreadedReplayServer(models=["m"]) as replay:
        assert review(replay, repo, "security") == 5  # nothing to review
        assert review(replay, repo, "nope") == 2
        assert not replay.requests
    assert "unknown specialist nope" in capsys.readouterr().err


def test_output_patch_prints_a_checked_patch_or_exit_6(
    changed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    diff = "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n-readme\n+read me\n"
    with ThreadedReplayServer(models=["m"]) as replay:
        replay.add(reply(findings(SQL)), session="review-security")
        replay.add(reply(f"```diff\n{diff}```"), session="review-patch")
        assert review(replay, changed, "security", "--output", "patch") == 0
        assert capsys.readouterr().out == diff
        replay.add(reply(findings(SQL)), session="review-security-2")
        replay.add(reply(f"```diff\n{diff.replace('-readme', '-gone')}```"), session="review-patch-2")
        assert review(replay, changed, "security", "--output", "patch") == 6
        replay.add(reply(findings()), session="review-security-3")
        assert review(replay, changed, "security", "--output", "patch") == 5  # no findings, no patch


def test_split_with_a_cycle_exits_3(repo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    plan = {
        "subtasks": [
            {"id": "a", "title": "a", "prompt": "a", "paths": ["a.py"], "depends_on": ["b"]},
            {"id": "b", "title": "b", "prompt": "b", "paths": ["b.py"], "depends_on": ["a"]},
        ]
    }
    with ThreadedReplayServer(models=["m"]) as replay:
        replay.add(reply(json.dumps(plan)), session="planner")
        code = main(
            ["split", "--yes", "--dir", str(repo), "--endpoint", replay.base_url, "--model", "m", "x"]
        )
    assert code == 3
    assert "cycle a -> b -> a" in capsys.readouterr().err


def test_decisions_add_and_list(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["decisions", "add", "--dir", str(tmp_path), "Errors are plain text, never markup"]) == 0
    assert main(["decisions", "list", "--dir", str(tmp_path), "--search", "markup", "--json"]) == 0
    out = capsys.readouterr().out.splitlines()[-1]
    [decision] = json.loads(out)
    assert decision["text"] == "Errors are plain text, never markup"
    assert decision["author"] == "paragents decisions add"


def test_split_headless_runs_an_approved_plan_into_one_integration_lane(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = {"subtasks": [{"id": "docs", "title": "docs", "prompt": "write docs", "paths": ["docs/"]}]}
    write = {
        "id": "w",
        "name": "write_file",
        "arguments": json.dumps({"path": "docs/a.md", "content": "# a\n"}),
    }
    args = ["split", "--dir", str(repo), "--model", "m", "--mode", "acceptEdits", "document it"]
    with ThreadedReplayServer(models=["m"]) as replay:
        replay.add(reply(json.dumps(plan)), session="planner")
        assert main([*args[:1], "--endpoint", replay.base_url, *args[1:]]) == 2  # no --yes, no terminal
        assert "not approved (pass --yes" in capsys.readouterr().err
        replay.add(reply(json.dumps(plan)), session="planner-2")
        replay.add([reply(tool_calls=[write]), reply("done")], session="split-1-docs")
        code = main([*args[:1], "--yes", "--output", "json", "--endpoint", replay.base_url, *args[1:]])
    assert code == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["results"][0]["status"] == "merged" and doc["integration"]["branch"] == "paragents/split-1"
    assert "+# a" in doc["diff"] and not (repo / "docs").exists()


def test_fanout_review_and_split_are_the_same_commands(
    changed: Path, repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`paragents fanout --review LIST` and `paragents fanout --split` (the issue's spelling) run the
    review and the split: one merged report, and a refused cycle."""
    with ThreadedReplayServer(models=["m"]) as replay:
        replay.add(reply(findings(SQL)), session="review-security")
        replay.add(reply(findings(SQL)), session="review-test")
        argv = ["fanout", "--review", "security,test", "--output", "json", "--dir", str(changed)]
        assert main([*argv, "--endpoint", replay.base_url, "--model", "m"]) == 0
    doc = json.loads(capsys.readouterr().out)
    [finding] = doc["findings"]
    assert finding["specialists"] == ["security", "test"]
    plan = {
        "subtasks": [
            {"id": "a", "title": "a", "prompt": "a", "paths": ["a.py"], "depends_on": ["b"]},
            {"id": "b", "title": "b", "prompt": "b", "paths": ["b.py"], "depends_on": ["a"]},
        ]
    }
    with ThreadedReplayServer(models=["m"]) as replay:
        replay.add(reply(json.dumps(plan)), session="planner")
        argv = ["fanout", "--split", "--yes", "--dir", str(repo), "--endpoint", replay.base_url]
        assert main([*argv, "--model", "m", "x"]) == 3
    assert "cycle a -> b -> a" in capsys.readouterr().err
