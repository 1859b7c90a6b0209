"""Detecting a damaged database file, keeping a copy of it, and salvaging its rows.

SQLite's own ``.recover`` is a CLI command, not available from Python, so salvage is best-effort:
the damaged file is renamed aside (``paragents.db.corrupt-<timestamp>``, with its ``-wal``/``-shm``
beside it, untouched), a scratch copy of it is opened, and every readable row of every known table
is copied, table by table, into the fresh database (columns both sides know; rows whose parent row
was lost are skipped). Everything here is synchronous and is run in a worker thread by the store.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sqlite3
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from paragents.store.migrations import TABLES

CORRUPTION_CODES = (sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB)
"""SQLite result codes meaning "the file is damaged or not a database"."""


def is_corruption(exc: BaseException) -> bool:
    """Return True when ``exc`` says the file is corrupt or not a database (not for busy/IO errors)."""
    if not isinstance(exc, sqlite3.DatabaseError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if code is not None:
        return code & 0xFF in CORRUPTION_CODES
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text


def check_file(path: Path) -> str | None:
    """Run ``PRAGMA quick_check`` on ``path`` through a read-only connection; return None when the
    file is missing, empty or healthy, else the first problem found (e.g. "file is not a database").

    Read-only on purpose: a read-write connection checkpoints and deletes the ``-wal`` file when it
    closes, which would destroy evidence (and data) of a damaged database. A busy database counts
    as healthy (a live file is never moved aside). Raises sqlite3.Error when it cannot be opened."""
    if not path.exists() or path.stat().st_size == 0:
        return None
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    try:
        rows = conn.execute("PRAGMA quick_check").fetchall()
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            return str(exc)
        if isinstance(exc, sqlite3.OperationalError):
            return None  # busy, read-only or hot journal: not damage; the read-write open decides
        raise
    finally:
        conn.close()
    first = str(rows[0][0]) if rows else "quick_check gave no answer"
    return None if first == "ok" else first


@dataclass(frozen=True, slots=True)
class Salvage:
    """What was copied out of a damaged database: row counts per table and the first error seen."""

    rows: dict[str, int]
    error: str | None = None


def move_aside(path: Path) -> Path:
    """Rename ``path`` (and its ``-wal``/``-shm`` files) to ``<name>.corrupt-<timestamp>``; return the
    new path of the main file. Raises OSError when it cannot be renamed."""
    stamp = time.strftime("%Y%m%d-%H%M%S")
    target = path.with_name(f"{path.name}.corrupt-{stamp}")
    n = 1
    while target.exists():
        n += 1
        target = path.with_name(f"{path.name}.corrupt-{stamp}-{n}")
    os.replace(path, target)
    for suffix in ("-wal", "-shm"):
        side = Path(f"{path}{suffix}")
        if side.exists():
            os.replace(side, Path(f"{target}{suffix}"))
    return target


def _columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in conn.execute(f"PRAGMA table_info({table})")]


def _copy_table(src: sqlite3.Connection, dest: sqlite3.Connection, table: str) -> tuple[int, str | None]:
    """Copy readable rows of ``table``; return (rows copied, first read error or None)."""
    try:
        src_cols = set(_columns(src, table))
    except sqlite3.DatabaseError as exc:
        return 0, f"{table}: {exc}"
    cols = [c for c in _columns(dest, table) if c in src_cols]
    if not cols:
        return 0, None
    names = ", ".join(cols)
    marks = ", ".join("?" for _ in cols)
    insert = f"INSERT OR IGNORE INTO {table} ({names}) VALUES ({marks})"
    copied = 0
    first_error: str | None = None
    # Forward, then backward: a damaged page stops a scan, the reverse scan gets the rows after it.
    for order in ("ASC", "DESC"):
        try:
            for row in src.execute(f"SELECT {names} FROM {table} ORDER BY rowid {order}"):
                try:
                    cur = dest.execute(insert, tuple(row))
                except sqlite3.IntegrityError:
                    continue  # its parent row was lost, or a value broke a constraint
                copied += max(cur.rowcount, 0)
            break  # a full scan succeeded
        except sqlite3.DatabaseError as exc:
            first_error = first_error or f"{table}: {exc}"
    return copied, first_error


def _fix_sessions(dest: sqlite3.Connection) -> None:
    """Give every recovered session whose current conversation was lost a new, empty one."""
    rows = dest.execute(
        "SELECT id FROM sessions WHERE conversation_id IS NULL "
        "OR conversation_id NOT IN (SELECT id FROM conversations)"
    ).fetchall()
    now = time.time()
    for (session_id,) in rows:
        conv = uuid.uuid4().hex
        dest.execute(
            "INSERT INTO conversations (id, session_id, created_at, title) VALUES (?, ?, ?, NULL)",
            (conv, session_id, now),
        )
        dest.execute("UPDATE sessions SET conversation_id = ? WHERE id = ?", (conv, session_id))


def salvage(damaged: Path, dest_path: Path) -> Salvage:
    """Copy what can be read from ``damaged`` into the (already migrated) database at ``dest_path``.

    Works on a scratch copy so ``damaged`` stays byte-for-byte as found. Never raises for a damaged
    source: a source that cannot be read at all gives empty counts and the error text."""
    scratch = damaged.with_name(damaged.name + ".salvage")
    rows: dict[str, int] = {}
    first_error: str | None = None
    try:
        shutil.copyfile(damaged, scratch)
        wal = Path(f"{damaged}-wal")
        if wal.exists():
            shutil.copyfile(wal, Path(f"{scratch}-wal"))
        src = sqlite3.connect(str(scratch), isolation_level=None)
        # Lets SQLite read a file shorter than its header says (a truncated file) instead of refusing.
        src.execute("PRAGMA writable_schema = ON")
    except (OSError, sqlite3.Error) as exc:
        return Salvage(rows={}, error=str(exc))
    try:
        dest = sqlite3.connect(str(dest_path), isolation_level=None, timeout=5.0)
        try:
            dest.execute("PRAGMA foreign_keys = ON")
            dest.execute("BEGIN IMMEDIATE")
            for table in TABLES:
                count, error = _copy_table(src, dest, table)
                rows[table] = count
                first_error = first_error or error
            _fix_sessions(dest)
            dest.execute("COMMIT")
        except sqlite3.Error as exc:
            if dest.in_transaction:
                dest.execute("ROLLBACK")
            return Salvage(rows={}, error=str(exc))
        finally:
            dest.close()
    finally:
        src.close()
        for leftover in (scratch, Path(f"{scratch}-wal"), Path(f"{scratch}-shm")):
            with contextlib.suppress(OSError):
                leftover.unlink()
    return Salvage(rows=rows, error=first_error)


def recovery_note(problem: str, kept_at: Path, result: Salvage) -> str:
    """Return the sentence the app shows after recovering from a damaged database."""
    sessions = result.rows.get("sessions", 0)
    messages = result.rows.get("messages", 0)
    plural = "" if sessions == 1 else "s"
    text = (
        f"the database was damaged ({problem}); a copy was kept at {kept_at}; "
        f"{sessions} session{plural} recovered ({messages} messages)"
    )
    if result.error:
        text += f"; some data could not be read ({result.error})"
    return text
