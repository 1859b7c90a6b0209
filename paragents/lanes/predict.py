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
import os
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
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

    def not_merged(self) -> str:
        """ "(neither has merged yet)" for two lanes; "(api has not merged yet)" against a base."""
        return f"({self.a} has not merged yet)" if self.against_base else "(neither has merged yet)"


def copy_index(index: Path, temp: Path) -> None:
    """Copy a lane's index to a temporary one, keeping its mtime: git trusts an entry's stat data
    unless the entry is as new as the index file ("racily clean"), so a copy dated now would hide a
    same-size edit made in the second the lane's index was written (the snapshot, and a verify bound
    to it, would miss that file)."""
    shutil.copy2(index, temp)


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
        if index.is_file() and not index.is_symlink():  # a link a command left is not read
            copy_index(index, temp)
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


def _union(a: frozenset[str] | None, b: frozenset[str] | None) -> frozenset[str] | None:
    return None if a is None or b is None else a | b


SNAPSHOT_DATE = "@0 +0000"
"""Author and committer date of snapshot commits: the same tree on the same base is the same commit,
so merge-tree answers remembered by commit ids stay valid across rounds."""


def snapshot_commit_body(tree: str, parent: str, lane: str) -> bytes:
    """The bytes of a lane's snapshot commit: ``git commit-tree TREE -p PARENT`` with the
    :data:`~paragents.lanes.git.IDENTITY` and :data:`SNAPSHOT_DATE` (so both give the same id)."""
    who = f"{IDENTITY['GIT_AUTHOR_NAME']} <{IDENTITY['GIT_AUTHOR_EMAIL']}> 0 +0000"
    return (
        f"tree {tree}\nparent {parent}\nauthor {who}\ncommitter {who}\n\nparagents snapshot of lane {lane}\n"
    ).encode()


def parse_stdin_merges(out: str, count: int) -> list[tuple[str, ...]] | None:
    """Read ``git merge-tree --stdin --name-only --no-messages -z`` output of ``count`` merges: per
    merge a status ("1" clean, "0" conflicts), the tree, the conflicting files, an empty field.
    Return the files of each merge, or None when the output is not in that shape."""
    parts = out.split("\0")
    found: list[tuple[str, ...]] = []
    i = 0
    for _ in range(count):
        if i + 1 >= len(parts) or parts[i] not in ("0", "1"):
            return None
        i += 2
        files: list[str] = []
        while i < len(parts) and parts[i]:
            files.append(parts[i])
            i += 1
        i += 1
        found.append(tuple(dict.fromkeys(files)))
    return found


async def merge_many(repo: Path, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, ...]]:
    """Conflicting files of each (ours, theirs) merge: ``git merge-tree --stdin`` processes, one per
    CPU (each runs its share of the merges one after another); one process per merge when this git
    has no ``--stdin``."""
    if not pairs:
        return []
    if len(pairs) == 1:
        return [await merge_conflicts(repo, *pairs[0])]
    jobs = max(1, min(len(pairs), os.cpu_count() or 1))
    shares = [list(range(i, len(pairs), jobs)) for i in range(jobs)]
    answers = await asyncio.gather(*(_merge_batch(repo, [pairs[i] for i in share]) for share in shares))
    found: list[tuple[str, ...]] = [()] * len(pairs)
    for share, answer in zip(shares, answers, strict=True):
        for i, files in zip(share, answer, strict=True):
            found[i] = files
    return found


async def _merge_batch(repo: Path, pairs: Sequence[tuple[str, str]]) -> list[tuple[str, ...]]:
    if len(pairs) > 1:
        result = await git(
            "merge-tree", "--stdin", "--name-only", "--no-messages", "-z",
            cwd=repo, check=False, stdin="".join(f"{a} {b}\n" for a, b in pairs),
        )  # fmt: skip
        if result.code == 0:
            parsed = parse_stdin_merges(result.out, len(pairs))
            if parsed is not None:
                return parsed
    return list(await asyncio.gather(*(merge_conflicts(repo, a, b) for a, b in pairs)))


