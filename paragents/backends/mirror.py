"""A remote lane's worktree on this machine, kept in step with its container or Pod.

A ``container`` or ``kubernetes`` lane still has its git worktree here (made by
:mod:`paragents.lanes.create`), but its files live in its place: this worktree is their **mirror**.
:meth:`Mirror.sync` fetches the lane's snapshot (:meth:`~paragents.backends.base.ExecutionBackend.
snapshot`) and writes it into the worktree, so everything that reads a lane's worktree (conflict
prediction, the Lanes screen's diff, ``lanes merge``, ``lanes gc``, the verify result's tree) works as
for a local lane. The lane's branch here follows its head there.

It is a three-way sync against the snapshot mirrored last (``refs/paragents/remote/<name>/mirrored``):

- only the lane changed (the usual case): its files are written here (``git read-tree -u --reset``
  with a private index that tracks what the worktree holds, so files the lane deleted go too), its
  branch moves to the lane's head (unless the branch here is ahead of it: a commit paragents made here
  that the lane has not taken yet), and the index here is reset to that head;
- only this machine changed (paragents committed the lane's work here, ``lanes merge --commit``, a
  graft, a ``git stash``, a hand edit): the lane takes it (:meth:`~paragents.backends.base.
  ExecutionBackend.adopt`, which refuses when the lane's files changed meanwhile);
- both changed: the lane wins; what this machine held is kept as a commit at
  ``refs/paragents/remote/<name>/host`` (with a reflog) and a note says so. Nothing is lost.

Only git runs here, on objects fetched through :func:`~paragents.backends.bundle.fetch_snapshot`'s
checks (no ``.git`` paths); nothing the lane wrote is executed."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path

from paragents.backends.base import BackendError, ExecutionBackend, Snapshot
from paragents.backends.bundle import shape_of
from paragents.lanes.errors import LaneError
from paragents.lanes.git import IDENTITY, git
from paragents.lanes.predict import SNAPSHOT_DATE

MIRRORED_REF = "refs/paragents/remote/{name}/mirrored"
"""The snapshot the lane's worktree here holds (what the next sync compares both sides with)."""
HOST_REF = "refs/paragents/remote/{name}/host"
"""A commit of this machine's copy of the lane: what a lane adopts, or what was kept when both sides
changed (with a reflog)."""
SNAPSHOT_MESSAGE = "paragents snapshot"
"""The message of snapshot commits (the lane's SNAPSHOT script writes the same bytes)."""


def mirror_dir(worktree: Path) -> Path:
    """Beside the worktree, never inside it: ``<lane>.mirror`` holds the mirror's private index."""
    return worktree.parent / f"{worktree.name}.mirror"


@dataclass(frozen=True)
class SyncResult:
    """What a sync did: the lane's snapshot now, whether this machine's worktree took the lane's
    files (``pulled``) or the lane took this machine's (``pushed``), and a note for people."""

    snapshot: Snapshot
    pulled: bool = False
    pushed: bool = False
    note: str | None = None


