"""What a lane holds: uncommitted files, commits not yet on its target, and whether their patches
already landed there (so squash and rebase merges count as merged)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from paragents.lanes.errors import LaneError
from paragents.lanes.git import git
from paragents.lanes.repo import is_dirty
from paragents.store import LaneRecord


@dataclass
class LaneStatus:
    """A lane's state for listing, merging and gc."""

    lane: LaneRecord
    exists: bool
    dirty: list[str] = field(default_factory=list)
    ahead: list[str] = field(default_factory=list)
    """Commits on the lane's branch that are not reachable from its target."""
    unlanded: list[str] = field(default_factory=list)
    """Of those, the commits whose changes are not on the target yet (by patch-id, or the whole
    branch's change already being there after a squash merge)."""
    target_exists: bool = True
    head: str = ""
    broken: str | None = None
    """Why git cannot read the lane's worktree (e.g. its ``.git`` file was replaced); its files stay."""


async def target_tip(repo: Path, ref: str) -> str | None:
    result = await git("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", cwd=repo, check=False)
    return result.out.strip() if result.ok else None


async def unlanded_commits(repo: Path, target: str, branch: str) -> tuple[list[str], list[str]]:
    """Return (commits of ``branch`` not reachable from ``target``, those whose patches have not
    landed on ``target``). A branch counts as landed when ``git cherry`` finds each commit's patch-id
    on the target, or when merging the branch into the target would change nothing (a squash merge
    of several commits)."""
    ahead = (await git("rev-list", "--reverse", f"{target}..{branch}", cwd=repo)).out.split()
    if not ahead:
        return [], []
    cherry = (await git("cherry", target, branch, cwd=repo)).out.splitlines()
    missing = [line[2:].strip() for line in cherry if line.startswith("+")]
    if not missing:
        return ahead, []
    merged = await git("merge-tree", "--write-tree", "--no-messages", target, branch, cwd=repo, check=False)
    tree = await git("rev-parse", f"{target}^{{tree}}", cwd=repo)
    if merged.ok and merged.out.split()[0] == tree.out.strip():
        return ahead, []
    return ahead, missing


async def lane_status(repo: Path, lane: LaneRecord) -> LaneStatus:
    """Inspect one lane (its worktree may be gone)."""
    path = Path(lane.path)
    status = LaneStatus(lane, exists=path.is_dir())
    if status.exists:
        try:
            status.dirty = await is_dirty(path)
        except LaneError as exc:
            status.broken = (  # the refusal says what to do (never `git worktree repair` blindly)
                f"git cannot read the worktree of lane {lane.name} ({exc}); its files, untracked ones "
                f"included, stay in {lane.path}"
            )
    branch_ok = await git("rev-parse", "--verify", "-q", f"refs/heads/{lane.branch}", cwd=repo, check=False)
    if not branch_ok.ok:
        return status
    status.head = branch_ok.out.strip()
    tip = await target_tip(repo, lane.base_ref)
    if tip is None:
        status.target_exists = False
        status.ahead = (await git("rev-list", f"{lane.base_commit}..{lane.branch}", cwd=repo)).out.split()
        status.unlanded = list(status.ahead)
        return status
    status.ahead, status.unlanded = await unlanded_commits(repo, lane.base_ref, lane.branch)
    return status