@dataclass
class Predictor:
    """Runs prediction rounds for the lanes of one repository, incrementally.

    Each lane keeps a temporary index between rounds, so ``git add -A --verbose`` re-hashes and
    names only what changed since the last round. Its tree and snapshot commit are written only when
    a check needs them: a pair of lanes whose common paths are the same as last round and untouched
    on both sides since reuses its merge-tree answer (a 3-way merge of a path depends only on its
    three versions), and so does a lane against an unmoved base tip; any doubt (a quoted path, a pair
    not checked last round) re-runs merge-tree. The merges a round needs run in one
    ``git merge-tree --stdin`` process."""

    repo: Path
    _scratch: tempfile.TemporaryDirectory[str] = field(
        default_factory=lambda: tempfile.TemporaryDirectory(prefix="paragents-predict-")
    )
    _last: dict[str, Snapshot] = field(default_factory=dict)
    """Per lane path: the latest snapshot; ``tree``/``commit`` are "" while the index moved on since."""
    _merges: dict[tuple[str, str], tuple[str, ...]] = field(default_factory=dict)
    _pairs: dict[tuple[str, str], tuple[frozenset[str], tuple[str, ...]]] = field(default_factory=dict)
    _bases: dict[str, tuple[str, frozenset[str], tuple[str, ...]]] = field(default_factory=dict)
    """Per lane path: (base tip, paths both changed, conflicting files) of its last base check."""
    _upstream: dict[tuple[str, str], frozenset[str]] = field(default_factory=dict)
    _carry: dict[str, frozenset[str] | None] = field(default_factory=dict)
    """Per lane path: paths a :meth:`fresh` snapshot saw touched since the last round (None: unknown)."""
    git_calls: int = 0
    """git processes run by rounds so far (the bench reports it)."""

    def close(self) -> None:
        """Remove the temporary indexes (also done when the predictor is garbage-collected)."""
        self._scratch.cleanup()

    def last_snapshot(self, lane: LaneRecord) -> Snapshot | None:
        """The lane's snapshot from the latest round, or None (its commit may be "": see :meth:`fresh`)."""
        return self._last.get(lane.path)

    def _index(self, lane: LaneRecord) -> Path:
        scratch = Path(self._scratch.name) / str(lane.id)
        scratch.mkdir(exist_ok=True)
        return scratch / "index"

    async def _add(self, lane: LaneRecord) -> frozenset[str] | None:
        """Update the lane's temporary index from its working tree; return the paths touched since the
        previous call (None: unknown, e.g. the first call)."""
        path = Path(lane.path)
        temp = self._index(lane)
        first = not temp.exists()
        if first:
            self.git_calls += 1
            out = await git("rev-parse", "--path-format=absolute", "--git-path", "index", cwd=path)
            if Path(out.out.strip()).exists():
                copy_index(Path(out.out.strip()), temp)
        self.git_calls += 1
        env = {"GIT_INDEX_FILE": str(temp)}
        added = await git("add", "-A", "--verbose", cwd=path, env=env, what=f"snapshot of {path}")
        return None if first or lane.path not in self._last else _touched(added.out)

    async def _write(self, lane: LaneRecord, exact: bool) -> Snapshot:
        """Write the lane's tree from its temporary index (and, with ``exact``, its changed paths
        against the base); keep and return the snapshot (commit written by :meth:`_commit`)."""
        path = Path(lane.path)
        env = {"GIT_INDEX_FILE": str(self._index(lane))}
        self.git_calls += 1
        tree = (await git("write-tree", cwd=path, env=env, what=f"snapshot of {path}")).out.strip()
        last = self._last.get(lane.path)
        if last is not None and last.tree == tree and last.base == lane.base_commit:
            return last
        if exact or last is None or last.base != lane.base_commit:
            self.git_calls += 1
            changed = await changed_paths(path, lane.base_commit, tree)
        else:
            changed = last.changed
        snap = Snapshot(lane.name, tree, "", changed, lane.base_commit)
        self._last[lane.path] = snap
        return snap

    async def _commit(self, lane: LaneRecord) -> Snapshot:
        """The lane's snapshot with its tree and commit written."""
        snap = self._last[lane.path]
        if not snap.tree:
            snap = await self._write(lane, exact=False)
        if snap.commit:
            return snap
        self.git_calls += 1
        env = {**IDENTITY, "GIT_AUTHOR_DATE": SNAPSHOT_DATE, "GIT_COMMITTER_DATE": SNAPSHOT_DATE}
        out = await git(
            "commit-tree", snap.tree, "-p", lane.base_commit, "-m", f"paragents snapshot of lane {lane.name}",
            cwd=Path(lane.path), env=env,
        )  # fmt: skip
        snap = replace(snap, commit=out.out.strip())
        self._last[lane.path] = snap
        return snap

    async def _commit_many(self, lanes: Sequence[LaneRecord]) -> dict[str, str]:
        """Snapshot commits of ``lanes`` (by path): trees written where stale, then the commits not
        known yet written by one ``git hash-object -t commit -w --stdin-paths`` (the same bytes
        ``commit-tree`` would write with :data:`SNAPSHOT_DATE`)."""
        snaps = {}
        for lane, snap in zip(
            lanes, await asyncio.gather(*(self._tree(lane) for lane in lanes)), strict=True
        ):
            snaps[lane.path] = snap
        todo = [lane for lane in lanes if not snaps[lane.path].commit]
        if len(todo) > 1:
            scratch = Path(self._scratch.name)
            files = []
            for lane in todo:
                body = snapshot_commit_body(snaps[lane.path].tree, lane.base_commit, lane.name)
                file = scratch / f"commit-{lane.id}"
                file.write_bytes(body)
                files.append(str(file))
            self.git_calls += 1
            out = await git(
                "hash-object", "-t", "commit", "-w", "--stdin-paths",
                cwd=self.repo, stdin="\n".join(files) + "\n", what="writing snapshot commits",
            )  # fmt: skip
            for lane, commit in zip(todo, out.out.split(), strict=True):
                self._last[lane.path] = snaps[lane.path] = replace(snaps[lane.path], commit=commit)
        elif todo:
            snaps[todo[0].path] = await self._commit(todo[0])
        return {path: snap.commit for path, snap in snaps.items()}

    async def _tree(self, lane: LaneRecord) -> Snapshot:
        snap = self._last[lane.path]
        return snap if snap.tree else await self._write(lane, exact=False)

    async def fresh(self, lane: LaneRecord) -> Snapshot:
        """Snapshot the lane now, with tree and commit written (for diffs of its current change)."""
        _, touched = await self.snapshot(lane)
        # the next round must still see what this snapshot saw change (its pairs are re-checked)
        self._carry[lane.path] = _union(self._carry.get(lane.path, frozenset()), touched)
        return await self._commit(lane)

    async def _maybe_snapshot(
        self, lane: LaneRecord, only: frozenset[str] | None, trees: Mapping[str, str]
    ) -> tuple[Snapshot, frozenset[str] | None]:
        last = self._last.get(lane.path)
        if lane.name in trees:
            return await self.take(lane, trees[lane.name])
        if only is not None and lane.name not in only and last is not None and last.base == lane.base_commit:
            return last, frozenset()
        return await self.snapshot(lane)

    async def take(self, lane: LaneRecord, tree: str) -> tuple[Snapshot, frozenset[str] | None]:
        """Snapshot one lane from a tree already written (a remote lane's fetched files: its worktree
        is not read); return it with the paths touched since its previous snapshot (None: unknown).
        An unchanged tree runs no git; a changed one runs one ``git diff-tree``."""
        last = self._last.get(lane.path)
        if last is not None and last.tree == tree and last.base == lane.base_commit:
            return last, frozenset()
        self.git_calls += 1
        if last is None or not last.tree or last.base != lane.base_commit:
            changed = await changed_paths(Path(lane.path), lane.base_commit, tree)
            touched: frozenset[str] | None = None
        else:
            touched = await changed_paths(Path(lane.path), last.tree, tree)
            changed = last.changed | touched
        snap = Snapshot(lane.name, tree, "", changed, lane.base_commit)
        self._last[lane.path] = snap
        return snap, touched

    async def snapshot(self, lane: LaneRecord) -> tuple[Snapshot, frozenset[str] | None]:
        """Snapshot one lane (tree written, commit not necessarily); return it with the paths touched
        since its previous snapshot (None: unknown, e.g. the first snapshot)."""
        touched = await self._add(lane)
        last = self._last.get(lane.path)
        if last is None or touched is None or last.base != lane.base_commit:
            return await self._write(lane, exact=True), None
        if touched:
            last = replace(last, tree="", commit="", changed=last.changed | touched)
            self._last[lane.path] = last
        return last, touched

    async def round(
        self,
        lanes: Sequence[LaneRecord],
        only: frozenset[str] | None = None,
        trees: Mapping[str, str] | None = None,
    ) -> list[Conflict]:
        """One prediction round over ``lanes`` (those whose worktree exists); return the conflicts.
        ``only``: names of the lanes that may have changed since the last round (e.g. after a tool
        call of their session); the others keep their last snapshot without running git. ``trees``:
        lane name -> a tree that is the lane's files now (a remote lane's fetched snapshot): taken
        as it is (:meth:`take`), whatever ``only`` says."""
        present = [lane for lane in lanes if Path(lane.path).is_dir()]
        given = trees or {}
        results, tips = await asyncio.gather(
            asyncio.gather(*(self._maybe_snapshot(lane, only, given) for lane in present)),
            self._tips(present),
        )
        snaps = {lane.path: snap for lane, (snap, _) in zip(present, results, strict=True)}
        touched = {
            lane.path: _union(t, self._carry.pop(lane.path, frozenset()))
            for lane, (_, t) in zip(present, results, strict=True)
        }
        present = [lane for lane in present if not await self._landed(lane)]
        known: list[Conflict] = []
        pairs: dict[tuple[str, str], tuple[frozenset[str], tuple[str, ...]]] = {}
        checks: list[
            tuple[Conflict, LaneRecord, LaneRecord | str, tuple[str, str] | None, frozenset[str]]
        ] = []

        def reusable(
            before: tuple[frozenset[str], tuple[str, ...]] | None, common: frozenset[str], *paths: str
        ) -> bool:
            if before is None or before[0] != common:
                return False
            return all(touched[p] is not None and not (touched[p] or frozenset()) & common for p in paths)

        for la, lb in itertools.combinations(present, 2):
            common = snaps[la.path].changed & snaps[lb.path].changed
            if not common:
                continue
            key = (la.path, lb.path)
            before = self._pairs.get(key)
            if reusable(before, common, la.path, lb.path):
                assert before is not None
                pairs[key] = before
                if before[1]:
                    known.append(Conflict(la.name, lb.name, before[1]))
                continue
            checks.append((Conflict(la.name, lb.name, ()), la, lb, key, common))
        bases: dict[str, tuple[str, frozenset[str], tuple[str, ...]]] = {}
        upstream = await self._upstream_paths(present, tips)
        for lane in present:
            tip = tips.get(lane.base_ref, lane.base_commit)
            if tip == lane.base_commit:
                continue
            common = snaps[lane.path].changed & upstream[(lane.base_commit, tip)]
            if not common:
                continue
            prev = self._bases.get(lane.path)
            if prev is not None and prev[0] == tip and reusable((prev[1], prev[2]), common, lane.path):
                bases[lane.path] = prev
                if prev[2]:
                    known.append(Conflict(lane.name, lane.base_ref, prev[2], against_base=True))
                continue
            checks.append(
                (Conflict(lane.name, lane.base_ref, (), against_base=True), lane, tip, None, common)
            )
        need = {c[1].path: c[1] for c in checks} | {
            c[2].path: c[2] for c in checks if not isinstance(c[2], str)
        }
        commits = await self._commit_many(list(need.values()))
        merges = [
            (commits[la.path], other if isinstance(other, str) else commits[other.path])
            for _, la, other, _, _ in checks
        ]
        found = await self._merge_all(merges)
        for (_, lane, other, pair, common), files in zip(checks, found, strict=True):
            if pair is not None:
                pairs[pair] = (common, files)
            else:
                assert isinstance(other, str)
                bases[lane.path] = (other, common, files)
        self._pairs = pairs
        self._bases = bases
        return known + [
            replace(conflict, files=files)
            for (conflict, *_), files in zip(checks, found, strict=True)
            if files
        ]

    async def _landed(self, lane: LaneRecord) -> bool:
        """True when the lane's work landed and it has not changed since (its tree is the tree that
        landed): it is not predicted against anything, least of all its own landed work."""
        if not lane.landed_tree:
            return False
        return (await self._tree(lane)).tree == lane.landed_tree

    async def _merge_all(self, merges: Sequence[tuple[str, str]]) -> list[tuple[str, ...]]:
        """merge-tree answers for ``merges`` (commit pairs), remembered: commits never change, so
        neither does the answer. The ones not known yet run in one process."""
        todo = list(dict.fromkeys(m for m in merges if m not in self._merges))
        if todo:
            if len(self._merges) > 4096:
                self._merges.clear()
            self.git_calls += min(len(todo), os.cpu_count() or 1)
            self._merges.update(zip(todo, await merge_many(self.repo, todo), strict=True))
        return [self._merges[m] for m in merges]

    async def _tips(self, lanes: Sequence[LaneRecord]) -> dict[str, str]:
        refs = sorted({lane.base_ref for lane in lanes})
        if not refs:
            return {}
        self.git_calls += 1
        out = await git("rev-parse", *[f"{ref}^{{commit}}" for ref in refs], cwd=self.repo, check=False)
        return dict(zip(refs, out.out.split(), strict=False)) if out.ok else {}

    async def _upstream_paths(
        self, lanes: Sequence[LaneRecord], tips: dict[str, str]
    ) -> dict[tuple[str, str], frozenset[str]]:
        """Paths changed on each lane's base branch since its base commit (remembered by commit ids)."""
        wanted = {(lane.base_commit, tips[lane.base_ref]) for lane in lanes if lane.base_ref in tips}
        todo = [w for w in wanted if w not in self._upstream and w[0] != w[1]]
        self.git_calls += len(todo)
        for w, paths in zip(
            todo, await asyncio.gather(*(changed_paths(self.repo, *w) for w in todo)), strict=True
        ):
            self._upstream[w] = paths
        return {w: self._upstream.get(w, frozenset()) for w in wanted}
