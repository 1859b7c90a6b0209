"""Which new branches next to a lane's branch paragents made itself, and the lock that makes it known.

A lane's sandbox binds the folder of its branch's ref writable (``refs/heads/paragents/`` and its
reflog folder: paragents.tools.sandbox_git), so after a command paragents.tools.sandbox_watch moves
away every new entry there: a command has no business making a sibling branch. But paragents makes
branches in that folder too, for a new lane (``git worktree add -b``), while another lane's command
may be running; such a branch must not be taken for the command's. A new entry is paragents' own
when a worktree's ``HEAD`` names it (:func:`worktree_branches`: the common ``worktrees/`` folder is
read-only in every sandbox). ``git worktree add -b`` makes the branch a moment before the worktree's
``HEAD``, so lane creation holds :func:`holding` exclusively around it and the after-command check
holds it shared while it looks: it never sees that moment. The lock file lives in paragents' state
dir (hidden in the sandbox), one per repository (its common git directory), and is an ``flock``, so
two paragents processes on one repository respect it too. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import hashlib
import os
from collections.abc import AsyncIterator

from paragents import paths, treefiles


def lock_path(common: str) -> str:
    """The lock file of the repository whose common git directory is ``common``."""
    key = hashlib.sha256(os.path.realpath(common).encode()).hexdigest()[:24]
    return str(paths.state_dir() / "locks" / f"refs-{key}.lock")


@contextlib.asynccontextmanager
async def holding(common: str, *, shared: bool) -> AsyncIterator[None]:
    """Hold the branch-making lock of ``common`` (see the module) until the block ends. The wait runs
    in a thread: the event loop keeps serving the holder. When the lock file cannot be made the block
    runs unlocked (the after-command check then errs on the side of moving a branch away)."""
    path = lock_path(common)
    try:
        paths.ensure_dir(paths.state_dir() / "locks")
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
    except OSError:
        yield
        return
    try:
        await asyncio.to_thread(fcntl.flock, fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def worktree_branches(common: str) -> set[str]:
    """The branches (``refs/heads/...``) the ``HEAD`` of a linked worktree of ``common`` names."""
    found: set[str] = set()
    with contextlib.suppress(OSError):
        for entry in os.scandir(os.path.join(common, "worktrees")):
            with contextlib.suppress(OSError, UnicodeDecodeError):
                head = treefiles.read_head(os.path.join(entry.path, "HEAD"), 4096).decode("utf-8").strip()
                if head.startswith("ref: refs/heads/"):
                    found.add(head[5:].strip())
    return found
