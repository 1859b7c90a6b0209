"""The evidence of each candidate: its patch against the group's base commit, diffstat, files and
hunks touched, which other candidates it overlaps (``git merge-tree`` of their commits, as the lanes'
predictor does), tokens, cost and wall time; and the order they are shown in (execution evidence
first: passing verify, then smaller diff). Nothing here imports Textual."""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from unidiff import PatchSet
from unidiff.errors import UnidiffParseError

from paragents.fanout.verify import VerifyResult
from paragents.lanes.commit import commit_on_branch
from paragents.lanes.git import git
from paragents.lanes.predict import changed_paths, merge_conflicts
from paragents.store import CandidateRecord


@dataclass(frozen=True)
class Hunk:
    """One hunk of a candidate's patch: ``file``, its ``header`` (``@@ -a,b +c,d @@``), and its lines."""

    file: str
    header: str
    added: int
    removed: int

    @property
    def key(self) -> str:
        return f"{self.file} {self.header}"


def parse_hunks(patch: str) -> list[Hunk]:
    """Return the hunks of a unified diff (binary files and renames without content have none)."""
    try:
        files = PatchSet(patch)
    except UnidiffParseError:
        return []
    hunks: list[Hunk] = []
    for pf in files:
        for h in pf:
            header = f"@@ -{h.source_start},{h.source_length} +{h.target_start},{h.target_length} @@"
            hunks.append(Hunk(pf.path, header, h.added, h.removed))
    return hunks


def select_hunks(patch: str, keys: set[str]) -> str:
    """Return a patch holding only the hunks of ``patch`` whose :attr:`Hunk.key` is in ``keys`` (file
    headers kept for each file that keeps a hunk); empty when none is selected."""
    try:
        files = PatchSet(patch)
    except UnidiffParseError:
        return ""
    out: list[str] = []
    for pf in files:
        kept = [
            h
            for h in pf
            if f"{pf.path} @@ -{h.source_start},{h.source_length} +{h.target_start},{h.target_length} @@"
            in keys
        ]
        if not kept:
            continue
        head = str(pf).split("\n@@", 1)[0]  # the diff --git / --- / +++ lines
        out.append(head.rstrip("\n") + "\n" + "".join(str(h) for h in kept))
    return "".join(part if part.endswith("\n") else part + "\n" for part in out)


async def commit_work(lane_path: Path, message: str) -> str:
    """Commit everything the candidate left in its lane (untracked files too) on the lane's own branch
    (plumbing on ``refs/heads/paragents/<name>``, never by following HEAD: a candidate that pointed
    its HEAD at another branch is refused), so its work is a commit that the lanes merge flow and
    ``lanes gc`` know; return the branch's tip."""
    return await commit_on_branch(lane_path, message)


async def patch_of(repo: Path, base: str, head: str) -> tuple[str, list[dict[str, Any]]]:
    """Return (the patch ``base..head``, numstat rows ``{path, added, deleted, removed}``; ``removed``
    is True for a file the candidate deleted)."""
    patch = (await git("diff", "--no-color", "--no-ext-diff", base, head, cwd=repo)).out
    stat = (await git("diff", "--numstat", "--no-renames", base, head, cwd=repo)).out
    gone = await git("diff", "--name-only", "--no-renames", "--diff-filter=D", "-z", base, head, cwd=repo)
    removed = set(filter(None, gone.out.split("\0")))
    rows: list[dict[str, Any]] = []
    for line in stat.splitlines():
        added, deleted, path = line.split("\t", 2)
        rows.append(
            {
                "path": path,
                "added": int(added) if added != "-" else 0,
                "deleted": int(deleted) if deleted != "-" else 0,
                "removed": path in removed,
            }
        )
    return patch, rows


def is_test_path(path: str) -> bool:
    """A file holding tests by the usual names (``tests/``, ``test_*.py``, ``*_test.go``, ``*.spec.ts``)."""
    name = path.rsplit("/", 1)[-1]
    parts = path.split("/")[:-1]
    return (
        any(p in ("test", "tests", "__tests__", "spec") for p in parts)
        or name.startswith("test_")
        or any(mark in name for mark in ("_test.", ".test.", ".spec.", "_spec."))
    )


