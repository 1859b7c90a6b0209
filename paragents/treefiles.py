"""Read a file of a tree a session can write (the project, a lane's worktree) on the host, safely.

Everything in such a tree is attacker-controlled, including *what kind* of file a name is: a sandboxed
command can replace ``AGENTS.md``, ``uv.lock`` or ``.paragents/worktree.toml`` with a symbolic link to
``.env``, ``~/.ssh/id_rsa`` or paragents' own ``serve.json`` (which the sandbox hides from the command
itself, but paragents reads on the host), with a FIFO (an ``open`` that never returns) or with a huge
file. :func:`read_bytes` reads only a *regular* file, never through a symbolic link (neither the last
part of the name nor, with ``root`` given, any folder between ``root`` and the file), never blocking on
a FIFO or a device, and at most ``limit`` bytes. Anything else raises :class:`NotRegularFile` (an
``OSError``, so callers that already treat an unreadable file as absent or as an error keep doing so,
with a message that says what the name is).
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

DEFAULT_LIMIT = 16 * 1024 * 1024
"""The largest file read by default (16 MiB): a project's config, lockfile or instructions."""

_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


class NotRegularFile(OSError):
    """``path`` is a symbolic link, a FIFO, a device, a socket or a folder, or is larger than the limit:
    paragents did not read it. ``str(err)`` names the file and what it is."""

    def __init__(self, path: Path | str, what: str) -> None:
        super().__init__(errno.EINVAL, f"{what}; paragents reads it only as a regular file", str(path))
        self.what = what

    def __str__(self) -> str:
        return f"{self.filename}: {self.strerror}"


def _kind(mode: int) -> str:
    if stat.S_ISLNK(mode):
        return "a symbolic link"
    if stat.S_ISFIFO(mode):
        return "a FIFO"
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a device"


def _open_in(root: Path, rel: Path) -> int:
    """Open ``root / rel`` walking each folder of ``rel`` without following a symbolic link."""
    dir_fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        *folders, name = rel.parts
        for part in folders:
            try:
                fd = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=dir_fd)
            except OSError as exc:
                if exc.errno in (errno.ELOOP, errno.ENOTDIR):
                    raise NotRegularFile(
                        root / rel, f"its folder {part} is a symbolic link or not a folder"
                    ) from None
                raise
            os.close(dir_fd)
            dir_fd = fd
        return os.open(name, _FLAGS, dir_fd=dir_fd)
    finally:
        os.close(dir_fd)


def open_regular(path: Path, root: Path | None = None) -> int:
    """A file descriptor of ``path`` opened for reading when it is a regular file (see the module);
    ``root``: also refuse a symbolic link in any folder between ``root`` and ``path``. Raises
    FileNotFoundError when absent, :class:`NotRegularFile` when it is not a regular file."""
    path = Path(path)
    try:
        if root is not None and path.is_absolute() and path.is_relative_to(root) and path != Path(root):
            fd = _open_in(Path(root), path.relative_to(root))
        else:
            fd = os.open(path, _FLAGS)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NotRegularFile(path, "it is a symbolic link") from None
        raise
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(path, f"it is {_kind(mode)}")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: Path, *, limit: int = DEFAULT_LIMIT, root: Path | None = None) -> bytes:
    """The bytes of the regular file ``path`` (see :func:`open_regular`); raises
    :class:`NotRegularFile` when it holds more than ``limit`` bytes."""
    fd = open_regular(path, root)
    with os.fdopen(fd, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise NotRegularFile(path, f"it is larger than {limit} bytes")
    return data


def read_head(path: Path | str, size: int) -> bytes:
    """The first ``size`` bytes of the regular file ``path`` (a git pointer or ref file, a rebase todo
    list): see :func:`open_regular`."""
    with os.fdopen(open_regular(Path(path)), "rb") as f:
        return f.read(size)


def read_text(path: Path, *, limit: int = DEFAULT_LIMIT, root: Path | None = None) -> str:
    """The UTF-8 text of the regular file ``path`` (see :func:`read_bytes`); raises UnicodeDecodeError
    when it is not UTF-8."""
    return read_bytes(path, limit=limit, root=root).decode("utf-8")


def is_regular(path: Path) -> bool:
    """Whether ``path`` itself (not what a link points at) is a regular file."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
