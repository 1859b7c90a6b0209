"""Busy handling: SQLITE_BUSY / "database is locked" is retried with backoff, other errors are not."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from paragents.models import user_message
from paragents.store import SessionRecord, Store, connection


def _locked() -> sqlite3.OperationalError:
    return sqlite3.OperationalError("database is locked")


def test_is_busy_recognises_locked_errors() -> None:
    assert connection.is_busy(_locked())
    assert not connection.is_busy(sqlite3.OperationalError("no such table: x"))
    assert not connection.is_busy(ValueError("database is locked"))


async def test_retry_busy_retries_then_succeeds(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "BUSY_BACKOFF", 0.0)
    calls = []

    async def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise _locked()
        return "done"

    assert await connection.retry_busy(flaky) == "done"
    assert len(calls) == 3


async def test_retry_busy_gives_up_and_does_not_retry_other_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "BUSY_BACKOFF", 0.0)
    calls = []

    async def always_locked() -> None:
        calls.append(1)
        raise _locked()

    with pytest.raises(sqlite3.OperationalError, match="locked"):
        await connection.retry_busy(always_locked, retries=2)
    assert len(calls) == 3

    calls.clear()

    async def broken() -> None:
        calls.append(1)
        raise sqlite3.OperationalError("no such table: nope")

    with pytest.raises(sqlite3.OperationalError, match="no such table"):
        await connection.retry_busy(broken)
    assert len(calls) == 1


async def test_open_reader_elsewhere_does_not_block_a_write(
    store: Store, session: SessionRecord, db_file: Path
) -> None:
    """A reader in another connection never blocks a write (WAL), and a write after another
    connection's commit sees its data."""
    other = sqlite3.connect(db_file, isolation_level=None)
    try:
        other.execute("BEGIN")
        assert other.execute("SELECT COUNT(*) FROM messages").fetchone() == (0,)
        await store.messages.append(session.id, user_message("written while a reader is open"))
        assert other.execute("SELECT COUNT(*) FROM messages").fetchone() == (0,)  # its snapshot
        other.execute("COMMIT")
        assert other.execute("SELECT COUNT(*) FROM messages").fetchone() == (1,)
    finally:
        other.close()
