"""Stale-read tracking: what each session last saw of each file (sha256 and, when small, the text).

The tools report every successful read (``read_file``) and write (``write_file``/``edit_file``)
through ``ToolContext.on_read``/``on_write`` as ``(resolved path, sha256 hex)``. Before a session
writes a file it saw, :meth:`ReadTracker.stale` compares the hash on disk with the one it saw; a
difference is a stale read, described by a unified diff (``difflib``) of the saved text against the
file now.
"""

from __future__ import annotations

import asyncio
import difflib
import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from paragents import treefiles

MAX_SNAPSHOT_BYTES = 256 * 1024
"""Files up to this size (bytes) have their text kept to diff against; larger ones only their hash."""
MAX_DIFF_CHARS = 8000
"""A stale-read diff longer than this (characters) is cut, with a note."""


@dataclass(frozen=True)
class Seen:
    """What a session last saw of a file: ``digest`` (sha256 hex), ``text`` (None when too big, binary
    or changed before it could be saved), ``at`` (Unix time, seconds) and ``how`` ("read"/"write")."""

    digest: str
    text: str | None
    at: float
    how: str


@dataclass(frozen=True)
class Stale:
    """A file changed since the session saw it: ``seen`` then, ``digest`` now ("" when the file is
    gone), ``diff`` unified diff seen → now (may say it is unavailable), ``text`` the text now (None
    when unreadable/too big)."""

    path: str
    seen: Seen
    digest: str
    diff: str
    text: str | None


def _snapshot(path: Path) -> tuple[str, str | None] | None:
    """Return (sha256 hex, text or None) of the file now, or None when it does not exist, cannot be
    read or is no longer a regular file: ``path`` is resolved, so a symbolic link there now (to
    ``~/.ssh/id_rsa``) or a FIFO is what a command put in its place; it is never read (the diff of a
    stale read goes to the model; a FIFO would block the read forever: paragents.treefiles)."""
    try:
        fd = treefiles.open_regular(path)
    except OSError:
        return None
    digest = hashlib.sha256()
    kept = bytearray()
    with os.fdopen(fd, "rb") as f:
        try:
            while chunk := f.read(1024 * 1024):
                digest.update(chunk)
                if len(kept) <= MAX_SNAPSHOT_BYTES:
                    kept += chunk
        except OSError:
            return None
    data = bytes(kept)
    if len(data) > MAX_SNAPSHOT_BYTES or b"\x00" in data[:8192]:
        return digest.hexdigest(), None
    try:
        return digest.hexdigest(), data.decode("utf-8")
    except UnicodeDecodeError:
        return digest.hexdigest(), None


def make_diff(before: str | None, after: str | None, name: str) -> str:
    """Return a unified diff of ``before`` → ``after`` for file ``name`` (a note when a side is unknown),
    cut to :data:`MAX_DIFF_CHARS` characters."""
    if after is None and before is not None:
        return f"{name} was deleted or cannot be read now\n"
    if before is None or after is None:
        return f"{name} changed (no text diff: the file is large, binary or changed while being read)\n"
    lines = difflib.unified_diff(
        before.splitlines(keepends=True), after.splitlines(keepends=True), f"a/{name}", f"b/{name}"
    )
    diff = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    if len(diff) > MAX_DIFF_CHARS:
        diff = diff[:MAX_DIFF_CHARS] + f"\n… [diff cut at {MAX_DIFF_CHARS} characters]\n"
    return diff


@dataclass(frozen=True)
class Write:
    """The last write of a file by a session of this process: who (``session_id``), what it left
    (``digest``) and when (``at``, Unix seconds)."""

    session_id: str
    digest: str
    at: float


class ReadTracker:
    """Per-session memory of the files each session read or wrote (in this process), and who wrote
    each file last."""

    def __init__(self) -> None:
        self._seen: dict[str, dict[str, Seen]] = {}
        self._writes: dict[str, Write] = {}

    def saw(self, session_id: str, path: Path | str, digest: str, how: str = "read") -> None:
        """Record that ``session_id`` saw ``path`` with sha256 ``digest`` (from ``on_read``/``on_write``).

        Keeps the file's text when the bytes on disk still have that hash and are small text."""
        key = str(path)
        try:
            small = Path(key).stat().st_size <= MAX_SNAPSHOT_BYTES
        except OSError:
            small = False
        snap = _snapshot(Path(key)) if small else None
        text = snap[1] if snap is not None and snap[0] == digest else None
        at = time.time()
        self._seen.setdefault(session_id, {})[key] = Seen(digest, text, at, how)
        if how == "write":
            self._writes[key] = Write(session_id, digest, at)

    def changed_by(self, session_id: str, stale: Stale) -> Write | None:
        """Return the write of another session of this process that made ``stale`` (the file changed
        since ``session_id`` saw it): the last write of the file, when it came after that and is by
        someone else; None when the change came from elsewhere (the user, another process)."""
        write = self._writes.get(stale.path)
        if write is None or write.session_id == session_id or write.at < stale.seen.at:
            return None
        return write

    def others(self, session_id: str, path: str) -> list[str]:
        """Ids of the other sessions that read or wrote ``path`` (and so would be stale too)."""
        return [sid for sid, seen in self._seen.items() if sid != session_id and path in seen]

    def seen(self, session_id: str, path: str) -> Seen | None:
        """Return what ``session_id`` last saw of ``path`` (resolved), or None when it never did."""
        return self._seen.get(session_id, {}).get(path)

    async def stale(self, session_id: str, path: str) -> Stale | None:
        """Return a :class:`Stale` when ``session_id`` saw ``path`` and the file's hash differs now
        (or the file is gone), else None (never saw it, or unchanged). Hashes in a worker thread."""
        seen = self.seen(session_id, path)
        if seen is None:
            return None
        snap = await asyncio.to_thread(_snapshot, Path(path))
        digest, text = snap if snap is not None else ("", None)
        if digest == seen.digest:
            return None
        return Stale(path, seen, digest, make_diff(seen.text, text, Path(path).name), text)

    def forget(self, session_id: str) -> None:
        """Drop everything tracked for ``session_id`` (its session closed)."""
        self._seen.pop(session_id, None)
        for path in [p for p, w in self._writes.items() if w.session_id == session_id]:
            del self._writes[path]
