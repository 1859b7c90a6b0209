"""What a reviewer of a lane sees: its state, commits, per-file counts, the whole diff against its
base (untracked files included) and the last verify result; the review is bound to the lane's exact
state (``state``: HEAD and working tree) so a merge can refuse a lane that moved since. Plain data;
the TUI's Lanes screen and ``lanes diff`` show it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from paragents.lanes.bring_back import LaneState, lane_state
from paragents.lanes.errors import LaneError
from paragents.lanes.git import git
from paragents.lanes.merge import LaneStore
from paragents.lanes.overview import lane_rows
from paragents.lanes.repo import toplevel
from paragents.store.records import VerifyRecord


@dataclass(frozen=True)
class LaneReview:
    """One lane for review: ``summary`` (the ``lanes list`` line), ``commits`` (short id + subject, not
    on the target yet), ``files`` (path, added, deleted), ``patch`` (diff of ``state.tree`` against
    the base commit), ``verify`` (the last verify result), ``session_id`` (its session, if any)."""

    name: str
    summary: str
    head: str
    commits: tuple[str, ...] = ()
    files: tuple[tuple[str, int | None, int | None], ...] = ()
    patch: str = ""
    problem: str | None = None
    extra: dict[str, object] = field(default_factory=dict)
    state: LaneState | None = None
    verify: VerifyRecord | None = None
    session_id: str | None = None
    target: str = ""


async def lane_reviews(store: LaneStore, where: Path) -> list[LaneReview]:
    """Return a review of each lane of the repository at ``where`` (a lane whose worktree is gone has
    ``problem`` set and no diff)."""
    repo = await toplevel(where)
    reviews: list[LaneReview] = []
    for row in await lane_rows(store.lanes, where):
        name = str(row["name"])
        lane = await store.lanes.get(str(repo), name)
        if lane is None:
            continue
        commits = await git("log", "--format=%h %s", f"{lane.base_ref}..{lane.branch}", cwd=repo, check=False)
        head = await git("rev-parse", "--verify", "-q", lane.branch, cwd=repo, check=False)
        try:
            state = await lane_state(repo, lane)
        except LaneError as exc:
            reviews.append(
                LaneReview(
                    name,
                    str(row["line"]),
                    head.out.strip(),
                    problem=str(exc),
                    session_id=lane.session_id,
                    target=lane.base_ref,
                )
            )
            continue
        patch = (await git("diff", "--no-color", lane.base_commit, state.tree, cwd=repo)).out
        stat = (await git("diff", "--numstat", lane.base_commit, state.tree, cwd=repo)).out
        files = tuple(_numstat(line) for line in stat.splitlines())
        reviews.append(
            LaneReview(
                name,
                str(row["line"]),
                state.head,
                tuple(commits.out.splitlines()) if commits.ok else (),
                files,
                patch,
                extra={"path": lane.path},
                state=state,
                verify=await store.lane_verify.last(lane.id),
                session_id=lane.session_id,
                target=lane.base_ref,
            )
        )
    return reviews


def _numstat(line: str) -> tuple[str, int | None, int | None]:
    added, deleted, path = line.split("\t", 2)
    return path, int(added) if added != "-" else None, int(deleted) if deleted != "-" else None
