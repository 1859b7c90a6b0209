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
    base: str = ""
    """The base commit the snapshot commit sits on (a rebased lane gets a new snapshot)."""


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
    object and return its id, using a temporary index ``scratch/index`` (started from a copy of the
    lane's index when it does not exist yet; kept between calls, its stat cache makes the next ``add``
    cheap); the lane's own index stays as it was."""
    temp = scratch / "index"
    if not temp.exists():
        if index is None:
            out = await git("rev-parse", "--path-format=absolute", "--git-path", "index", cwd=path)
            index = Path(out.out.strip())
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


def _touched(verbose: str) -> frozenset[str] | None:
    """Paths named by ``git add --verbose`` ("add 'p'" / "remove 'p'"); None when one is quoted in a
    way not read here (then callers re-check everything)."""
    paths: set[str] = set()
    for line in verbose.splitlines():
        verb, _, rest = line.partition(" ")
        if verb not in ("add", "remove") or not (rest.startswith("'") and rest.endswith("'")):
            return None
        rest = rest[1:-1]
        if rest.startswith('"') or "\\" in rest:
            return None
        paths.add(rest)
    return frozenset(paths)


@dataclass
class Predictor:
    """Runs prediction rounds for the lanes of one repository, incrementally.

    Each lane keeps a temporary index between rounds, so ``git add -A --verbose`` re-hashes and
    names only what changed since the last round. A lane whose tree did not change reuses its
    snapshot; a pair of lanes whose common paths are the same as last round and untouched on both
    sides since reuses its merge-tree answer (a 3-way merge of a path depends only on its three
    versions); any doubt (a quoted path, a pair not checked last round) re-runs merge-tree."""

    repo: Path
    _scratch: tempfile.TemporaryDirectory[str] = field(
        default_factory=lambda: tempfile.TemporaryDirectory(prefix="paragents-predict-")
    )
    _last: dict[str, Snapshot] = field(default_factory=dict)
    _merges: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    _pairs: dict[tuple[str, str], tuple[frozenset[str], tuple[str, ...]]] = field(default_factory=dict)

    def close(self) -> None:
        """Remove the temporary indexes (also done when the predictor is garbage-collected)."""
        self._scratch.cleanup()

    def last_snapshot(self, lane: LaneRecord) -> Snapshot | None:
        """The lane's snapshot from the latest round, or None."""
        return self._last.get(lane.path)

    async def snapshot(self, lane: LaneRecord) -> tuple[Snapshot, frozenset[str] | None]:
        """Snapshot one lane; return it with the paths touched since its previous snapshot (None:
        unknown, e.g. the first snapshot)."""
        path = Path(lane.path)
        scratch = Path(self._scratch.name) / str(lane.id)
        scratch.mkdir(exist_ok=True)
        temp = scratch / "index"
        last = self._last.get(lane.path)
        if not temp.exists():
            out = await git("rev-parse", "--path-format=absolute", "--git-path", "index", cwd=path)
            if Path(out.out.strip()).exists():
                shutil.copyfile(out.out.strip(), temp)
            last = None
        env = {"GIT_INDEX_FILE": str(temp)}
        added = await git("add", "-A", "--verbose", cwd=path, env=env, what=f"snapshot of {path}")
        touched = _touched(added.out) if last is not None else None
        if last is not None and touched == frozenset() and last.base == lane.base_commit:
            return last, touched
        tree = (await git("write-tree", cwd=path, env=env, what=f"snapshot of {path}")).out.strip()
        if last is not None and last.tree == tree and last.base == lane.base_commit:
            return last, frozenset()
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
        if last is not None and touched is not None and last.base == lane.base_commit:
            commit = await commit_task
            changed = last.changed | touched  # a superset: only used to pick pairs worth a merge-tree
        else:
            commit, changed = await asyncio.gather(commit_task, changed_paths(path, lane.base_commit, tree))
            touched = None
        snap = Snapshot(lane.name, tree, commit.out.strip(), changed, lane.base_commit)
        self._last[lane.path] = snap
        return snap, touched

    async def round(self, lanes: Sequence[LaneRecord]) -> list[Conflict]:
        """One prediction round over ``lanes`` (those whose worktree exists); return the conflicts."""
        present = [lane for lane in lanes if Path(lane.path).is_dir()]
        results = await asyncio.gather(*(self.snapshot(lane) for lane in present))
        snaps = [snap for snap, _ in results]
        touched = {lane.path: t for lane, (_, t) in zip(present, results, strict=True)}
        checks: list[tuple[Conflict, str, str]] = []
        known: list[Conflict] = []
        pairs: dict[tuple[str, str], tuple[frozenset[str], tuple[str, ...]]] = {}
        fresh: list[tuple[tuple[str, str], frozenset[str]]] = []
        for (la, sa), (lb, sb) in itertools.combinations(zip(present, snaps, strict=True), 2):
            common = sa.changed & sb.changed
            if not common:
                continue
            key = (la.path, lb.path)
            before = self._pairs.get(key)
            ta, tb = touched[la.path], touched[lb.path]
            same = before is not None and before[0] == common
            if same and ta is not None and tb is not None and not (ta & common) and not (tb & common):
                assert before is not None
                pairs[key] = before
                if before[1]:
                    known.append(Conflict(la.name, lb.name, before[1]))
                continue
            checks.append((Conflict(la.name, lb.name, ()), sa.commit, sb.commit))
            fresh.append((key, common))
        base_checks = await self._base_checks(present, snaps)
        found = await asyncio.gather(*(self._merge(a, b) for _, a, b in [*checks, *base_checks]))
        for (key, common), files in zip(fresh, found, strict=False):
            pairs[key] = (common, files)
        self._pairs = pairs
        return known + [
            Conflict(c.a, c.b, files, c.against_base)
            for (c, _, _), files in zip([*checks, *base_checks], found, strict=True)
            if files
        ]

    async def _merge(self, ours: str, theirs: str) -> tuple[str, ...]:
        """merge-tree of two commits, remembered (commits never change, so neither does the answer)."""
        key = (ours, theirs)
        if key not in self._merges:
            if len(self._merges) > 4096:
                self._merges.clear()
            self._merges[key] = await merge_conflicts(self.repo, ours, theirs)
        return self._merges[key]

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
