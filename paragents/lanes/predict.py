"""Cross-lane conflict prediction, while lanes work.

Each round: snapshot every lane's working tree to a tree object with a temporary ``GIT_INDEX_FILE``
(a copy of the lane's index, so unchanged files are not re-hashed; untracked files included; the
lane's own index is never touched), wrap it in a dangling commit whose parent is the lane's base commit,
then ``git merge-tree --write-tree --name-only`` for every pair of lanes whose changed paths
intersect, and each lane against its base branch's current tip. A lane whose tree did not change
since the last round reuses its snapshot. Everything runs as git subprocesses: no UI loop blocking.
"""

from __future__ import annotations

import asyncio
import itertools
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from paragents.lanes.errors import LaneError
from paragents.lanes.git import IDENTITY, git
from paragents.store import LaneRecord


@dataclass(frozen=True)
class Snapshot:
    """A lane's working tree at one moment: ``tree``, a ``commit`` on top of the lane's HEAD, and
    the paths changed against the lane's base commit."""

    lane: str
    tree: str
    commit: str
    changed: frozenset[str]


@dataclass(frozen=True)
class Conflict:
    """A predicted conflict between lane ``a`` and ``b`` (another lane's name, or the base branch
    ``ref`` when ``against_base``) in ``files``."""

    a: str
    b: str
    files: tuple[str, ...]
    against_base: bool = False

    def describe(self) -> str:
        shown = ", ".join(self.files[:3]) + (f" (+{len(self.files) - 3} more)" if len(self.files) > 3 else "")
        other = f"its base {self.b}" if self.against_base else self.b
        return f"{self.a} conflicts with {other} in {shown}"


async def snapshot_tree(path: Path, scratch: Path, index: Path | None = None) -> str:
    """Write the working tree at ``path`` (untracked files included, ignored files not) as a tree
    object and return its id, using a temporary index under ``scratch``; the lane's index stays as
    it was."""
    if index is None:
        index = Path(
            (await git("rev-parse", "--path-format=absolute", "--git-path", "index", cwd=path)).out.strip()
        )
    temp = scratch / "index"
    if index.exists():
        shutil.copyfile(index, temp)
    env = {"GIT_INDEX_FILE": str(temp)}
    await git("add", "-A", cwd=path, env=env, what=f"snapshot of {path}")
    return (await git("write-tree", cwd=path, env=env, what=f"snapshot of {path}")).out.strip()


async def changed_paths(repo: Path, old: str, new: str) -> frozenset[str]:
    """Paths that differ between two tree-ish (renames listed as delete + add)."""
    out = (await git("diff-tree", "-r", "-z", "--name-only", "--no-renames", old, new, cwd=repo)).out
    return frozenset(filter(None, out.split("\0")))


async def merge_conflicts(repo: Path, ours: str, theirs: str) -> tuple[str, ...]:
    """Files ``git merge-tree --write-tree`` reports as conflicting when merging two commits
    (empty when they merge cleanly)."""
    result = await git(
        "merge-tree",
        "--write-tree",
        "--name-only",
        "--no-messages",
        "-z",
        ours,
        theirs,
        cwd=repo,
        check=False,
    )
    if result.code == 0:
        return ()
    if result.code != 1:
        raise LaneError(f"git merge-tree failed: {result.err or result.out}")
    parts = result.out.split("\0")
    files: list[str] = []
    for part in parts[1:]:
        if not part:
            break
        files.append(part)
    return tuple(dict.fromkeys(files))


@dataclass
class Predictor:
    """Runs prediction rounds for the lanes of one repository, remembering each lane's last snapshot
    so unchanged lanes cost one ``add`` and one ``write-tree``."""

    repo: Path
    _index: dict[str, Path] = field(default_factory=dict)
    _last: dict[str, Snapshot] = field(default_factory=dict)

    async def snapshot(self, lane: LaneRecord) -> Snapshot:
        path = Path(lane.path)
        if lane.path not in self._index:
            out = await git("rev-parse", "--path-format=absolute", "--git-path", "index", cwd=path)
            self._index[lane.path] = Path(out.out.strip())
        with tempfile.TemporaryDirectory(prefix="paragents-snap-") as scratch:
            tree = await snapshot_tree(path, Path(scratch), self._index[lane.path])
        last = self._last.get(lane.path)
        if last is not None and last.tree == tree:
            return last
        commit_task = git(
            "commit-tree",
            tree,
            "-p",
            lane.base_commit,
            "-m",
            f"paragents snapshot of lane {lane.name}",
            cwd=path,
            env=IDENTITY,
        )
        commit, changed = await asyncio.gather(commit_task, changed_paths(path, lane.base_commit, tree))
        snap = Snapshot(lane.name, tree, commit.out.strip(), changed)
        self._last[lane.path] = snap
        return snap

    async def round(self, lanes: Sequence[LaneRecord]) -> list[Conflict]:
        """One prediction round over ``lanes`` (those whose worktree exists); return the conflicts."""
        present = [lane for lane in lanes if Path(lane.path).is_dir()]
        snaps = await asyncio.gather(*(self.snapshot(lane) for lane in present))
        checks: list[tuple[Conflict, str, str]] = []
        for (la, sa), (lb, sb) in itertools.combinations(zip(present, snaps, strict=True), 2):
            common = sa.changed & sb.changed
            if common:
                checks.append((Conflict(la.name, lb.name, ()), sa.commit, sb.commit))
        checks.extend(await self._base_checks(present, snaps))
        found = await asyncio.gather(*(merge_conflicts(self.repo, a, b) for _, a, b in checks))
        return [
            Conflict(c.a, c.b, files, c.against_base)
            for (c, _, _), files in zip(checks, found, strict=True)
            if files
        ]

    async def _base_checks(
        self, lanes: Sequence[LaneRecord], snaps: Sequence[Snapshot]
    ) -> list[tuple[Conflict, str, str]]:
        refs = sorted({lane.base_ref for lane in lanes})
        if not refs:
            return []
        out = await git("rev-parse", *[f"{ref}^{{commit}}" for ref in refs], cwd=self.repo, check=False)
        tips = dict(zip(refs, out.out.split(), strict=False)) if out.ok else {}
        moved = [
            (lane, snap)
            for lane, snap in zip(lanes, snaps, strict=True)
            if tips.get(lane.base_ref, lane.base_commit) != lane.base_commit
        ]
        diffs = await asyncio.gather(
            *(changed_paths(self.repo, lane.base_commit, tips[lane.base_ref]) for lane, _ in moved)
        )
        return [
            (Conflict(lane.name, lane.base_ref, (), against_base=True), snap.commit, tips[lane.base_ref])
            for (lane, snap), upstream in zip(moved, diffs, strict=True)
            if snap.changed & upstream
        ]
