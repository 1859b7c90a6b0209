"""The shared connection every repository of :class:`paragents.store.Store` runs its SQL on.

One aiosqlite connection per store (its own thread, so the UI loop never waits on disk), held by a
:class:`Database`. An asyncio lock serialises this store's statements so one coroutine's transaction
never interleaves with another's; other processes are kept apart by SQLite's locks (``BEGIN
IMMEDIATE``) and busy retries (:func:`paragents.store.connection.retry_busy`). A
:class:`Repository` (one per subject: sessions, approvals, lanes...) holds the Database and runs its
reads and write transactions through it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sqlite3
import time
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

import aiosqlite

from paragents.store import connection
from paragents.store.connection import is_busy, retry_busy
from paragents.store.migrations import rollback_quietly
from paragents.store.records.errors import StoreError

T = TypeVar("T")


def now() -> float:
    """Return the current time in unix seconds (the store's timestamp unit)."""
    return time.time()


class Database:
    """Holds the connection and runs reads and write transactions with busy retries."""

    path: Path
    """The database file."""

    def __init__(self, db: aiosqlite.Connection, path: Path) -> None:
        self._db: aiosqlite.Connection | None = db
        self._lock = asyncio.Lock()
        self.path = path
        self.failing: str | None = None
        """Set (to the error) when a write gave up on a lock held too long: later writes then fail
        fast (short busy timeout, no retries) instead of each waiting the whole budget; the next
        write that succeeds clears it."""

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran."""
        return self._db is None

    async def close(self) -> None:
        """Close the connection (idempotent); later statements raise StoreError."""
        db, self._db = self._db, None
        if db is not None:
            async with self._lock:
                await db.close()

    @property
    def total_changes(self) -> int:
        """Rows changed through this connection since it opened (``sqlite3.Connection.total_changes``;
        0 once closed)."""
        return 0 if self._db is None else int(self._db.total_changes)

    def _conn(self) -> aiosqlite.Connection:
        if self._db is None:
            raise StoreError(f"the store {self.path} is closed; open it again with Store.open()")
        return self._db

    async def write(self, work: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        """Run ``work(db)`` inside ``BEGIN IMMEDIATE`` ... ``COMMIT`` and return its result.

        Rolls back and re-raises when ``work`` raises; retries the whole transaction when SQLite
        reports the database busy. sqlite3 errors other than busy become StoreError. The transaction
        is shielded from cancellation: a cancelled caller gets CancelledError at once, while the
        transaction still commits or rolls back as a whole (a cancel between BEGIN and COMMIT would
        otherwise leave the connection inside an open transaction)."""
        return await asyncio.shield(self._write_now(work))

    async def _write_now(self, work: Callable[[aiosqlite.Connection], Awaitable[T]]) -> T:
        db = self._conn()

        async def attempt() -> T:
            await db.execute("BEGIN IMMEDIATE")
            try:
                result = await work(db)
                await db.execute("COMMIT")
            except BaseException:
                await rollback_quietly(db)
                raise
            return result

        async with self._lock:
            return await self._guarded(attempt)

    async def _guarded(self, attempt: Callable[[], Awaitable[T]]) -> T:
        """Run a write ``attempt`` with busy retries (none while :attr:`failing`); turn sqlite3 errors
        into StoreError, and enter or leave the failing state. Call with ``self._lock`` held."""
        db = self._conn()
        failing = self.failing is not None
        try:
            result = await retry_busy(attempt, 0 if failing else None)
        except sqlite3.IntegrityError as exc:
            raise StoreError(f"the database refused the change: {exc}") from exc
        except sqlite3.Error as exc:
            if not is_busy(exc):
                raise StoreError(f"database error in {self.path}: {exc}") from exc
            if not failing:
                with contextlib.suppress(sqlite3.Error, ValueError):
                    await db.execute(f"PRAGMA busy_timeout = {connection.FAILING_BUSY_TIMEOUT_MS}")
            self.failing = (
                f"the database {self.path} stayed locked by another program past the busy budget "
                f"({exc}): nothing more could be saved; close other paragents processes or tools "
                "using it (or check the disk), then try again"
            )
            raise StoreError(self.failing) from exc
        if failing:
            self.failing = None
            with contextlib.suppress(sqlite3.Error, ValueError):
                await db.execute(f"PRAGMA busy_timeout = {connection.BUSY_TIMEOUT_MS}")
        return result

    async def insert(self, sql: str, params: tuple[Any, ...], session_id: str | None) -> int:
        """Insert one row of a session's side table and return its id; a foreign key failure becomes
        StoreError naming the unknown ``session_id``."""

        async def work(db: aiosqlite.Connection) -> int:
            cur = await db.execute(sql, params)
            assert cur.lastrowid is not None
            return int(cur.lastrowid)

        try:
            return await self.write(work)
        except StoreError as exc:
            if "FOREIGN KEY" in str(exc):
                raise StoreError(
                    f"no session with id {session_id!r} (or no turn with the turn_id given)"
                ) from exc
            raise

    async def write_one(self, sql: str, params: Iterable[Any] = ()) -> tuple[int, int | None]:
        """Run one writing statement as its own (autocommit) transaction, committed on return: the
        cheapest durable write (one thread hop). Returns (rowcount, lastrowid). Busy retries;
        sqlite3 errors become StoreError."""
        db = self._conn()

        async def attempt() -> tuple[int, int | None]:
            async with db.execute(sql, tuple(params)) as cur:
                return cur.rowcount, cur.lastrowid

        async with self._lock:
            return await self._guarded(attempt)

    async def fetchall(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        """Run one read query and return all rows (busy retries; errors become StoreError)."""
        db = self._conn()

        async def attempt() -> list[sqlite3.Row]:
            async with db.execute(sql, tuple(params)) as cur:
                return list(await cur.fetchall())

        async with self._lock:
            try:
                return await retry_busy(attempt)
            except sqlite3.Error as exc:
                raise StoreError(f"database error in {self.path}: {exc}") from exc

    async def fetchdicts(self, sql: str, params: Iterable[Any] = ()) -> list[dict[str, Any]]:
        """Run one read query and return its rows as plain dicts keyed by column name."""
        return [dict(zip(r.keys(), tuple(r), strict=True)) for r in await self.fetchall(sql, params)]

    async def fetchone(self, sql: str, params: Iterable[Any] = ()) -> sqlite3.Row | None:
        """Run one read query and return its first row or None."""
        rows = await self.fetchall(sql, params)
        return rows[0] if rows else None


class Repository:
    """One subject's tables (a repository of :class:`paragents.store.Store`: ``store.approvals``,
    ``store.lanes``...) over the store's shared :class:`Database`; every repository of a store runs
    its statements on the same connection, lock and transactions."""

    def __init__(self, db: Database) -> None:
        self._db = db

    @property
    def path(self) -> Path:
        """The database file (for messages)."""
        return self._db.path


async def fetchone(db: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> sqlite3.Row | None:
    """Inside a transaction: run ``sql`` and return its first row or None."""
    async with db.execute(sql, tuple(params)) as cur:
        row = await cur.fetchone()
    return row


async def fetchall(db: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
    """Inside a transaction: run ``sql`` and return all rows."""
    async with db.execute(sql, tuple(params)) as cur:
        return list(await cur.fetchall())
