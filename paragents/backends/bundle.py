"""The host side of the git-bundle protocol: a lane's base goes out as a bundle, its work comes back
as bundles of snapshot commits fetched into the user's repository (docs/remote.md).

What comes back is untrusted: the bundle's size is capped, ``git fetch`` runs with
``transfer.fsckObjects`` (malformed objects, ``.git`` paths in trees and bad ``.gitmodules`` are
refused) and writes only the lane's own ``refs/paragents/remote/<name>/snapshot``; the commit ids the
lane reports are checked against what the bundle really carried."""

from __future__ import annotations

import re
import tempfile
from pathlib import Path

from paragents.backends.base import BackendError, LaneSpec, Snapshot
from paragents.lanes.errors import LaneError
from paragents.lanes.git import git

_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")
STRICT = ("hasDotgit", "hasDotdot", "hasDotgitmodules", "fullPathname", "badFilemode", "nullSha1")
"""fsck findings that are only warnings by default and refuse a lane's snapshot here: a ``.git`` entry
in a tree (a repository planted for the host's git), ``..`` or ``/`` in a name, odd modes."""
FSCK = (
    "-c", "transfer.fsckObjects=true", "-c", "fetch.fsckObjects=true",
    *(arg for msg in STRICT for arg in ("-c", f"fetch.fsck.{msg}=error")),
)  # fmt: skip
"""Every fetch of what a lane sent checks each object with git-fsck's rules, the :data:`STRICT` ones
as errors (git applies them to bundles only from 2.46 on: :func:`bad_paths` checks the paths on every
version)."""
_BAD_NAMES = frozenset({".git", "..", "."})


async def bad_paths(repo: Path, commit: str, known: list[str]) -> list[str]:
    """Paths of the objects ``commit`` brought (not reachable from ``known``) that a checkout must
    never write: a component ``.git`` (any case, also ``git~1`` and with trailing dots/spaces, the
    forms Windows and macOS map onto it), ``.`` or ``..``."""
    listed = await git("rev-list", "--objects", commit, *(f"^{k}" for k in known if k), cwd=repo, check=False)
    found = []
    for line in listed.out.splitlines():
        _, _, path = line.partition(" ")
        for part in path.split("/"):
            name = part.lower().rstrip(". ")
            if name in _BAD_NAMES or name == "git~1" or part in (".", ".."):
                found.append(path)
                break
    return found


def is_sha(text: str) -> bool:
    """True for a full SHA-1 or SHA-256 object id in lower case."""
    return bool(_SHA.match(text))


async def rev(repo: Path, ref: str) -> str | None:
    """The commit ``ref`` names in ``repo``, or None."""
    result = await git("rev-parse", "--verify", "-q", f"{ref}^{{commit}}", cwd=repo, check=False)
    return result.out.strip() if result.ok else None


async def last_snapshot(spec: LaneSpec) -> str | None:
    """The lane's last fetched snapshot commit in the user's repository, or None."""
    return await rev(spec.repo, spec.snapshot_ref)


async def known_commits(spec: LaneSpec) -> list[str]:
    """Commits the user's repository has that the lane has too: its base and its last snapshot (a
    snapshot bundle leaves them out)."""
    found = [spec.base_commit]
    snap = await last_snapshot(spec)
    if snap and snap not in found:
        found.append(snap)
    return found


async def base_bundle(spec: LaneSpec, folder: Path, *, with_snapshot: bool) -> tuple[Path, str]:
    """Write the bundle a new container/Pod starts from into ``folder``; return its path and the
    snapshot ref it carries ("" when none). It holds the base (``spec.base_ref``, set to
    ``spec.base_commit`` here) and, ``with_snapshot``, the last fetched snapshot."""
    try:
        await git("update-ref", spec.base_ref, spec.base_commit, cwd=spec.repo, what="git update-ref")
        refs = [spec.base_ref]
        snap_ref = ""
        if with_snapshot and await last_snapshot(spec):
            refs.append(spec.snapshot_ref)
            snap_ref = spec.snapshot_ref
        path = folder / "base.bundle"
        await git("bundle", "create", "-q", path, *refs, cwd=spec.repo, what="git bundle create")
    except LaneError as exc:
        raise BackendError(f"cannot bundle lane {spec.name}'s base: {exc}") from exc
    return path, snap_ref


async def push_bundle(spec: LaneSpec, ref: str, folder: Path) -> bytes:
    """The bytes of a bundle of ``ref`` (a commit made on this machine for the lane: see
    :meth:`~paragents.backends.base.ExecutionBackend.adopt`) leaving out what the lane has (its base
    and last fetched snapshot)."""
    path = folder / "host.bundle"
    exclude = [f"^{k}" for k in await known_commits(spec)]
    try:
        await git("bundle", "create", "-q", path, ref, *exclude, cwd=spec.repo, what="git bundle create")
    except LaneError as exc:
        raise BackendError(f"cannot bundle what changed in lane {spec.name} on this machine: {exc}") from exc
    return path.read_bytes()


