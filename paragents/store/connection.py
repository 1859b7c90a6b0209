"""Opening SQLite connections with the store's settings, and retrying when the file is busy.

Settings (https://sqlite.org/pragma.html): ``journal_mode=WAL`` (readers never block the writer),
``synchronous=NORMAL`` (a commit survives a process crash; only a power loss may drop the last
ones), ``busy_timeout=5000`` ms and ``foreign_keys=ON``. Connections are in autocommit mode
(``isolation_level=None``): the store issues ``BEGIN IMMEDIATE`` / ``COMMIT`` itself.
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TypeVar

import aiosqlite

BUSY_TIMEOUT_MS = 5000
"""How long (milliseconds) SQLite itself waits for a lock before reporting SQLITE_BUSY."""

BUSY_RETRIES = 5
"""How many more times a busy operation is tried after the first, with doubling backoff."""

BUSY_BACKOFF = 0.05
"""First backoff between busy retries, in seconds (then 0.1, 0.2, ...)."""

T = TypeVar("T")


def is_busy(exc: BaseException) -> bool:
    """Return True when ``exc`` is SQLite's SQLITE_BUSY / SQLITE_LOCKED ("database is locked")."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None and code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED):
        return True
    text = str(exc).lower()
    return "database is locked" in text or "database is busy" in text or "database table is locked" in text


FAILING_BUSY_TIMEOUT_MS = 50
"""The busy timeout (milliseconds) a store uses while it is failing (after a write gave up on a lock):
later writes fail fast instead of each waiting the whole budget again, until one succeeds."""


async def retry_busy(operation: Callable[[], Awaitable[T]], retries: int | None = None) -> T:
    """Run ``operation()``; when it raises a busy error, wait (backoff) and run it again.

    Returns its result; re-raises the last busy error after ``retries`` retries (default
    :data:`BUSY_RETRIES`), and any other error at once. ``operation`` must leave no transaction open
    when it fails (roll back first)."""
    retries = BUSY_RETRIES if retries is None else retries
    delay = BUSY_BACKOFF
    for attempt in range(retries + 1):
        try:
            return await operation()
        except sqlite3.OperationalError as exc:
            if not is_busy(exc) or attempt == retries:
                raise
        await asyncio.sleep(delay)
        delay *= 2
    raise AssertionError("unreachable")  # pragma: no cover


async def connect(path: Path) -> aiosqlite.Connection:
    """Open ``path`` (created if missing) with the store's settings and return the connection.

    Runs no integrity check (see :mod:`paragents.store.corruption`). Raises sqlite3.Error when the
    file cannot be opened or is not a database (the caller turns that into recovery or StoreError)."""
    db = await aiosqlite.connect(str(path), isolation_level=None)
    try:
        db.row_factory = sqlite3.Row
        await db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        await db.execute("PRAGMA foreign_keys = ON")

        async def set_wal() -> None:
            async with db.execute("PRAGMA journal_mode = WAL") as cur:
                row = await cur.fetchone()
            if row is None or str(row[0]).lower() != "wal":
                raise sqlite3.OperationalError(f"could not switch {path} to WAL mode (got {row and row[0]})")

        await retry_busy(set_wal)
        await db.execute("PRAGMA synchronous = NORMAL")
    except BaseException:
        await db.close()
        raise
    return db


PRIVATE_SUFFIXES = ("", "-wal", "-shm", "-journal")
"""The files of a database ``path`` (the file itself and SQLite's companions) kept at mode 0600."""


def make_private(path: Path) -> None:
    """Make the store's directory 0700 and the database ``path`` and its ``-wal``/``-shm``/``-journal``
    files 0600, whatever modes existed before (an older version, a umask, a hand-made directory).
    SQLite gives a new ``-wal``/``-shm`` the database file's mode, so calling this before connecting
    and again once WAL is on keeps every file private. Files that are not there are skipped; a file
    of another user is left alone (chmod fails quietly: the open itself reports real problems)."""
    for target, wanted in ((path.parent, 0o700), *((Path(f"{path}{s}"), 0o600) for s in PRIVATE_SUFFIXES)):
        try:
            if stat.S_IMODE(target.stat().st_mode) != wanted:
                os.chmod(target, wanted)
        except OSError:
            continue


def pid_alive(pid: int | None) -> bool:
    """Return True when a process with ``pid`` exists (``os.kill(pid, 0)``) and is not a zombie;
    False for None/<= 0.

    A process of another user counts as alive. A zombie (killed, not yet reaped: where PID 1 does not
    reap orphans, in Docker without ``--init`` and many CI sandboxes, it stays one) is gone. A reused
    pid is told apart only by its start time (:func:`process_start`)."""
    if pid is None or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except OSError:
        return False
    stat = _proc_stat(pid)
    return stat is None or stat[0] not in ("Z", "X", "x")


def _proc_stat(pid: int) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name (state first), or None where there is
    no /proc (not Linux) or the process is gone."""
    try:
        raw = Path(f"/proc/{pid}/stat").read_bytes().decode("ascii", "replace")
    except OSError:
        return None
    _, paren, rest = raw.rpartition(")")  # the command name may hold spaces and parentheses
    return rest.split() if paren else None


def process_start(pid: int) -> int | None:
    """Return when process ``pid`` started (clock ticks since boot, ``/proc/PID/stat`` field 22), or
    None where that cannot be read: a pid recorded with its start time and found later with another
    one was reused by a new process."""
    stat = _proc_stat(pid)
    if stat is None or len(stat) < 20:
        return None
    try:
        return int(stat[19])  # field 22; ``stat`` starts at field 3 (state)
    except ValueError:
        return None
    except OSError:
        return False
    return True
