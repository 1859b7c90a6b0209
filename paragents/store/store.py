"""The SQLite store of paragents: the only module family that speaks SQL.

Usage::

    async with await Store.open(paths.db_path()) as store:
        if store.recovery_note:
            show(store.recovery_note)
        session = await store.sessions.create(name="api", project_dir=root, workdir=root, model="m")
        await store.messages.append(session.id, user_message("hello"))

A :class:`Store` holds the connection (:class:`~paragents.store.base.Database`: migrations on open,
transactions, busy retries, corruption salvage) and one repository per subject, each in its own
module and each over that shared connection: ``store.sessions`` (:mod:`.sessions`),
``store.messages``, ``store.turns``, ``store.compactions``, ``store.holders``, ``store.audit``,
``store.events``, ``store.reservations``, ``store.notes``, ``store.lanes``, ``store.lane_verify``,
``store.approvals``, ``store.api_access``, ``store.budgets``, ``store.fanout``,
``store.agent_sessions``, ``store.decisions``, ``store.drafts``, ``store.tool_rows`` and
``store.changes`` (whether another process wrote). A part of
paragents that uses one subject takes that repository (``ApprovalsRepo``...), not the whole store.
Every method is a coroutine and runs its SQL on aiosqlite's thread; rows come back as the records of
:mod:`paragents.store.records`.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
from pathlib import Path
from types import TracebackType

import aiosqlite

from paragents import paths
from paragents.store.agent_sessions import AgentSessionsRepo
from paragents.store.api_access import ApiAccessRepo
from paragents.store.approvals import ApprovalsRepo
from paragents.store.audit import AuditRepo
from paragents.store.base import Database
from paragents.store.budgets import BudgetsRepo
from paragents.store.changes import ChangesRepo
from paragents.store.compactions import CompactionsRepo
from paragents.store.connection import connect, make_private, retry_busy
from paragents.store.corruption import check_file, is_corruption, move_aside, recovery_note, salvage
from paragents.store.decisions import DecisionsRepo
from paragents.store.drafts import DraftsRepo
from paragents.store.fanout import FanoutRepo
from paragents.store.holders import HoldersRepo
from paragents.store.lane_verify import LaneVerifyRepo
from paragents.store.lanes import LanesRepo
from paragents.store.messages import MessagesRepo
from paragents.store.migrations import apply_migrations
from paragents.store.notes import NotesRepo
from paragents.store.records.errors import StoreError
from paragents.store.reservations import ReservationsRepo
from paragents.store.session_events import SessionEventsRepo
from paragents.store.sessions import SessionsRepo
from paragents.store.tool_rows import ToolRowsRepo
from paragents.store.turns import TurnsRepo


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


class Store:
    """The paragents database: sessions, conversations, messages, turns, usage, audit, events,
    reservations, notes, lanes, approvals, fan-out groups... in one SQLite file (WAL mode), safe to
    share between processes, read and written through its repositories (see the module docstring).

    Open with :meth:`open`; close with :meth:`close` or ``async with``. ``recovery_note`` is a
    sentence to show the user when the file was found damaged on open, else None. Methods raise
    :class:`StoreError` with a readable message for refused or failed operations."""

    def __init__(self, database: Database, recovery_note: str | None = None) -> None:
        self._database = database
        self.recovery_note = recovery_note
        """Set when the file was found damaged on open: what happened and where the copy is; else None."""
        self.sessions = SessionsRepo(database)
        self.messages = MessagesRepo(database)
        self.turns = TurnsRepo(database)
        self.compactions = CompactionsRepo(database)
        self.holders = HoldersRepo(database)
        self.audit = AuditRepo(database)
        self.events = SessionEventsRepo(database)
        self.reservations = ReservationsRepo(database)
        self.notes = NotesRepo(database)
        self.lanes = LanesRepo(database)
        self.lane_verify = LaneVerifyRepo(database)
        self.approvals = ApprovalsRepo(database)
        self.api_access = ApiAccessRepo(database)
        self.budgets = BudgetsRepo(database)
        self.fanout = FanoutRepo(database)
        self.agent_sessions = AgentSessionsRepo(database)
        self.decisions = DecisionsRepo(database)
        self.drafts = DraftsRepo(database)
        self.tool_rows = ToolRowsRepo(database)
        self.changes = ChangesRepo(database)

    @property
    def path(self) -> Path:
        """The database file."""
        return self._database.path

    @property
    def failing(self) -> str | None:
        """Set (to the error) while writes fail fast after one gave up on a lock held too long."""
        return self._database.failing

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
        return cls(Database(db, path), note)

    async def close(self) -> None:
        """Close the connection (idempotent). Later calls raise StoreError. Turn finishes that could
        not be written earlier are tried once more first (a store still failing fails fast)."""
        if not self._database.closed and self.turns.unfinished:
            with contextlib.suppress(StoreError):
                await self.turns.flush_unfinished()
        await self._database.close()

    async def __aenter__(self) -> Store:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()
