"""The core of the Lanes screen's actions with real git: the verify result kept with the commit it
ran on, merge plans (the git commands, merge-tree pre-check) bound to the reviewed state, push and
PR through ``gh`` (or the commands when gh is missing), discard bundling first, and the commit
message drafted over the loopback replay server (or built from the prompts)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paragents.lanes import LaneError, create_lane
from paragents.lanes.bring_back import lane_state, plan_discard, plan_merge, resolve_prompt, run_verify_kept
from paragents.lanes.errors import LaneMoved
from paragents.lanes.merge import merge_lane
from paragents.lanes.message import LaneWork, draft_message, fallback_message
from paragents.llm import ChatClient
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.store import LaneRecord, Store
from tests.lanes.conftest import commit_all, sh


async def _lane(store: Store, repo: Path, name: str = "api", content: str = "return 2") -> LaneRecord:
    lane = (await create_lane(store, repo, name, setup=False)).lane
    (Path(lane.path) / "app.py").write_text(f"def hello():\n    {content}\n")
    commit_all(Path(lane.path), f"{name}: {content}")
    return lane


async def test_verify_result_is_kept_with_the_commit_it_ran_on(store: Store, repo: Path) -> None:
    lane = await _lane(store, repo)
    seen: list[str] = []
    record = await run_verify_kept(store, repo, "api", "echo checking; exit 3", seen.append)
    assert record.exit_code == 3 and not record.passed and "checking" in record.output_tail
    assert seen[:2] == ["$ echo checking; exit 3", "checking"]  # streamed line by line
    assert record.commit == sh(repo, "rev-parse", lane.branch)
    assert await store.lane_verify.last(lane.id) == record
    passed = await run_verify_kept(store, repo, "api", "true")
    assert passed.passed and (await store.lane_verify.last(lane.id)) == passed  # the last one replaces


async def test_plan_lists_the_git_commands_and_predicts_conflicts(store: Store, repo: Path) -> None:
    await _lane(store, repo)
    lane = await store.lanes.get(str(repo), "api")
    assert lane is not None
    state = await lane_state(repo, lane)
    plan = await plan_merge(store, repo, "api", "squash", state, "true")
    old = sh(repo, "rev-parse", "main")
    assert plan.commands[0].startswith(f"git merge-tree --write-tree {old[:12]} {state.head[:12]}")
    assert plan.commands[2] == f"git -C {repo} merge --ff-only <new>" and not plan.conflicts
    assert not plan.verified and "has not run" in plan.verify_line()
    pr = await plan_merge(store, repo, "api", "pr", state, None)
    assert pr.commands == [
        "git push -u origin paragents/api",
        "gh pr create --base main --head paragents/api --title <first line below> --body <the rest>",
    ]
    rebase = await plan_merge(store, repo, "api", "rebase", state, None)
    assert rebase.commands[0] == f"git -C {lane.path} rebase {old[:12]}" and rebase.verified
    (repo / "app.py").write_text("def hello():\n    return 3\n")
    theirs = commit_all(repo, "main: return 3")
    plan = await plan_merge(store, repo, "api", "merge", state, None)
    assert plan.conflicts == ("app.py",)
    prompt = await resolve_prompt(store.lanes, repo, "api", plan.conflicts)
    assert "would conflict in: app.py" in prompt and theirs[:7] in prompt and "api: return 2" in prompt


async def test_a_lane_that_moved_since_the_review_is_refused(store: Store, repo: Path) -> None:
    lane = await _lane(store, repo)
    state = await lane_state(repo, lane)
    (Path(lane.path) / "new.txt").write_text("untracked\n")
    with pytest.raises(LaneMoved, match="files of lane api changed"):
        await plan_merge(store, repo, "api", "squash", state, None)
    commit_all(Path(lane.path), "more")
    with pytest.raises(LaneMoved, match="review starts over"):
        await plan_merge(store, repo, "api", "squash", state, None)
    with pytest.raises(LaneMoved):
        await merge_lane(store, repo, "api", "squash", expect_head=state.head)
    assert sh(repo, "rev-list", "--count", "main") == "1"


def _bin_without_gh(tmp_path: Path, gh: str | None) -> str:
    folder = tmp_path / "bin"
    folder.mkdir()
    git = next(Path(p) / "git" for p in os.environ["PATH"].split(":") if (Path(p) / "git").exists())
    (folder / "git").symlink_to(git)
    (folder / "sh").symlink_to("/bin/sh")
    if gh is not None:
        (folder / "gh").write_text(gh)
        (folder / "gh").chmod(0o755)
    return str(folder)


async def test_pr_without_gh_runs_nothing_and_gives_the_commands(
    store: Store, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    await _lane(store, repo)
    monkeypatch.setenv("PATH", _bin_without_gh(tmp_path, None))
    result = await merge_lane(store, repo, "api", "pr", message="Return 2\n\nBecause.")
    assert "gh is not installed" in result.summary
    assert result.commands == [
        "git push -u origin paragents/api",
        "gh pr create --base main --head paragents/api --title 'Return 2' --body Because.",
    ]


async def test_pr_with_gh_pushes_then_opens_the_pr(
    store: Store, repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lane = await _lane(store, repo)
    remote = tmp_path / "origin.git"
    sh(tmp_path, "init", "-q", "--bare", str(remote))
    sh(repo, "remote", "add", "origin", str(remote))
    log = tmp_path / "gh-args"
    script = f'#!/bin/sh\nprintf "%s\\n" "$@" > {log}\necho https://example.invalid/pull/7\n'
    monkeypatch.setenv("PATH", _bin_without_gh(tmp_path, script))
    result = await merge_lane(store, repo, "api", "pr")
    assert result.summary == "pull request opened: https://example.invalid/pull/7"
    assert sh(remote, "rev-parse", "paragents/api") == sh(repo, "rev-parse", lane.branch)  # pushed
    assert log.read_text().split("\n")[:6] == ["pr", "create", "--base", "main", "--head", "paragents/api"]


async def test_discard_plan_names_the_bundle_before_the_removal(store: Store, repo: Path) -> None:
    lane = await _lane(store, repo)
    (Path(lane.path) / "wip.txt").write_text("not committed\n")
    lines = await plan_discard(store.lanes, repo, "api")
    assert lines[0].startswith("git commit-tree <snapshot of 1 uncommitted file(s)>")
    assert any(line.startswith("git bundle create") for line in lines)
    assert lines[-2:] == [f"git worktree remove --force {lane.path}", "git branch -D paragents/api"]


async def test_message_drafted_by_the_model_over_loopback() -> None:
    work = LaneWork("api", "squash", prompts=("make hello return 2",), subjects=("api: return 2",))
    async with ReplayServer(models=["m"]) as server:
        server.add(ScriptedResponse.from_message("```\nReturn 2 from hello\n\nAs asked.\n```"))
        client = ChatClient(server.base_url, None, max_retries=0)
        try:
            text, source = await draft_message(client, "m", work, label="lane api")
        finally:
            await client.aclose()
        body = server.requests[0].body_json
    assert text == "Return 2 from hello\n\nAs asked." and source == "drafted by m"
    assert body["model"] == "m" and "tools" not in body
    assert "make hello return 2" in body["messages"][1]["content"]
    assert server.requests[0].session == "lane api"


async def test_message_falls_back_to_the_prompts_when_the_model_fails() -> None:
    work = LaneWork("api", "squash", prompts=("make hello return 2", "also add a test"))
    async with ReplayServer(models=["m"]) as server:  # nothing scripted: the server answers 500
        client = ChatClient(server.base_url, None, max_retries=0)
        try:
            text, source = await draft_message(client, "m", work)
        finally:
            await client.aclose()
    assert text == fallback_message(work)
    assert text == "make hello return 2\n\n- also add a test\n\nSquashed from lane api."
    assert "the model failed: 500" in source
    no_model = await draft_message(None, None, work)
    assert no_model[0] == text and "no model" in no_model[1]


async def test_verify_on_a_gone_worktree_is_a_lane_error(store: Store, repo: Path) -> None:
    lane = await _lane(store, repo)
    sh(repo, "worktree", "remove", "--force", lane.path)
    with pytest.raises(LaneError, match="is gone"):
        await run_verify_kept(store, repo, "api", "true")


async def test_headless_merge_keeps_its_verify_result_for_the_screen(store: Store, repo: Path) -> None:
    lane = await _lane(store, repo)
    with pytest.raises(LaneError, match=r"verify failed in lane api: `exit 5` exited with 5") as err:
        await merge_lane(store, repo, "api", "squash", verify="exit 5", run_verify_first=True)
    assert err.value.exit_code == 4 and "removed" not in str(err.value)
    record = await store.lane_verify.last(lane.id)
    assert record is not None and record.exit_code == 5
    state = await lane_state(repo, lane)
    assert record.covers(state.tree)  # the Lanes screen sees it as the current result
