"""lanes gc with real git: merged lanes go (merge, squash, cherry-pick), others stay with the reason;
--force bundles the work first and the bundle restores it."""

from __future__ import annotations

from pathlib import Path

from paragents.lanes import create_lane
from paragents.lanes.gc import gc
from paragents.store import LaneRecord, Store
from tests.lanes.conftest import commit_all, sh


async def _lane_with_commits(store: Store, repo: Path, name: str, count: int = 1) -> LaneRecord:
    lane = (await create_lane(store, repo, name, setup=False)).lane
    for i in range(count):
        (Path(lane.path) / f"{name}-{i}.txt").write_text(f"{name} {i}\n")
        commit_all(Path(lane.path), f"{name} work {i}")
    return lane


def _gone(repo: Path, lane: LaneRecord) -> bool:
    return not Path(lane.path).exists() and lane.branch not in sh(repo, "branch", "--list")


async def test_merged_lane_is_removed_with_git_worktree_remove(store: Store, repo: Path) -> None:
    lane = await _lane_with_commits(store, repo, "done")
    sh(repo, "merge", "-q", "--no-edit", lane.branch)
    dry = await gc(store, repo)
    assert [(d.lane, d.action) for d in dry] == [("done", "remove")] and Path(lane.path).exists()
    applied = await gc(store, repo, apply=True)
    assert [(d.lane, d.action) for d in applied] == [("done", "removed")]
    assert _gone(repo, lane) and await store.lanes.all() == []
    assert "done" not in sh(repo, "worktree", "list")


async def test_squash_merged_lane_counts_as_merged(store: Store, repo: Path) -> None:
    lane = await _lane_with_commits(store, repo, "sq", count=3)
    sh(repo, "merge", "-q", "--squash", lane.branch)
    sh(repo, "commit", "-q", "-m", "squashed")
    [decision] = await gc(store, repo, apply=True)
    assert decision.action == "removed", decision.reasons
    assert _gone(repo, lane)


async def test_cherry_picked_lane_counts_as_merged_by_patch_id(store: Store, repo: Path) -> None:
    lane = await _lane_with_commits(store, repo, "cp", count=2)
    (repo / "other.txt").write_text("main moved\n")
    commit_all(repo, "main moves")
    sh(repo, "cherry-pick", f"{lane.base_commit}..{lane.branch}")
    [decision] = await gc(store, repo, apply=True)
    assert decision.action == "removed", decision.reasons


async def test_lanes_holding_work_are_kept_with_the_reason(store: Store, repo: Path) -> None:
    ahead = await _lane_with_commits(store, repo, "ahead")
    dirty = (await create_lane(store, repo, "dirty", setup=False)).lane
    (Path(dirty.path) / "scratch.txt").write_text("unsaved\n")
    busy = (await create_lane(store, repo, "busy", setup=False)).lane
    session = await store.sessions.create(name="s", project_dir=repo, workdir=Path(busy.path), model="m")
    await store.lanes.update(busy.id, session_id=session.id)
    await store.sessions.update(session.id, state="running")
    decisions = {d.lane: d for d in await gc(store, repo, apply=True)}
    assert decisions["ahead"].action == "keep" and decisions["ahead"].holds_work
    assert decisions["ahead"].reasons == ["1 commit(s) not on main, by patch or by content"]
    assert decisions["dirty"].reasons == ["1 uncommitted or untracked file(s)"]
    assert decisions["busy"].reasons == ["its session is running"] and not decisions["busy"].holds_work
    assert all(Path(lane.path).exists() for lane in (ahead, dirty, busy))


async def test_force_bundles_commits_and_untracked_files_then_restores(store: Store, repo: Path) -> None:
    lane = await _lane_with_commits(store, repo, "wip")
    commit = sh(Path(lane.path), "rev-parse", "HEAD")
    (Path(lane.path) / "untracked.txt").write_text("not committed\n")
    [decision] = await gc(store, repo, apply=True, force=True)
    assert decision.action == "removed" and decision.bundle is not None
    assert Path(decision.bundle).is_file() and _gone(repo, lane)
    sh(repo, "update-ref", "-d", "refs/paragents/recovery/wip")
    sh(repo, "reflog", "expire", "--expire=now", "--all")
    sh(repo, "gc", "-q", "--prune=now")
    for line in decision.restore[:2]:
        sh(repo, *line.split()[1:])
    assert sh(repo, "rev-parse", lane.branch) == commit
    assert sh(repo, "show", f"{lane.branch}-uncommitted:untracked.txt") == "not committed"


async def test_a_lane_whose_session_is_open_in_a_live_process_is_kept(store: Store, repo: Path) -> None:
    lane = (await create_lane(store, repo, "open", setup=False)).lane
    session = await store.sessions.create(name="s", project_dir=repo, workdir=Path(lane.path), model="m")
    await store.lanes.update(lane.id, session_id=session.id)
    await store.holders.acquire(session.id)  # this (live) process holds it
    [decision] = await gc(store, repo, apply=True, force=True)
    assert decision.action == "keep" and "close it first" in decision.reasons[0]
    await store.holders.release(session.id)
    [decision] = await gc(store, repo, apply=True)
    assert decision.action == "removed"
