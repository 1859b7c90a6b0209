"""Every file of the store is private whatever existed before: the state directory 0700, the database
and its ``-wal``/``-shm`` files 0600, even when the directory or files were made earlier with looser
modes (issue 28 item 9: the ``-wal`` file was 0644 when the state directory already existed)."""

from __future__ import annotations

import os
import sqlite3
import stat
from pathlib import Path

from paragents.store import Store


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_a_loose_existing_state_dir_and_database_become_private(db_file: Path) -> None:
    db_file.parent.mkdir(mode=0o755)
    os.chmod(db_file.parent, 0o755)  # whatever the umask says
    with sqlite3.connect(db_file) as conn:  # a database made by an older version, 0644
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("CREATE TABLE t (x)")
    os.chmod(db_file, 0o644)
    store = await Store.open(db_file)
    try:
        await store.api_access.record(remote="127.0.0.1", method="GET", path="/", status=200, at=1.0)
        wal, shm = Path(f"{db_file}-wal"), Path(f"{db_file}-shm")
        assert wal.exists() and shm.exists()  # a write keeps them while the connection is open
        assert mode(db_file.parent) == 0o700
        assert {p.name: mode(p) for p in (db_file, wal, shm)} == {
            db_file.name: 0o600,
            wal.name: 0o600,
            shm.name: 0o600,
        }
    finally:
        await store.close()


async def test_loose_wal_and_shm_files_of_a_running_older_process_become_private(db_file: Path) -> None:
    store = await Store.open(db_file)
    await store.close()
    holder = sqlite3.connect(db_file)  # another process's connection keeps -wal/-shm on disk
    try:
        holder.execute("PRAGMA journal_mode = WAL")
        holder.execute("CREATE TABLE t (x)")
        holder.commit()
        wal, shm = Path(f"{db_file}-wal"), Path(f"{db_file}-shm")
        os.chmod(wal, 0o644)
        os.chmod(shm, 0o644)  # as an older version under umask 022 left them
        again = await Store.open(db_file)
        try:
            assert mode(wal) == 0o600 and mode(shm) == 0o600
        finally:
            await again.close()
    finally:
        holder.close()
