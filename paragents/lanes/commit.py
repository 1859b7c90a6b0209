"""Committing a lane's uncommitted work on its branch, on the user's behalf: the Lanes screen's
"commit the lane's changes" and ``paragents lanes merge NAME --commit``. The agent may not be able to
commit in its lane itself (the sandbox keeps the repository's ``.git`` config and hooks read-only), so
paragents does it with its own git (no hooks: ``--no-verify``). The commit holds exactly the files of
the reviewed working tree (``git add -A``: untracked files included, ignored ones not), so its tree is
the tree a verify result names: a verify that passed on the uncommitted files still holds after the
commit. Nothing here imports Textual."""

from __future__ import annotations

from pathlib import Path

from paragents.lanes.bring_back import LaneState, check_unmoved, lane_state
from paragents.lanes.errors import LaneError
from paragents.lanes.git import IDENTITY, git
from paragents.lanes.merge import find_lane
from paragents.store.lanes import LanesRepo


async def commit_lane(
    lanes: LanesRepo, where: Path, name: str, message: str, *, reviewed: LaneState | None = None
) -> LaneState:
    """Commit every uncommitted and untracked file of lane ``name`` on its branch with ``message``;
    return the lane's state after (its new HEAD, the same tree). With ``reviewed``, LaneMoved when
    the lane changed since it was reviewed. LaneError when there is nothing to commit, or no message."""
    if not message.strip():
        raise LaneError("the commit message is empty: write one")
    repo, lane = await find_lane(lanes, where, name)
    state = (
        await check_unmoved(repo, lane, reviewed) if reviewed is not None else await lane_state(repo, lane)
    )
    if state.clean:
        raise LaneError(f"lane {name} has no uncommitted files: nothing to commit")
    path = Path(lane.path)
    await git("add", "-A", cwd=path, what=f"git add -A in lane {name}")
    done = await git("commit", "-q", "--no-verify", "-m", message, cwd=path, check=False)
    if not done.ok:  # no identity configured: commit as paragents
        await git(
            "commit",
            "-q",
            "--no-verify",
            "-m",
            message,
            cwd=path,
            env=IDENTITY,
            what=f"git commit in lane {name}",
        )
    after = await lane_state(repo, lane)
    if after.head_tree != state.tree:
        raise LaneError(
            f"lane {name} changed while it was being committed (tree {state.tree[:12]} reviewed, "
            f"{after.head_tree[:12]} committed): review it again"
        )
    return after
