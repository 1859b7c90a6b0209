"""Opening the store: directory, settings, migrations (once, idempotent, concurrent), closing."""

from __future__ import annotations

import asyncio
import sqlite3
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from paragents import paths
from paragents.store import SCHEMA_VERSION, Store, StoreError
from tests.patience import HANG_GUARD_S


def _versions(db_file: Path) -> list[int]:
    with sqlite3.connect(db_file) as conn:
        return [row[0] for row in conn.execute("SELECT version FROM schema_version")]


async def test_open_creates_private_dir_and_migrates(db_file: Path) -> None:
    store = await Store.open(db_file)
    await store.close()
    assert db_file.is_file()
    assert stat.S_IMODE(db_file.parent.stat().st_mode) == 0o700
    assert stat.S_IMODE(db_file.stat().st_mode) == 0o600
    assert _versions(db_file) == [SCHEMA_VERSION]
    assert store.recovery_note is None


async def test_default_path_is_the_state_dir_db() -> None:
    store = await Store.open()
    await store.close()
    assert store.path == paths.db_path()
    assert paths.db_path().is_file()


async def test_connection_settings(store: Store) -> None:
    rows = {}
    for pragma in ("journal_mode", "synchronous", "busy_timeout", "foreign_keys"):
        row = await store._database.fetchone(f"PRAGMA {pragma}")
        assert row is not None
        rows[pragma] = row[0]
    assert rows == {"journal_mode": "wal", "synchronous": 1, "busy_timeout": 5000, "foreign_keys": 1}


async def test_wal_mode_is_persistent_in_the_file(store: Store, db_file: Path) -> None:
    with sqlite3.connect(db_file) as conn:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"


async def test_reopen_is_idempotent_and_keeps_data(db_file: Path, project: Path) -> None:
    async with await Store.open(db_file) as store:
        created = await store.sessions.create(name="a", project_dir=project, workdir=project, model="m")
    for _ in range(3):
        async with await Store.open(db_file) as store:
            assert await store.sessions.get(created.id) == created
    assert _versions(db_file) == [SCHEMA_VERSION]


async def test_two_opens_at_once_both_succeed(db_file: Path, project: Path) -> None:
    first, second = await asyncio.gather(Store.open(db_file), Store.open(db_file))
    try:
        made = await first.sessions.create(name="a", project_dir=project, workdir=project, model="m")
        assert await second.sessions.get(made.id) == made
    finally:
        await first.close()
        await second.close()
    assert _versions(db_file) == [SCHEMA_VERSION]


def test_processes_opening_at_once_migrate_once(db_file: Path) -> None:
    code = (
        "import asyncio, pathlib, sys\n"
        "from paragents.store import Store\n"
        "async def main():\n"
        "    store = await Store.open(pathlib.Path(sys.argv[1]))\n"
        "    await store.close()\n"
        "asyncio.run(main())\n"
        "print('ok')\n"
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", code, str(db_file)], stdout=subprocess.PIPE, text=True)
        for _ in range(4)
    ]
    outputs = [p.communicate(timeout=HANG_GUARD_S)[0].strip() for p in procs]
    assert outputs == ["ok"] * 4
    assert [p.returncode for p in procs] == [0] * 4
    assert _versions(db_file) == [SCHEMA_VERSION]
    with sqlite3.connect(db_file) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"sessions", "conversations", "messages", "turns", "usage", "audit", "events"} <= tables


async def test_newer_schema_is_refused_readably(db_file: Path) -> None:
    async with await Store.open(db_file):
        pass
    with sqlite3.connect(db_file) as conn:
        conn.execute("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 5,))
    with pytest.raises(StoreError, match="upgrade paragents"):
        await Store.open(db_file)


async def test_using_a_closed_store_raises_store_error(db_file: Path) -> None:
    store = await Store.open(db_file)
    await store.close()
    await store.close()
    with pytest.raises(StoreError, match="closed"):
        await store.sessions.all()


async def test_unusable_directory_gives_store_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a dir")
    with pytest.raises(StoreError, match="cannot create the state directory"):
        await Store.open(blocker / "paragents.db")
