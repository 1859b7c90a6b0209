"""``lanes gc``: remove lanes only when nothing can be lost.

A lane is removed when its session is idle, its tree is clean and its commits are reachable from its
target or their patches already landed there (squash and rebase merges count). Otherwise it is kept
and the reason said. ``force`` first writes a ``git bundle`` of the unmerged commits and of a commit
of the untracked and modified files to ``<state>/lanes/recovery/``, and says how to restore it.
Worktrees are removed with ``git worktree remove``, never with ``rm -rf``."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from paragents.lanes.contained import remove_cache
from paragents.lanes.errors import LaneError
from paragents.lanes.git import IDENTITY, git
from paragents.lanes.places import fetch_if_remote, places_for
from paragents.lanes.predict import snapshot_tree
from paragents.lanes.repo import project_hash, recovery_dir, toplevel
from paragents.lanes.status import LaneStatus, lane_status
from paragents.store.connection import this_host
from paragents.store.holders import STALE_AFTER, HoldersRepo, holder_gone
from paragents.store.lanes import LanesRepo
from paragents.store.records import LaneRecord
from paragents.store.sessions import SessionsRepo

BUSY_STATES = frozenset({"running", "queued", "waiting", "paused"})


class GcStore(Protocol):
    """The store's tables gc reads and writes: the lanes, and their sessions' states and holders
    (``paragents.store.Store`` is one)."""

    @property
    def lanes(self) -> LanesRepo: ...
    @property
    def sessions(self) -> SessionsRepo: ...
    @property
    def holders(self) -> HoldersRepo: ...


@dataclass
class GcDecision:
    """What gc did or would do with one lane."""

    lane: str
    action: str
    """'remove' (dry run), 'removed', 'keep'."""
    reasons: list[str] = field(default_factory=list)
    holds_work: bool = False
    """Kept because it holds unmerged commits or uncommitted files."""
    bundle: str | None = None
    restore: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, object]:
        return {
            "lane": self.lane,
            "action": self.action,
            "reasons": self.reasons,
            "holds_work": self.holds_work,
            "bundle": self.bundle,
            "restore": self.restore,
        }


async def keep_reasons(store: GcStore, status: LaneStatus) -> tuple[list[str], bool]:
    """Return (why the lane must be kept, whether one of the reasons is work that would be lost)."""
    lane = status.lane
    reasons: list[str] = []
    if lane.session_id is not None:
        state = await store.sessions.state(lane.session_id)
        if state in BUSY_STATES:
            reasons.append(f"its session is {state}")
        holder = await store.holders.get(lane.session_id)
        if holder is not None and not holder_gone(
            holder, host=this_host(), stamp=time.time(), stale_after=STALE_AFTER
        ):
            reasons.append(f"its session is open in paragents ({holder.describe()}): close it first")
    if lane.setup_state in ("creating", "setup"):
        reasons.append("it is still being created")
    if status.broken:
        reasons.append(status.broken)
    if not status.exists and status.unlanded:
        reasons.append(f"its worktree {lane.path} is gone (removed by hand)")
    if status.dirty:
        reasons.append(f"{len(status.dirty)} uncommitted or untracked file(s)")
    if status.unlanded:
        where = lane.base_ref if status.target_exists else f"{lane.base_ref} (which no longer exists)"
        reasons.append(f"{len(status.unlanded)} commit(s) not on {where}, by patch or by content")
    holds = bool(status.dirty or status.unlanded or status.broken)
    return reasons, holds


async def write_recovery(repo: Path, status: LaneStatus) -> tuple[Path, list[str]]:
    """Bundle the lane's unmerged commits and a commit of its uncommitted files; return the bundle
    path and the commands that restore it."""
    lane = status.lane
    refs = [f"refs/heads/{lane.branch}"]
    restore = [f"git fetch {{bundle}} {refs[0]}:refs/heads/{lane.branch}"]
    if status.dirty and status.exists:
        import tempfile

        with tempfile.TemporaryDirectory(prefix="paragents-recovery-") as scratch:
            tree = await snapshot_tree(Path(lane.path), Path(scratch))
        message = f"paragents recovery: uncommitted and untracked files of lane {lane.name}"
        commit = (
            await git("commit-tree", tree, "-p", "HEAD", "-m", message, cwd=Path(lane.path), env=IDENTITY)
        ).out
        wip = f"refs/paragents/recovery/{lane.name}"
        await git("update-ref", wip, commit.strip(), cwd=repo)
        refs.append(wip)
        restore.append(f"git fetch {{bundle}} {wip}:refs/heads/{lane.branch}-uncommitted")
    folder = recovery_dir()
    folder.mkdir(parents=True, exist_ok=True)
    bundle = folder / f"{project_hash(repo)}-{lane.name}-{time.strftime('%Y%m%d-%H%M%S')}.bundle"
    exclude = [f"^{lane.base_ref}"] if status.target_exists else []
    await git("bundle", "create", "-q", bundle, *refs, *exclude, cwd=repo, what="writing the recovery bundle")
    await git("bundle", "verify", "-q", bundle, cwd=repo, what="checking the recovery bundle")
    restore = [line.replace("{bundle}", str(bundle)) for line in restore]
    restore.append(f"git worktree add {lane.path} {lane.branch}")
    return bundle, restore


async def remove_lane(lanes: LanesRepo, repo: Path, lane: LaneRecord, *, force: bool = False) -> None:
    """Remove a lane's worktree (``git worktree remove``), its branch, its private cache and its row;
    a remote lane's container or Pod first, after a last fetch of its work (lanes/places.py)."""
    if lane.remote:
        await places_for(lane).remove(lane, force=force)
    if Path(lane.path).is_dir():
        args = ["worktree", "remove", *(["--force"] if force else []), lane.path]
        await git(*args, cwd=repo, what=f"git worktree remove {lane.path}")
    else:
        await git("worktree", "prune", cwd=repo)
    await git("branch", "-D", lane.branch, cwd=repo, check=False)
    remove_cache(Path(lane.path))
    await lanes.delete(lane.id)


