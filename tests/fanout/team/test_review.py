"""Specialist review: read-only specialist sessions answer findings in a JSON schema, the report
merges identical findings, an invalid answer is retried once and then reported as failed, and a
patch is offered only when ``git apply --check`` accepts it."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.fanout.report import Finding, merge_findings
from paragents.fanout.review import ReviewError, ReviewRequest, run_review
from paragents.llm.replay import ReplayServer
from tests.fanout.team.findings import SQL, findings
from tests.runtime_env import MakeRuntime, reply


@pytest.fixture
def changed(repo: Path) -> Path:
    (repo / "app.py").write_text('def hello(name):\n    return f"SELECT * FROM users WHERE name = {name}"\n')
    return repo


async def test_two_specialists_identical_finding_is_one_finding_listing_both(
    server: ReplayServer, runtime: MakeRuntime, changed: Path
) -> None:
    rt, _ = await runtime(changed)
    server.add(reply(findings(SQL)), session="review-security")
    test_finding = {**SQL, "severity": "medium", "title": "SQL query is built from user input", "line": 3}
    untested = {
        "file": "app.py",
        "line": 1,
        "severity": "low",
        "title": "hello has no test",
        "evidence": "no test",
    }
    server.add(reply(f"```json\n{findings(test_finding, untested)}\n```"), session="review-test")
    opened: list[tuple[str, str]] = []
    report = await run_review(
        rt, ReviewRequest(["security", "test"]), lambda v: opened.append((v.name, v.mode))
    )
    assert opened == [("review-security", "plan"), ("review-test", "plan")]  # read-only: plan mode
    assert rt.sessions == {}  # closed once they answered (they stay in the store)
    assert report.failed == {}
    sql, other = report.findings
    assert sql.specialists == ("security", "test") and sql.severity == "high"
    assert [e.specialist for e in sql.evidence] == ["security", "test"]
    assert other.specialists == ("test",) and other.title == "hello has no test"
    for request in server.requests:  # only the read tools are offered
        names = {t["function"]["name"] for t in request.body_json["tools"]}
        assert names == {"read_file", "list_dir", "glob", "grep"}
        assert "diff --git a/app.py b/app.py" in request.body_json["messages"][-1]["content"]


async def test_invalid_answer_is_retried_once_then_the_specialist_failed(
    server: ReplayServer, runtime: MakeRuntime, changed: Path
) -> None:
    rt, _ = await runtime(changed)
    server.add([reply("I think it looks fine overall."), reply(findings(SQL))], session="review-security")
    server.add([reply("no JSON here"), reply('{"findings": [{"file": "app.py"}]}')], session="review-test")
    report = await run_review(rt, ReviewRequest(["security", "test"]))
    assert [f.title for f in report.findings] == [SQL["title"]]
    assert report.specialists == ("security",)
    assert report.failed["test"].startswith(
        "invalid answer after one retry: the JSON does not fit the schema"
    )
    test_requests = [r for r in server.requests if r.session == "review-test"]
    assert len(test_requests) == 2  # one retry, no third try
    assert (
        "could not be used: the reply: not valid JSON (line 1"
        in test_requests[1].body_json["messages"][-1]["content"]
    )
    assert "specialist test failed: " + report.failed["test"] in report.lines()


async def test_every_specialist_unparsable_is_exit_3_and_nothing_guessed(
    server: ReplayServer, runtime: MakeRuntime, changed: Path
) -> None:
    rt, _ = await runtime(changed)
    server.add([reply("prose"), reply("more prose")], session="review-code")
    with pytest.raises(ReviewError, match="specialist code failed") as err:
        await run_review(rt, ReviewRequest(["code"]))
    assert err.value.code == 3


async def test_no_diff_and_unknown_specialist_are_clear(
    runtime: MakeRuntime, repo: Path, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    rt, _ = await runtime(repo)
    with pytest.raises(ReviewError, match=r"^nothing to review: .*plain is not in a git repository$") as bare:
        await run_review(rt, ReviewRequest(["code"], workdir=plain))
    assert bare.value.code == 2
    with pytest.raises(ReviewError, match="nothing to review") as empty:
        await run_review(rt, ReviewRequest(["code"]))
    assert empty.value.code == 5
    with pytest.raises(ReviewError, match="unknown specialist nope: choose from arch") as unknown:
        await run_review(rt, ReviewRequest(["nope"]))
    assert unknown.value.code == 2


async def test_patch_is_offered_only_when_git_apply_check_passes(
    server: ReplayServer, runtime: MakeRuntime, changed: Path
) -> None:
    rt, _ = await runtime(changed)
    diff = "diff --git a/README b/README\n--- a/README\n+++ b/README\n@@ -1 +1 @@\n-readme\n+read me\n"
    good = f"```diff\n{diff}```"
    server.add(reply(findings(SQL)), session="review-security")
    server.add(reply(good), session="review-patch")
    report = await run_review(rt, ReviewRequest(["security"], patch=True))
    assert report.patch is not None and report.patch.startswith("diff --git a/README")
    server.add(reply(findings(SQL)), session="review-security-2")  # names stay unique in the store
    server.add(reply(good.replace("-readme", "-not there")), session="review-patch-2")
    bad = await run_review(rt, ReviewRequest(["security"], patch=True))
    assert bad.patch is None and bad.patch_error is not None and "does not apply" in bad.patch_error
    assert (changed / "README").read_text() == "readme\n"  # checked, never applied


def test_different_files_or_far_lines_stay_apart() -> None:
    a = Finding.model_validate(SQL)
    far = Finding.model_validate({**SQL, "line": 40})
    other_file = Finding.model_validate({**SQL, "file": "db.py"})
    merged = merge_findings({"security": [a], "code": [far, other_file]})
    assert [m.specialists for m in merged] == [("security",), ("code",), ("code",)]
