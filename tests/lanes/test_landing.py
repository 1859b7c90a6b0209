"""Landing only what passed (issue 27 items 6, 7, 12), with real git and the real sandbox: a verify
result is bound to the exact tree it ran on (uncommitted files included), so committing the lane's
changes keeps it; every landing refuses a failed or stale verify unless overridden; the lane's
changes are committed on the user's behalf (``commit_lane``, ``lanes merge --commit``); a landed lane
is no longer predicted against its own landed work; ``lanes merge --help`` names the git commands
and its refusals name the command to run."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from paragents.cli import main
from paragents.lanes import LaneError, create_lane
from paragents.lanes.bring_back import lane_state, plan_merge, run_verify_kept
from paragents.lanes.commit import commit_lane
from paragents.lanes.merge import EXIT_VERIFY, merge_lane
from paragents.lanes.predict import Predictor, copy_index
from paragents.store import Store
from tests.lanes.conftest import commit_all, sh

PASS = "grep -q 'return 2' app.py"
"""A verify command that passes when hello() returns 2."""


async def test_a_verify_on_uncommitted_files_holds_for_their_commit(store: Store, repo: Path) -> None:
    lane = (await create_lane(store, repo, "api", setup=False)).lane
    (Path(lane.path) / "app.py").write_text("def hello():\n    return 2\n")  # uncommitted
    record = await run_verify_kept(store, repo, "api", PASS)
    before = await lane_state(repo, lane)
    assert record.passed and record.covers(before.tree) and not before.clean
    assert record.commit == before.head  # the base commit, but the tree is the dirty one
    assert before.describe().endswith(f"plus its uncommitted files (tree {before.tree[:12]})")
    after = await commit_lane(store.lanes, repo, "api", "Return 2", reviewed=before)
    assert after.clean and after.head != before.head and after.tree == before.tree
    plan = await plan_merge(store, repo, "api", "squash", after, PASS)
    assert plan.verified, plan.verify_line()  # the commit holds exactly what verify ran on
    result = await merge_lane(store, repo, "api", "squash", verify=PASS, expect_head=after.head)
    assert result.commit == sh(repo, "rev-parse", "main")
    assert sh(repo, "show", "main:app.py") == "def hello():\n    return 2"


async def test_every_landing_refuses_a_failed_or_stale_verify_unless_overridden(
    store: Store, repo: Path
) -> None:
    lane = (await create_lane(store, repo, "api", setup=False)).lane
    (Path(lane.path) / "app.py").write_text("def hello():\n    return 3\n")
    commit_all(Path(lane.path), "return 3")
    with pytest.raises(LaneError, match="has not run") as never:
        await merge_lane(store, repo, "api", "squash", verify=PASS)
    assert never.value.exit_code == EXIT_VERIFY
    assert not (await run_verify_kept(store, repo, "api", PASS)).passed
    with pytest.raises(LaneError, match=r"FAILED \(exit 1\)") as failed:
        await merge_lane(store, repo, "api", "squash", verify=PASS)
    assert failed.value.exit_code == EXIT_VERIFY and sh(repo, "show", "main:app.py").endswith("return 1")
    (Path(lane.path) / "app.py").write_text("def hello():\n    return 2\n")
    commit_all(Path(lane.path), "return 2")  # verify ran on the old tree: stale
    with pytest.raises(LaneError, match="changed since verify last ran"):
        await merge_lane(store, repo, "api", "squash", verify=PASS)
    landed = await merge_lane(store, repo, "api", "squash", verify=PASS, override=True)
    assert landed.commit == sh(repo, "rev-parse", "main")


def test_lanes_merge_commit_commits_verifies_and_lands_headless(
    repo: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import asyncio

    (repo / "runtime_config.json").write_text(f'{{"lanes": {{"verify": "{PASS}"}}}}')
    commit_all(repo, "config")
    lane = asyncio.run(_make(repo))
    (Path(lane) / "app.py").write_text("def hello():\n    return 2\n")
    (Path(lane) / "new.py").write_text("x = 1\n")  # untracked: committed too
    assert main(["lanes", "merge", "api", "--dir", str(repo)]) == 1  # uncommitted: refused ...
    err = capsys.readouterr().err
    assert (
        "paragents lanes merge api --commit" in err and f"git -C {lane} stash push -u" in err
    )  # ... saying how
    assert main(["lanes", "merge", "api", "--commit", "Return 2", "--dir", str(repo)]) == 0
    out = capsys.readouterr().out
    assert "committed the uncommitted files of lane api" in out and f"$ {PASS}" in out
    assert sh(repo, "show", "main:new.py") == "x = 1"
    assert sh(repo, "log", "-1", "--format=%s", "paragents/api") == "Return 2"


async def _make(repo: Path) -> str:
    async with await Store.open() as store:  # the store the CLI opens
        return (await create_lane(store, repo, "api", setup=False)).lane.path


def test_merge_help_lists_each_strategys_git_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["lanes", "merge", "--help"])
    text = capsys.readouterr().out
    for command in (
        "git merge-tree --write-tree OLD LANE",
        "git commit-tree TREE -p OLD -m MSG",
        "git commit-tree TREE -p OLD -p LANE -m MSG",
        "git update-ref refs/heads/TARGET NEW OLD",
        "git -C LANE_WORKTREE rebase OLD",
        "git push -u origin LANE",
        "git commit --no-verify -m MSG",
    ):
        assert command in text, command


async def test_a_dirty_main_checkout_refusal_gives_the_command(store: Store, repo: Path) -> None:
    lane = (await create_lane(store, repo, "api", setup=False)).lane
    (Path(lane.path) / "app.py").write_text("def hello():\n    return 2\n")
    commit_all(Path(lane.path), "return 2")
    (repo / "app.py").write_text("def hello():\n    return 9\n")  # the main checkout has main checked out
    with pytest.raises(LaneError) as refused:
        await merge_lane(store, repo, "api", "squash")
    assert f"git -C {repo} stash push -u" in str(refused.value)


async def test_a_landed_lane_is_not_predicted_against_its_own_landed_work(store: Store, repo: Path) -> None:
    api = (await create_lane(store, repo, "api", setup=False)).lane
    web = (await create_lane(store, repo, "web", setup=False)).lane
    (Path(api.path) / "app.py").write_text("def hello():\n    return 2\n")
    commit_all(Path(api.path), "api: 2")
    (Path(web.path) / "app.py").write_text("def hello():\n    return 3\n")
    predictor = Predictor(repo)
    try:
        [before] = await predictor.round(await store.lanes.all(str(repo)))
        assert (before.a, before.b, before.against_base) == ("api", "web", False)
        await merge_lane(store, repo, "api", "squash")
        after = await predictor.round(await store.lanes.all(str(repo)))
        assert [(c.a, c.b, c.against_base) for c in after] == [("web", "main", True)]  # web must adapt
        assert after[0].not_merged() == "(web has not merged yet)"
        # api works on after landing: it is predicted again
        (Path(api.path) / "app.py").write_text("def hello():\n    return 4\n")
        again = await predictor.round(await store.lanes.all(str(repo)))
        assert any("api" in (c.a, c.b) for c in again)
    finally:
        predictor.close()


def test_a_snapshot_index_keeps_the_lane_index_mtime(tmp_path: Path) -> None:
    """The temporary index starts as a copy dated like the lane's own: git re-reads an entry only when
    it is as new as the index file, so a copy dated now hid a same-size edit made in the second the
    lane's index was written (the verify of tests above then ran on a tree without that edit)."""
    index, temp = tmp_path / "index", tmp_path / "temp"
    index.write_bytes(b"DIRC")
    os.utime(index, (1_000_000_000, 1_000_000_000))
    copy_index(index, temp)
    assert temp.read_bytes() == b"DIRC" and temp.stat().st_mtime == index.stat().st_mtime
