"""A linked worktree's own object store in the sandbox, and the verifying way its objects come home.

A lane shares its repository's ``objects/`` with the main checkout and every other lane. If a
sandboxed command could write there it could *replace* an object (``os.replace`` of the loose object
of ``main:app.py``), and every checkout, lane and clone would then read the substituted content under
the old name: history rewritten without a single ref moving. So inside the sandbox the common
``objects/`` is covered by a private store (:func:`prepare_store`,
``<state>/git-objects/<key>/objects``, bound over it) whose ``info/alternates`` names the real store,
bound read-only at ``objects/.paragents-common``: git in the lane reads all history and writes new
objects, and can replace nothing.

After the command (no process of it survives: the sandbox's PID namespace ends with it)
:func:`import_store` brings the new objects into the repository the way git's own receive quarantine
does: every loose object is read, inflated and hashed here (one whose content does not match its
name is refused and kept aside), the honest ones are sent as a pack through ``git unpack-objects
--strict`` (few) or ``git index-pack --strict`` (many), and each pack the command wrote goes through
``git index-pack --strict --fix-thin``, which names every object by its content and ignores the
command's own ``.idx``. Git checks each object's format and links (``--strict``). The imported files
are deleted from the store; whatever git refused is moved to paragents' quarantine folder.

Nothing here follows a symbolic link the command left in its store: only regular files with git's
names are read, with ``O_NOFOLLOW``.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import struct
import tempfile
import time
import zlib
from dataclasses import dataclass, field
from pathlib import Path

from paragents import paths
from paragents.tools.git_exec import run_git

SHARED = ".paragents-common"
"""Where the real ``objects/`` is seen read-only inside the sandbox (below the private store bound
over it); the store's ``info/alternates`` names it."""
UNPACK_LIMIT = 100
"""Fewer objects than this are stored loose (``unpack-objects``), more as a pack (as ``receive-pack``)."""
TYPES = {b"commit": 1, b"tree": 2, b"blob": 3, b"tag": 4}
_HEX = re.compile(r"^[0-9a-f]+$")
_PACK = re.compile(r"^pack-[0-9a-f]{40,64}\.pack$")


def store_dir(gitdir: str | os.PathLike[str]) -> Path:
    """``<state>/git-objects/<key>``: the private store of the worktree whose git directory is
    ``gitdir`` (its ``objects/`` is the store; kept beside it, nothing the sandbox can name)."""
    key = hashlib.sha256(os.path.realpath(gitdir).encode()).hexdigest()[:16]
    return paths.state_dir() / "git-objects" / key


def _plain_dir(path: Path) -> None:
    """Make ``path`` a real directory (a symbolic link or a file there is removed first)."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    path.mkdir(exist_ok=True)


def prepare_store(gitdir: str, objects: str) -> Path | None:
    """Create (or check) the private store of the worktree ``gitdir`` whose common store is
    ``objects``; write its ``info/alternates``; return the store's path (None when that fails)."""
    base = store_dir(gitdir)
    store = base / "objects"
    try:
        paths.ensure_dir(base)
        os.chmod(base, 0o700)
        for folder in (store, store / "info", store / "pack", store / SHARED):
            _plain_dir(folder)
        alternates = store / "info" / "alternates"
        if alternates.is_symlink() or alternates.is_dir():
            with contextlib.suppress(OSError):
                alternates.unlink()
            if alternates.is_dir():
                shutil.rmtree(alternates)
        alternates.write_text(os.path.join(objects, SHARED) + "\n")
    except OSError:
        return None
    return store


def drop_store(gitdir: str | os.PathLike[str]) -> None:
    """Remove the private store of a worktree that is gone (its objects were imported after every
    command; what remains was refused or never finished)."""
    shutil.rmtree(store_dir(gitdir), ignore_errors=True)


@dataclass
class Imported:
    """What :func:`import_store` did: objects imported, loose objects whose content did not match
    their name, git's refusal (None when it took everything), where the refused files went."""

    count: int = 0
    mismatched: list[str] = field(default_factory=list)
    error: str | None = None
    quarantine: Path | None = None

    @property
    def refused(self) -> bool:
        return bool(self.mismatched or self.error)


