"""Committing a lane's uncommitted work on its branch, on the user's behalf: the Lanes screen's
"commit the lane's changes", ``paragents lanes merge NAME --commit`` and fan-out's "commit each
candidate". The commit holds exactly the files of the reviewed working tree (``git add -A`` into a
temporary index: untracked files included, ignored ones not), so its tree is the tree a verify result
names: a verify that passed on the uncommitted files still holds after the commit.

It is written with plumbing on the lane's own branch, never by following HEAD: the tree is written
from a temporary index (``write-tree``), wrapped with ``commit-tree`` on the branch's tip, and the
branch moved with ``update-ref --no-deref refs/heads/paragents/<name> NEW OLD`` (so a lane whose
branch file was turned into a symbolic ref cannot make paragents move another branch, and a branch
that moved meanwhile is not overwritten). Before anything, the lane must still be the worktree
paragents made with its HEAD on its branch (:func:`paragents.lanes.integrity.lane_pins`): a lane
whose HEAD a command pointed at ``main`` is refused, and nothing is written. No hook runs. Nothing
here imports Textual."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from paragents.lanes.bring_back import LaneState, check_unmoved, lane_state
from paragents.lanes.errors import LaneError, LaneMoved
from paragents.lanes.git import IDENTITY, git
from paragents.lanes.integrity import BRANCH_PREFIX, lane_dir_of, lane_pins
from paragents.lanes.merge import find_lane
from paragents.lanes.predict import snapshot_tree
from paragents.store.lanes import LanesRepo


async def commit_on_branch(
    lane_path: Path, message: str, *, expect_head: str | None = None, expect_tree: str | None = None
) -> str:
    """Commit the working tree of the lane at ``lane_path`` (untracked files included) on the lane's
    own branch with ``message`` and return the branch's tip (unchanged when there was nothing to
    commit). LaneError when the path is not a lane or the lane is not the worktree paragents made
    (HEAD elsewhere included); LaneMoved when the branch is not at ``expect_head`` or the files are
    not ``expect_tree``."""
    pins = lane_pins(lane_path)
    lane = lane_dir_of(lane_path)
    if not pins or lane is None:
        raise LaneError(f"{lane_path} is not a lane: paragents commits only on a lane's own branch")
    branch = f"refs/heads/{BRANCH_PREFIX}{lane.name}"
    tip = await git("rev-parse", "--verify", "-q", f"{branch}^{{commit}}", cwd=lane, check=False)
    if not tip.ok:
        raise LaneError(f"lane {lane.name} has no branch {branch}: nothing to commit on")
    old = tip.out.strip()
    if expect_head is not None and old != expect_head:
        raise LaneMoved(f"lane {lane.name} moved (its branch is at {old[:12]}, not {expect_head[:12]})")
    with tempfile.TemporaryDirectory(prefix="paragents-commit-") as scratch:
        index = Path(pins["GIT_DIR"]) / "index"
        tree = await snapshot_tree(lane, Path(scratch), index=index)
        if expect_tree is not None and tree != expect_tree:
            raise LaneMoved(f"the files of lane {lane.name} changed since they were reviewed: review again")
        old_tree = (await git("rev-parse", f"{old}^{{tree}}", cwd=lane)).out.strip()
        if tree == old_tree:
            return old
        made = await git("commit-tree", tree, "-p", old, "-m", message, cwd=lane, check=False)
        if not made.ok:  # no identity configured: commit as paragents (the message says what it is)
            made = await git("commit-tree", tree, "-p", old, "-m", message, cwd=lane, env=IDENTITY)
        new = made.out.strip()
        subject = message.strip().splitlines()[0] if message.strip() else "commit"
        await git(
            "update-ref", "--no-deref", "-m", f"paragents: {subject}", branch, new, old,
            cwd=lane, what=f"moving {branch}",
        )  # fmt: skip
        _install_index(Path(scratch) / "index", index)
    return new


def _install_index(built: Path, index: Path) -> None:
    """Make the lane's own index the one the commit was written from (its entries and stat data match
    the commit), so ``git status`` in the lane shows nothing staged."""
    if not built.exists():
        return
    temp = index.with_name("index.paragents-new")
    try:
        shutil.copy2(built, temp)
        os.replace(temp, index)
    except OSError:
        temp.unlink(missing_ok=True)


async def commit_lane(
    lanes: LanesRepo, where: Path, name: str, message: str, *, reviewed: LaneState | None = None
) -> LaneState:
    """Commit every uncommitted and untracked file of lane ``name`` on its branch with ``message``;
    return the lane's state after (its new HEAD, the same tree). With ``reviewed``, LaneMoved when
    the lane changed since it was reviewed. LaneError when there is nothing to commit, or no message,
    or the lane's HEAD is not its branch."""
    if not message.strip():
        raise LaneError("the commit message is empty: write one")
    repo, lane = await find_lane(lanes, where, name)
    state = (
        await check_unmoved(repo, lane, reviewed) if reviewed is not None else await lane_state(repo, lane)
    )
    if state.clean:
        raise LaneError(f"lane {name} has no uncommitted files: nothing to commit")
    await commit_on_branch(Path(lane.path), message, expect_head=state.head, expect_tree=state.tree)
    after = await lane_state(repo, lane)
    if after.head_tree != state.tree:
        raise LaneError(
            f"lane {name} changed while it was being committed (tree {state.tree[:12]} reviewed, "
            f"{after.head_tree[:12]} committed): review it again"
        )
    return after
