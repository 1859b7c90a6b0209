"""What a reviewer of a lane sees: its state, commits, per-file counts and the whole diff against its
base (untracked files included). Plain data; the TUI's Lanes screen and ``lanes diff`` show it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from paragents.lanes.errors import LaneError
from paragents.lanes.git import git
from paragents.lanes.merge import lane_diff
from paragents.lanes.overview import lane_rows
from paragents.store import Store


@dataclass(frozen=True)
class LaneReview:
    """One lane for review: ``summary`` (the ``lanes list`` line), ``commits`` (short id + subject, not
    on the target yet), ``files`` (path, added, deleted), ``patch`` (diff vs the base commit)."""

    name: str
    summary: str
    head: str
    commits: tuple[str, ...] = ()
    files: tuple[tuple[str, int | None, int | None], ...] = ()
    patch: str = ""
    problem: str | None = None
    extra: dict[str, object] = field(default_factory=dict)


async def lane_reviews(store: Store, where: Path) -> list[LaneReview]:
    """Return a review of each lane of the repository at ``where`` (a lane whose worktree is gone has
    ``problem`` set and no diff)."""
    reviews: list[LaneReview] = []
    for row in await lane_rows(store, where):
        name = str(row["name"])
        commits = await git(
            "log", "--format=%h %s", f"{row['base_ref']}..{row['branch']}", cwd=Path(where), check=False
        )
        head = await git("rev-parse", "--verify", "-q", str(row["branch"]), cwd=Path(where), check=False)
        try:
            _lane, patch, stat = await lane_diff(store, where, name)
        except LaneError as exc:
            reviews.append(LaneReview(name, str(row["line"]), head.out.strip(), problem=str(exc)))
            continue
        files = tuple((str(s["path"]), _count(s["added"]), _count(s["deleted"])) for s in stat)
        reviews.append(
            LaneReview(
                name,
                str(row["line"]),
                head.out.strip(),
                tuple(commits.out.splitlines()) if commits.ok else (),
                files,
                patch,
            )
        )
    return reviews


def _count(value: object) -> int | None:
    return value if isinstance(value, int) else None