def parse_header(out: bytes) -> tuple[str, str, str, bytes]:
    """Split the snapshot script's output into (commit, head, tree, bundle bytes); BackendError when
    the first line is not three object ids."""
    line, _, rest = out.partition(b"\n")
    parts = line.decode("ascii", "replace").split()
    if len(parts) != 3 or not all(is_sha(p) for p in parts):
        shown = line[:120].decode("utf-8", "replace")
        raise BackendError(f"the lane answered the snapshot with {shown!r}, not 'COMMIT HEAD TREE'")
    return parts[0], parts[1], parts[2], rest


_SHAPES: dict[str, tuple[str, str]] = {}
"""Commit id -> (its tree, its first parent), for commits already checked here (commits never change)."""


async def shape_of(repo: Path, commit: str) -> tuple[str, str] | None:
    """(tree, first parent) of ``commit`` in ``repo`` (remembered), or None when git cannot say."""
    if commit in _SHAPES:
        return _SHAPES[commit]
    out = await git("rev-parse", f"{commit}^{{tree}}", f"{commit}^1", cwd=repo, check=False)
    parts = out.out.split()
    if not out.ok or len(parts) != 2:
        return None
    if len(_SHAPES) > 4096:
        _SHAPES.clear()
    _SHAPES[commit] = (parts[0], parts[1])
    return _SHAPES[commit]


async def fetch_snapshot(
    spec: LaneSpec, out: bytes, *, max_bytes: int, known: list[str] | None = None
) -> Snapshot:
    """Fetch the snapshot the lane's script printed (header + bundle) into ``spec.repo`` and move
    ``spec.snapshot_ref`` to it (with a reflog entry, so earlier snapshots stay reachable).
    ``known``: what :func:`known_commits` returned before the script ran (its base, its last
    snapshot); read again when None. The reported tree and head are checked against the commit
    (a lane may lie about them) also when nothing new came back."""
    commit, head, tree, data = parse_header(out)
    known = known if known is not None else await known_commits(spec)
    previous = known[1] if len(known) > 1 else None
    if not data:
        if commit != previous and commit != spec.base_commit:
            raise BackendError(f"lane {spec.name} sent no bundle for its new snapshot {commit[:12]}")
        if await shape_of(spec.repo, commit) != (tree, head):
            raise BackendError(f"lane {spec.name}'s snapshot {commit[:12]} does not match its tree and head")
        return Snapshot(commit, head, tree, spec.snapshot_ref, changed=False)
    if len(data) > max_bytes:
        raise BackendError(
            f"lane {spec.name}'s snapshot is {len(data)} bytes, over the {max_bytes} byte limit "
            "(lanes.container.max_snapshot_bytes): large build outputs belong in .gitignore"
        )
    incoming = f"refs/paragents/remote/{spec.name}/incoming"
    with tempfile.TemporaryDirectory(prefix="paragents-snap-") as tmp:
        path = Path(tmp) / "snapshot.bundle"
        path.write_bytes(data)
        result = await git(
            *FSCK, "fetch", "-q", "--no-tags", "--no-write-fetch-head", path,
            f"+refs/paragents/snapshot:{incoming}",
            cwd=spec.repo, check=False,
        )  # fmt: skip
        if not result.ok:
            raise BackendError(f"lane {spec.name}'s snapshot was refused by git: {result.err[:500]}")
    names = (f"{incoming}^{{commit}}", f"{incoming}^{{tree}}", f"{incoming}^1")
    got_out = await git("rev-parse", *names, cwd=spec.repo, check=False)
    got, got_tree, got_head = [*got_out.out.split(), "", "", ""][:3]
    bad = await bad_paths(spec.repo, got, known) if got else []
    problem = None
    if got != commit:
        problem = f"lane {spec.name} reported snapshot {commit[:12]} but sent {got[:12]}"
    elif bad:
        problem = (
            f"lane {spec.name}'s snapshot was refused by git's rules: it holds {bad[0]!r}, a path a "
            "checkout must never write"
        )
    elif (got_tree, got_head) != (tree, head):
        problem = f"lane {spec.name}'s snapshot {commit[:12]} does not match its tree and head"
    if problem is not None:
        await git("update-ref", "-d", incoming, cwd=spec.repo, check=False)
        raise BackendError(problem)
    moves = f"delete {incoming}\nupdate {spec.snapshot_ref} {commit}\n"
    await git(
        "update-ref", "--create-reflog", "-m", "paragents snapshot", "--stdin",
        cwd=spec.repo, stdin=moves, what="git update-ref",
    )  # fmt: skip
    _SHAPES[commit] = (tree, head)
    return Snapshot(commit, head, tree, spec.snapshot_ref, changed=commit != previous, transferred=len(data))
