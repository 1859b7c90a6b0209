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
    turn = await store.turns.start(session.id, "p")
    mine = await store.reservations.add(
        session.id, "src/a.py", "write", turn_id=turn, reason="edit", pid=os.getpid()
    )
    await store.reservations.add(session.id, "src/b.py", "write", pid=dead.pid)
    other_dir = tmp_path / "other"
    other_dir.mkdir()
    other = await store.sessions.create(name="o", project_dir=other_dir, workdir=other_dir, model="m")
    await store.reservations.add(other.id, "x", "resource")
    assert [r.path for r in await store.reservations.all(project)] == ["src/a.py", "src/b.py"]
    assert len(await store.reservations.all()) == 3
    assert await store.reservations.release_dead() == 1
    (left, *_) = await store.reservations.all(project)
    assert (left.id, left.turn_id, left.reason, left.pid) == (mine, turn, "edit", os.getpid())
    assert await store.reservations.release(turn_id=turn) == 1
    assert await store.reservations.release(session_id=other.id) == 1
    assert await store.reservations.all() == []
    with pytest.raises(StoreError, match="session_id or turn_id"):
        await store.reservations.release()
