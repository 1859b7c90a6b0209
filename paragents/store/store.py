"""The SQLite store of paragents: the only module family that speaks SQL.

Usage::

    async with await Store.open(paths.db_path()) as store:
        if store.recovery_note:
            show(store.recovery_note)
        session = await store.create_session(name="api", project_dir=root, workdir=root, model="m")
        await store.append_message(session.id, user_message("hello"))

Methods are grouped by subject in :mod:`.sessions`, :mod:`.messages`, :mod:`.turns`,
:mod:`.compactions`, :mod:`.holders` and one module per side table (:mod:`.audit`,
:mod:`.session_events`, :mod:`.reservations`, :mod:`.notes`); all are coroutines and run their SQL on
aiosqlite's thread.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from types import TracebackType

import aiosqlite

from paragents import paths
from paragents.store.agent_sessions import AgentSessionsMixin
from paragents.store.api_access import ApiAccessMixin
from paragents.store.approvals import ApprovalsMixin
from paragents.store.audit import AuditMixin
from paragents.store.budgets import BudgetsMixin
from paragents.store.compactions import CompactionsMixin
from paragents.store.connection import connect, make_private, retry_busy
from paragents.store.corruption import check_file, is_corruption, move_aside, recovery_note, salvage
from paragents.store.decisions import DecisionsMixin
from paragents.store.drafts import DraftsMixin
from paragents.store.fanout import FanoutMixin
from paragents.store.holders import HoldersMixin
from paragents.store.lane_verify import LaneVerifyMixin
from paragents.store.lanes import LanesMixin
from paragents.store.messages import MessagesMixin
from paragents.store.migrations import apply_migrations
from paragents.store.notes import NotesMixin
from paragents.store.records import StoreError
from paragents.store.reservations import ReservationsMixin
from paragents.store.session_events import SessionEventsMixin
from paragents.store.sessions import SessionsMixin
from paragents.store.tool_rows import ToolRowsMixin
from paragents.store.turns import TurnsMixin


async def _open_checked(path: Path) -> tuple[aiosqlite.Connection | None, str | None]:
    """Check ``path`` (read-only quick_check), then open it. Returns (connection, None) when healthy,
    or (None, problem) when the file is damaged. Raises sqlite3.Error for other failures (busy too
    long, permissions)."""
    problem = await asyncio.to_thread(check_file, path)
    if problem is not None:
        return None, problem
    try:
        return await connect(path), None
    except sqlite3.DatabaseError as exc:
        if is_corruption(exc):
            return None, str(exc)
        raise


async def _migrated(path: Path) -> aiosqlite.Connection:
    db = await connect(path)
    try:
        await retry_busy(lambda: apply_migrations(db))
    except BaseException:
        await db.close()
        raise
    return db


class Store(
    SessionsMixin,
    MessagesMixin,
    TurnsMixin,
    AuditMixin,
    SessionEventsMixin,
    ReservationsMixin,
    NotesMixin,
    CompactionsMixin,
    HoldersMixin,
    LanesMixin,
    ApprovalsMixin,
    LaneVerifyMixin,
    ApiAccessMixin,
    BudgetsMixin,
    FanoutMixin,
    AgentSessionsMixin,
    DecisionsMixin,
    DraftsMixin,
    ToolRowsMixin,
):
    """The paragents database: sessions, conversations, messages, turns, usage, audit, events,
    reservations and notes in one SQLite file (WAL mode), safe to share between processes.

    Open with :meth:`open`; close with :meth:`close` or ``async with``. ``recovery_note`` is a
    sentence to show the user when the file was found damaged on open, else None. Methods raise
    :class:`StoreError` with a readable message for refused or failed operations."""

    @classmethod
    async def open(cls, path: Path | None = None) -> Store:
        """Open (creating it and its directory, mode 0700, if needed) and migrate the database at
        ``path`` (default ``paragents.paths.db_path()``); return the store.

        A damaged file (not a database, or failing ``PRAGMA quick_check``) does not raise: it is
        renamed to ``<name>.corrupt-<timestamp>``, readable rows are copied into a new file, and
        ``recovery_note`` says so. Raises StoreError when the directory or file cannot be used
        (permissions, a newer schema, a database locked for too long)."""
        path = Path(path) if path is not None else paths.db_path()
        try:
            paths.ensure_dir(path.parent)
        except OSError as exc:
            raise StoreError(f"cannot create the state directory {path.parent}: {exc.strerror}") from exc
        try:
            return await cls._open(path)
        except StoreError:
            raise
        except (sqlite3.Error, OSError) as exc:
            raise StoreError(
                f"cannot open the database {path}: {exc}; check its permissions, "
                "or move it aside to start anew"
            ) from exc
        except ValueError as exc:
            raise StoreError(f"cannot use the database {path}: {exc}") from exc

    @classmethod
    async def _open(cls, path: Path) -> Store:
        make_private(path)  # before SQLite copies a loose mode to new -wal/-shm files
        note: str | None = None
        db, problem = await _open_checked(path)
        if db is not None:
            healthy = db
            try:
                await retry_busy(lambda: apply_migrations(healthy))
            except BaseException as exc:
                await db.close()
                if not is_corruption(exc):
                    raise
                db, problem = None, str(exc)
        if db is None:
            try:
                kept = await asyncio.to_thread(move_aside, path)
            except OSError as exc:
                raise StoreError(
                    f"the database {path} is damaged ({problem}) and could not be moved aside: "
                    f"{exc.strerror}; move it away by hand"
                ) from exc
            db = await _migrated(path)
            result = await asyncio.to_thread(salvage, kept, path)
            note = recovery_note(problem or "unknown damage", kept, result)
        make_private(path)  # the -wal/-shm files exist now: 0600 whatever the umask or an old mode
        return cls(db, path, note)

    async def close(self) -> None:
        """Close the connection (idempotent). Later calls raise StoreError. Turn finishes that could
        not be written earlier are tried once more first (a store still failing fails fast)."""
        if self._db is not None and self.unfinished_turns:
            with contextlib.suppress(StoreError):
                await self.flush_unfinished_turns()
        db, self._db = self._db, None
        if db is not None:
            async with self._lock:
                await db.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