def _read_nofollow(path: str) -> bytes | None:
    """The bytes of regular file ``path`` (never through a symbolic link), None otherwise."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def _loose(store: Path) -> list[tuple[str, str]]:
    """(path, the object id its name claims) of every loose object file in ``store``."""
    found: list[tuple[str, str]] = []
    try:
        top = list(os.scandir(store))
    except OSError:
        return found
    for folder in top:
        if len(folder.name) != 2 or not _HEX.match(folder.name) or not folder.is_dir(follow_symlinks=False):
            continue
        with contextlib.suppress(OSError):
            for entry in os.scandir(folder.path):
                if len(entry.name) in (38, 62) and _HEX.match(entry.name):
                    found.append((entry.path, folder.name + entry.name))
    return found


def _packs(store: Path) -> list[str]:
    """The complete packs in ``store`` (git writes the ``.idx`` last), as paths of ``.pack`` files."""
    folder = store / "pack"
    found = []
    with contextlib.suppress(OSError):
        for entry in os.scandir(folder):
            if _PACK.match(entry.name) and entry.is_file(follow_symlinks=False):
                idx = folder / (entry.name[:-5] + ".idx")
                if idx.is_file() and not idx.is_symlink():
                    found.append(entry.path)
    return found


def has_objects(store: Path) -> bool:
    """True when the store holds a loose object or a pack (cheap: a few directory listings)."""
    return bool(_loose(store) or _packs(store))


def _object(path: str, oid: str) -> tuple[int, bytes] | None:
    """(pack type code, body) of the loose object at ``path`` when its content hashes to ``oid``."""
    raw = _read_nofollow(path)
    if raw is None:
        return None
    try:
        data = zlib.decompress(raw)
    except zlib.error:
        return None
    head, sep, body = data.partition(b"\0")
    kind, _, size = head.partition(b" ")
    if not sep or kind not in TYPES or not size.isdigit() or int(size) != len(body):
        return None
    algo = hashlib.sha1 if len(oid) == 40 else hashlib.sha256
    if algo(data).hexdigest() != oid:
        return None
    return TYPES[kind], body


def _entry_header(kind: int, size: int) -> bytes:
    byte = (kind << 4) | (size & 0x0F)
    size >>= 4
    out = bytearray()
    while size:
        out.append(byte | 0x80)
        byte = size & 0x7F
        size >>= 7
    out.append(byte)
    return bytes(out)


def pack_of(objects: list[tuple[int, bytes]], sha256: bool = False) -> bytes:
    """A version 2 pack (no deltas) holding ``objects`` ((type code, body) pairs)."""
    out = bytearray(b"PACK" + struct.pack(">II", 2, len(objects)))
    for kind, body in objects:
        out += _entry_header(kind, len(body)) + zlib.compress(body, 1)
    digest = hashlib.sha256 if sha256 else hashlib.sha1
    out += digest(out).digest()
    return bytes(out)


def quarantine_dir(label: str) -> Path:
    """A new folder ``<state>/quarantine/<time>-<label>`` (0700) for what paragents took away."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    base = paths.state_dir() / "quarantine"
    paths.ensure_dir(base)
    folder = Path(tempfile.mkdtemp(prefix=f"{stamp}-{label}-", dir=base))
    os.chmod(folder, 0o700)
    return folder


def _move(path: str, into: Path, store: Path) -> None:
    dest = into / os.path.relpath(path, store)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.suppress(OSError):
        shutil.move(path, dest)


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


async def _git_in(common: str, args: list[str], stdin: bytes) -> str | None:
    """Run a hardened git in the repository whose git directory is ``common``; None or its error."""
    done = await run_git(args, Path(common), env={"GIT_DIR": common}, stdin=stdin)
    if done.code == 0:
        return None
    return done.err.decode("utf-8", "replace").strip() or f"git {args[0]} exited with {done.code}"


async def import_store(store: Path, common: str, label: str = "objects") -> Imported:
    """Bring the objects of the private ``store`` into the repository whose git directory is
    ``common`` (see the module docstring) and return what happened."""
    done = Imported()
    loose = _loose(store)
    packs = _packs(store)
    if not loose and not packs:
        return done
    taken: list[str] = []
    refused: list[str] = []
    for pack in packs:
        data = _read_nofollow(pack)
        error = "not a readable file" if data is None else None
        if data is not None:
            error = await _git_in(common, ["index-pack", "--stdin", "--strict", "--fix-thin"], data)
        siblings = [pack[:-5] + ext for ext in (".pack", ".idx", ".rev", ".keep", ".promisor", ".mtimes")]
        if error is None:
            taken += siblings
        else:
            done.error = f"{os.path.basename(pack)}: {error}"
            refused += siblings
    honest: list[tuple[int, bytes]] = []
    own: list[str] = []
    for path, oid in loose:
        found = _object(path, oid)
        if found is None:
            done.mismatched.append(oid)
            refused.append(path)
        else:
            honest.append(found)
            own.append(path)
    if honest:
        sha256 = len(loose[0][1]) == 64
        tool = ["unpack-objects", "-q", "--strict"] if len(honest) < UNPACK_LIMIT else [
            "index-pack", "--stdin", "--strict"]  # fmt: skip
        error = await _git_in(common, tool, pack_of(honest, sha256))
        if error is None:
            done.count += len(honest)
            taken += own
        else:
            done.error = error
            refused += own
    for path in taken:
        _remove(path)
    refused = [p for p in refused if os.path.lexists(p)]
    if refused:
        done.quarantine = quarantine_dir(label)
        for path in refused:
            _move(path, done.quarantine, store)
    return done
