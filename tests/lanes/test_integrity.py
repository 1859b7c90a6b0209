"""A lane's git files are checked before paragents runs git in it (lanes/integrity.py): the pins name
the lane's own directories, and a lane whose ``.git`` file, ``gitdir`` or ``commondir`` points
elsewhere is refused with a message naming the lane and the repair command."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.lanes import LaneError, create_lane
from paragents.lanes.git import git
from paragents.lanes.integrity import lane_pins
from paragents.store import Store
from tests.lanes.conftest import sh


async def test_pins_name_the_lanes_own_directories(store: Store, repo: Path) -> None:
    lane = Path((await create_lane(store, repo, "api", setup=False)).lane.path)
    pins = lane_pins(lane / "sub-not-there")
    assert pins == {
        "GIT_DIR": str(repo / ".git" / "worktrees" / "api"),
        "GIT_COMMON_DIR": str(repo / ".git"),
        "GIT_WORK_TREE": str(lane),
    }
    assert lane_pins(repo) == {}  # not a lane


@pytest.mark.parametrize("how", ["dir", "other repo", "commondir"])
async def test_a_lane_whose_git_files_point_elsewhere_is_refused(
    store: Store, repo: Path, tmp_path: Path, how: str
) -> None:
    lane = Path((await create_lane(store, repo, "api", setup=False)).lane.path)
    other = tmp_path / "other"
    other.mkdir()
    sh(other, "init", "-q")
    sh(other, "commit", "-q", "--allow-empty", "-m", "x")
    if how == "dir":
        (lane / ".git").unlink()
        sh(lane, "init", "-q")
    elif how == "other repo":
        sh(other, "worktree", "add", "-q", str(tmp_path / "wt"))
        (lane / ".git").write_text(f"gitdir: {other}/.git/worktrees/wt\n")
    else:
        (repo / ".git" / "worktrees" / "api" / "commondir").write_text(f"{other}/.git\n")
    with pytest.raises(LaneError, match=r"lane api .*`git worktree prune`") as refused:
        await git("status", cwd=lane)
    assert "run `git worktree repair" not in str(refused.value)  # repair would follow the pointers