class Mirror:
    """The worktree of one remote lane on this machine (see the module docstring). One sync at a
    time per lane (an asyncio lock on the caller's loop, which must be the backend's)."""

    def __init__(self, backend: ExecutionBackend, worktree: Path) -> None:
        self.backend = backend
        self.worktree = worktree
        self.spec = backend.spec
        self.index = mirror_dir(worktree) / "index"
        self.mirrored_ref = MIRRORED_REF.format(name=self.spec.name)
        self.host_ref = HOST_REF.format(name=self.spec.name)
        self.lock = asyncio.Lock()

    async def _git(self, *args: str, index: bool = False, env: dict[str, str] | None = None) -> str:
        extra = dict(env or {})
        if index:
            extra["GIT_INDEX_FILE"] = str(self.index)
        try:
            return (
                await git(*args, cwd=self.worktree, env=extra, what=f"git {args[0]} in lane {self.spec.name}")
            ).out
        except LaneError as exc:
            raise BackendError(f"cannot keep lane {self.spec.name}'s worktree in step: {exc}") from exc

    async def _refs(self, *refs: str) -> list[str]:
        """The commits the full ref names ``refs`` point at ("" for one that does not exist): one
        ``git for-each-ref``."""
        out = await git(
            "for-each-ref", "--format=%(objectname) %(refname)", *refs, cwd=self.worktree, check=False
        )
        found: dict[str, str] = {}
        for line in out.out.splitlines():
            oid, _, name = line.partition(" ")
            found[name] = oid
        return [found.get(ref, "") for ref in refs]

    async def host_tree(self) -> str:
        """The tree of the worktree's files here now (tracked and untracked, not ignored ones)."""
        self.index.parent.mkdir(parents=True, exist_ok=True)
        await self._git("add", "-A", index=True)
        return (await self._git("write-tree", index=True)).strip()

    async def _commit(self, tree: str, parent: str) -> str:
        env = {**IDENTITY, "GIT_AUTHOR_DATE": SNAPSHOT_DATE, "GIT_COMMITTER_DATE": SNAPSHOT_DATE}
        return (await self._git("commit-tree", tree, "-p", parent, "-m", SNAPSHOT_MESSAGE, env=env)).strip()

    async def sync(self, *, fast: bool = False) -> SyncResult:
        """Bring both sides in step (see the module docstring). Raises BackendUnreachable / LaneGone
        from the backend, BackendError when git refuses here.

        ``fast`` (prediction rounds): while the branch here has not moved, only the lane is looked
        at, and its changes are written here with ``git read-tree -m -u`` (a two-way merge from the
        snapshot mirrored last), which refuses to overwrite a file changed here: then (and when the
        lane made commits) the full three-way sync runs. Files changed here that the lane did not
        touch stay as they are until the next full sync takes them to the lane."""
        async with self.lock:
            return await self._sync(fast)

    async def _sync(self, fast: bool) -> SyncResult:
        branch = f"refs/heads/{self.spec.branch}"
        mirrored, host_head, last = await self._refs(self.mirrored_ref, branch, self.spec.snapshot_ref)
        m_tree, m_head = (await shape_of(self.spec.repo, mirrored) or ("", "")) if mirrored else ("", "")
        known = [self.spec.base_commit, *([last] if last and last != self.spec.base_commit else [])]
        snap: Snapshot | None = None
        if fast and mirrored and host_head == m_head and self.index.exists():
            snap = await self.backend.snapshot(known=known)
            if snap.commit == mirrored:
                return SyncResult(snap)
            if snap.head == host_head:
                merged = await git(
                    "read-tree", "-m", "-u", mirrored, snap.commit,
                    cwd=self.worktree, env={"GIT_INDEX_FILE": str(self.index)}, check=False,
                )  # fmt: skip
                if merged.ok:
                    await self._git("update-ref", self.mirrored_ref, snap.commit)
                    return SyncResult(snap, pulled=True)
        host_tree = await self.host_tree() if mirrored else ""
        host_changed = bool(mirrored) and (host_tree != m_tree or host_head != m_head)
        if snap is None:
            snap = await self.backend.snapshot(known=known)
        note = None
        if host_changed:
            if snap.tree == m_tree and snap.head == m_head:
                return await self._push(host_tree, host_head, m_tree)
            keep = await self._commit(host_tree, host_head)
            await self._git(
                "update-ref", "--create-reflog", "-m", "kept: both sides changed", self.host_ref, keep
            )
            note = (
                f"lane {self.spec.name} changed in its {self.backend.where} while its worktree here changed "
                f"too: the lane's files were kept; this machine's copy is kept as {keep[:12]} "
                f"({self.host_ref})"
            )
        elif mirrored == snap.commit:
            return SyncResult(snap)
        await self._pull(snap, host_head, branch)
        return SyncResult(snap, pulled=True, note=note)

    async def _push(self, host_tree: str, host_head: str, expect: str) -> SyncResult:
        """The lane takes this machine's changes (it did not change since the last sync)."""
        commit = await self._commit(host_tree, host_head)
        await self._git("update-ref", "--create-reflog", "-m", "paragents adopt", self.host_ref, commit)
        await self.backend.adopt(self.host_ref, expect)
        await self._git(
            "update-ref", "--create-reflog", "-m", "paragents adopt", self.spec.snapshot_ref, commit
        )
        await self._git("update-ref", self.mirrored_ref, commit)
        snap = Snapshot(commit, host_head, host_tree, self.spec.snapshot_ref)
        return SyncResult(snap, pushed=True)

    async def _pull(self, snap: Snapshot, host_head: str, branch: str) -> None:
        """Write the lane's snapshot into the worktree; its branch follows the lane's head."""
        if snap.head != host_head:
            ahead = await git(
                "merge-base", "--is-ancestor", snap.head, host_head, cwd=self.worktree, check=False
            )
            if not ahead.ok:
                await self._git(
                    "update-ref", "-m", "paragents: the lane's head", branch, snap.head, host_head
                )
        self.index.parent.mkdir(parents=True, exist_ok=True)
        if not self.index.exists():  # the first sync: the worktree holds its HEAD (a new lane's base)
            await self._git("read-tree", "HEAD", index=True)
        await self._git("read-tree", "-u", "--reset", snap.commit, index=True)
        await self._git("reset", "-q")
        await self._git("update-ref", self.mirrored_ref, snap.commit)