async def gc(
    store: GcStore, where: Path, *, apply: bool = False, force: bool = False, names: list[str] | None = None
) -> list[GcDecision]:
    """Decide (and with ``apply`` do) the removal of each lane of the repository at ``where``."""
    repo = await toplevel(where)
    decisions: list[GcDecision] = []
    for lane in await store.lanes.all(str(repo)):
        if names and lane.name not in names:
            continue
        try:
            await fetch_if_remote(lane)  # its work since the last fetch must be seen before deciding
        except LaneError as exc:  # never removed unseen, not even with force
            decisions.append(GcDecision(lane.name, "keep", [str(exc)], True))
            continue
        try:
            status = await lane_status(repo, lane)
        except LaneError as exc:  # one lane git cannot read never stops the others
            decisions.append(GcDecision(lane.name, "keep", [f"{exc}; its files stay in {lane.path}"], True))
            continue
        reasons, holds = await keep_reasons(store, status)
        # force never overrides a busy session, nor a worktree git cannot read (its files would be lost)
        busy = status.broken is not None or any(
            r.startswith(("its session is", "it is still")) for r in reasons
        )
        decision = GcDecision(lane.name, "keep" if reasons else "remove", reasons, holds)
        if reasons and force and apply and not busy:
            try:
                if holds:
                    bundle, decision.restore = await write_recovery(repo, status)
                    decision.bundle = str(bundle)
                await remove_lane(store.lanes, repo, lane, force=True)
                decision.action = "removed"
            except (LaneError, OSError) as exc:
                decision.reasons.append(f"force failed, nothing removed: {exc}")
        elif not reasons and apply:
            await remove_lane(store.lanes, repo, lane)
            decision.action = "removed"
        decisions.append(decision)
    return decisions
