"""Path reservations of the conflict checker: add, list, release, release the dead."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from paragents.store import SessionRecord, Store, StoreError


async def test_reservations(store: Store, session: SessionRecord, project: Path, tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    turn = await store.start_turn(session.id, "p")
    mine = await store.add_reservation(
        session.id, "src/a.py", "write", turn_id=turn, reason="edit", pid=os.getpid()
    )
    await store.add_reservation(session.id, "src/b.py", "write", pid=dead.pid)
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other = await store.create_session(name="o", project_dir=other_dir, workdir=other_dir, model="m")
    await store.add_reservation(other.id, "x", "resource")
    assert [r.path for r in await store.list_reservations(project)] == ["src/a.py", "src/b.py"]
    assert len(await store.list_reservations()) == 3
    assert await store.release_dead_reservations() == 1
    (left, *_) = await store.list_reservations(project)
    assert (left.id, left.turn_id, left.reason, left.pid) == (mine, turn, "edit", os.getpid())
    assert await store.release_reservations(turn_id=turn) == 1
    assert await store.release_reservations(session_id=other.id) == 1
    assert await store.list_reservations() == []
    with pytest.raises(StoreError, match="session_id or turn_id"):
        await store.release_reservations()
