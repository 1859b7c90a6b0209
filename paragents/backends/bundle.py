"""The host side of the git-bundle protocol: a lane's base goes out as a bundle, its work comes back
as bundles of snapshot commits fetched into the user's repository (docs/remote.md).

What comes back is untrusted: the bundle's size is capped, ``git fetch`` runs with
``transfer.fsckObjects`` (malformed objects, ``.git`` paths in trees and bad ``.gitmodules`` are
refused) and writes only the lane's own ``refs/paragents/remote/<name>/snapshot``; the commit ids the
lane reports are checked against what the bundle really carried."""

from __future__ import annotations

import hashlib
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
_RACED = re.compile(r"bad object (refs/\S+)")
FETCH_TRIES = 3
"""Times a snapshot's ``git fetch`` runs when it fails only because another lane's fetch wrote a ref
meanwhile (:func:`raced`)."""


def raced(err: str, own: str) -> bool:
    """True when a ``git fetch`` failed on a ref that is not its own ``own``: after unpacking, fetch
    checks that what it got connects to every ref of the repository, and a ref another lane's fetch
    wrote at that moment can read as a "bad object" (seen once in ~560 fetches with 8 lanes fetching
    into one repository at once). What this fetch itself brought is never retried."""
    found = _RACED.search(err)
    return found is not None and found.group(1) != own


async def bad_paths(repo: Path, commit: str, known: list[str]) -> list[str] | None:
    """Paths of the objects ``commit`` brought (not reachable from ``known``) that a checkout must
    never write: a component ``.git`` (any case, also ``git~1`` and with trailing dots/spaces, the
    forms Windows and macOS map onto it), ``.`` or ``..``. None when git cannot list them (an object
    is missing: the snapshot is incomplete)."""
    listed = await git("rev-list", "--objects", commit, *(f"^{k}" for k in known if k), cwd=repo, check=False)
    if not listed.ok:
        return None
    found = []
    for line in listed.out.splitlines():
        _, _, path = line.partition(" ")
        for part in path.split("/"):
            name = part.lower().rstrip(". ")
            if name in _BAD_NAMES or name == "git~1" or part in (".", ".."):
                found.append(path)
                break
    return found


SNAPSHOT_AUTHOR = "paragents <paragents@localhost> 0 +0000"
"""Author and committer line of every snapshot commit (the lane's scripts: :data:`~paragents.backends.
scripts.GIT_ENV` and fixed dates; the mirror's commits here: the same)."""


def snapshot_id(tree: str, head: str) -> str:
    """The id of the snapshot commit of ``tree`` on ``head``: what the lane's snapshot scripts (and
    the mirror here) write, byte for byte, so a reported commit id proves its tree and parent."""
    body = (
        f"tree {tree}\nparent {head}\nauthor {SNAPSHOT_AUTHOR}\ncommitter {SNAPSHOT_AUTHOR}\n\n"
        "paragents snapshot\n"
    ).encode()
    algorithm = hashlib.sha1 if len(tree) == 40 else hashlib.sha256
    return algorithm(b"commit %d\0" % len(body) + body).hexdigest()


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
    snapshot); read again when None. The reported commit must be the snapshot commit of the reported
    tree and head (:func:`snapshot_id`: a lane may lie about them), also when nothing new came back,
    and the one the bundle carries."""
    commit, head, tree, data = parse_header(out)
    if snapshot_id(tree, head) != commit:
        raise BackendError(
            f"lane {spec.name} reported snapshot {commit[:12]}, which is not the snapshot commit of its "
            "tree and head"
        )
    known = known if known is not None else await known_commits(spec)
    previous = known[1] if len(known) > 1 else None
    if not data:
        if commit != previous:
            raise BackendError(f"lane {spec.name} sent no bundle for its new snapshot {commit[:12]}")
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
        for _ in range(FETCH_TRIES):
            result = await git(
                *FSCK, "fetch", "-q", "--no-tags", "--no-write-fetch-head", "--no-auto-gc", path,
                f"+refs/paragents/snapshot:{incoming}",
                cwd=spec.repo, check=False,
            )  # fmt: skip
            if result.ok or not raced(result.err, incoming):
                break
        if not result.ok:
            raise BackendError(f"lane {spec.name}'s snapshot was refused by git: {result.err[:500]}")
    bad = await bad_paths(spec.repo, commit, known)
    problem = None
    if bad is None:
        problem = f"lane {spec.name} reported snapshot {commit[:12]} but its bundle does not hold it"
    elif bad:
        problem = (
            f"lane {spec.name}'s snapshot was refused by git's rules: it holds {bad[0]!r}, a path a "
            "checkout must never write"
        )
    if problem is None:
        moves = f"delete {incoming} {commit}\nupdate {spec.snapshot_ref} {commit}\n"  # delete checks it
        moved = await git(
            "update-ref", "--create-reflog", "-m", "paragents snapshot", "--stdin",
            cwd=spec.repo, stdin=moves, check=False,
        )  # fmt: skip
        if moved.ok:
            _SHAPES[commit] = (tree, head)
            return Snapshot(
                commit, head, tree, spec.snapshot_ref, changed=commit != previous, transferred=len(data)
            )
        problem = f"lane {spec.name} reported snapshot {commit[:12]} but its bundle holds another commit"
        if "verify" not in moved.err and "expected" not in moved.err:
            problem = f"cannot record lane {spec.name}'s snapshot here: {moved.err[:300]}"
    await git("update-ref", "-d", incoming, cwd=spec.repo, check=False)
    raise BackendError(problem)