async def overlaps(repo: Path, base: str, heads: dict[int, str]) -> dict[int, dict[int, list[str]]]:
    """For each pair of candidates (index -> head commit) that changed a common file: the files
    ``git merge-tree`` says conflict (empty list: they overlap but merge cleanly)."""
    changed = {idx: await changed_paths(repo, base, head) for idx, head in heads.items()}
    found: dict[int, dict[int, list[str]]] = {idx: {} for idx in heads}
    for a, b in itertools.combinations(sorted(heads), 2):
        if not changed[a] & changed[b]:
            continue
        conflict = list(await merge_conflicts(repo, heads[a], heads[b]))
        found[a][b] = found[b][a] = conflict
    return found


@dataclass
class CandidateView:
    """A candidate with its evidence read back, as the compare screen and the headless output use it."""

    record: CandidateRecord
    verify: VerifyResult | None
    files: list[dict[str, Any]] = field(default_factory=list)
    hunks: list[Hunk] = field(default_factory=list)
    overlaps: dict[int, list[str]] = field(default_factory=dict)
    tokens: int = 0
    cost: float | None = None
    seconds: float | None = None
    judge_rank: int | None = None
    judge_reason: str = ""

    @property
    def name(self) -> str:
        return self.record.session_name

    @property
    def lines(self) -> int:
        return sum(int(f["added"]) + int(f["deleted"]) for f in self.files)

    @property
    def worker_failed(self) -> bool:
        return self.record.state == "failed"

    @property
    def has_patch(self) -> bool:
        return bool(self.record.patch)

    @property
    def deleted_tests(self) -> list[str]:
        """Test files this candidate deleted (a risk shown beside its verify result)."""
        return [str(f["path"]) for f in self.files if f.get("removed") and is_test_path(str(f["path"]))]

    def diffstat(self) -> str:
        added = sum(int(f["added"]) for f in self.files)
        deleted = sum(int(f["deleted"]) for f in self.files)
        return f"{len(self.files)} file(s) +{added} -{deleted}"


def overlap_cell(c: CandidateView, order: Sequence[CandidateView]) -> str:
    """What the compare screen and ``paragents fanout`` show of ``c``'s overlaps, e.g. ``"1 file: #2!"``:
    how many of its files other candidates changed too, then those candidates by their place in
    ``order`` (the evidence order, the table's ``#``; "!": ``git merge-tree`` predicts a conflict).
    Two candidates that changed the same one file both show "1 file" (it used to be each other's name
    suffix, read as differing counts); "-" when it shares no file."""
    place = {o.record.idx: n for n, o in enumerate(order, 1)}
    files = {o.record.idx: {str(f["path"]) for f in o.files} for o in order}
    others = sorted((k for k in c.overlaps if k in place), key=lambda k: place[k])
    if not others:
        return "-"
    mine = {str(f["path"]) for f in c.files}
    shared: set[str] = set()
    for k in others:
        shared |= mine & files[k]
    names = ", ".join(f"#{place[k]}{'!' if c.overlaps[k] else ''}" for k in others)
    return f"{len(shared)} file{'' if len(shared) == 1 else 's'}: {names}" if shared else names


def verify_class(c: CandidateView) -> int:
    """0 passed, 1 not verified, 2 verify failed or timed out."""
    if c.verify is None:
        return 1
    return 0 if c.verify.passed else 2


def evidence_order(cands: list[CandidateView]) -> list[CandidateView]:
    """Execution evidence first: a worker that failed or left no patch last; then passing verify before
    unverified before failing; then one that deleted test files after one that did not; then the
    smaller diff; then the candidate's number."""
    return sorted(
        cands,
        key=lambda c: (
            c.worker_failed or not c.has_patch,
            verify_class(c),
            bool(c.deleted_tests),
            c.lines,
            c.record.idx,
        ),
    )


def candidate_view(record: CandidateRecord) -> CandidateView:
    """Read a stored candidate's evidence back."""
    ev = record.evidence
    return CandidateView(
        record=record,
        verify=VerifyResult.from_dict(record.verify) if record.verify else None,
        files=list(ev.get("files", [])),
        hunks=parse_hunks(record.patch or ""),
        overlaps={int(k): list(v) for k, v in dict(ev.get("overlaps", {})).items()},
        tokens=int(ev.get("tokens", 0)),
        cost=ev.get("cost"),
        seconds=ev.get("seconds"),
    )
