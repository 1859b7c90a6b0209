"""Lane creation with real git: each base form, bad input, nothing left behind on failure."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from paragents.lanes import LaneError, create_lane, lanes_root
from paragents.lanes.git import parse_version
from paragents.store import Store
from tests.lanes.conftest import commit_all, sh


async def test_lane_from_head_is_a_worktree_on_its_own_branch(store: Store, repo: Path) -> None:
    made = await create_lane(store, repo, "api", setup=False)
    lane = made.lane
    path = Path(lane.path)
    assert path.is_relative_to(lanes_root()) and not path.is_relative_to(repo)
    assert (path / "app.py").read_text() == "def hello():\n    return 1\n"
    assert sh(path, "symbolic-ref", "--short", "HEAD") == "paragents/api"
    assert lane.base_ref == "main" and lane.base_commit == sh(repo, "rev-parse", "HEAD")
    assert lane.setup_state == "ready" and len(lane.ports) == 10
    assert made.notes == []


async def test_lane_from_a_branch_and_from_origin_main(store: Store, repo: Path, tmp_path: Path) -> None:
    sh(repo, "checkout", "-q", "-b", "feature")
    (repo / "f.txt").write_text("f\n")
    feature = commit_all(repo, "feature")
    sh(repo, "checkout", "-q", "main")
    lane = (await create_lane(store, repo, "feat", base="feature", setup=False)).lane
    assert lane.base_ref == "feature" and lane.base_commit == feature
    assert (Path(lane.path) / "f.txt").exists()

    clone = tmp_path / "clone"
    sh(tmp_path, "clone", "-q", str(repo), str(clone))
    remote = (await create_lane(store, clone, "o", base="origin/main", setup=False)).lane
    assert remote.base_ref == "origin/main" and remote.base_commit == sh(repo, "rev-parse", "main")


async def test_repository_without_commits_is_refused_with_the_fix(store: Store, empty_repo: Path) -> None:
    with pytest.raises(LaneError, match="git commit --allow-empty -m init"):
        await create_lane(store, empty_repo, "x", setup=False)


async def test_dirty_main_checkout_is_left_alone_and_named(store: Store, repo: Path) -> None:
    (repo / "app.py").write_text("changed\n")
    made = await create_lane(store, repo, "d", setup=False)
    assert "starts from the last commit" in made.notes[0]
    assert (repo / "app.py").read_text() == "changed\n"
    assert (Path(made.lane.path) / "app.py").read_text().startswith("def hello")


@pytest.mark.parametrize(
    ("prepare", "base", "message"),
    [
        (lambda r: sh(r, "branch", "paragents/x"), "head", "branch paragents/x already exists"),
        (lambda r: None, "nope", "base 'nope' does not exist"),
        (lambda r: sh(r, "checkout", "-q", "--detach"), "head", "HEAD is detached"),
    ],
)
async def test_bad_input_leaves_nothing_behind(store: Store, repo: Path, prepare, base, message) -> None:
    prepare(repo)
    branches = sh(repo, "branch", "--list")
    with pytest.raises(LaneError, match=message):
        await create_lane(store, repo, "x", base=base, setup=False)
    assert sh(repo, "branch", "--list") == branches
    assert await store.lanes.all() == []
    assert "lanes" not in sh(repo, "worktree", "list")


async def test_git_failure_mid_creation_undoes_row_and_branch(store: Store, repo: Path) -> None:
    # the worktree's parent is a file: `git worktree add` fails after the row was reserved
    target_parent = lanes_root()
    target_parent.parent.mkdir(parents=True, exist_ok=True)
    target_parent.write_text("not a directory")
    with pytest.raises(LaneError):
        await create_lane(store, repo, "x", setup=False)
    assert await store.lanes.all() == []
    assert "paragents/x" not in sh(repo, "branch", "--list")


async def test_name_taken_in_the_store_is_refused(store: Store, repo: Path) -> None:
    await create_lane(store, repo, "a", setup=False)
    with pytest.raises(LaneError, match="the lane name 'a' is taken"):
        await create_lane(store, repo, "a", setup=False)


def test_git_version_parsing() -> None:
    assert parse_version("git version 2.39.5") == (2, 39, 5)
    assert parse_version("git version 2.37.1 (Apple Git-137)")[:2] < (2, 38)


async def test_lane_creation_is_fast(store: Store, repo: Path) -> None:
    start = time.perf_counter()
    await create_lane(store, repo, "fast", setup=False)
    assert time.perf_counter() - start < 2.0  # the bench measures the real number (target 0.5 s)
