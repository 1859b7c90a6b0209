"""What a read-only view follows its holder with: ``store.changes`` (``PRAGMA data_version`` moves
for another connection's commit, never for this one's own), ``messages.load_after`` (what was appended
after a copy, current conversation only) and ``holders.live`` (None once the holder is gone)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from paragents.models import user_message
from paragents.store import SessionRecord, Store
from tests.patience import HANG_GUARD_S


async def test_data_version_moves_only_for_another_connections_commit(
    store: Store, db_file: Path, session: SessionRecord
) -> None:
    before = await store.changes.data_version()
    written = store.changes.total_changes
    await store.messages.append(session.id, user_message("mine"))
    assert await store.changes.data_version() == before  # this connection's own write
    assert store.changes.total_changes > written
    async with await Store.open(db_file) as other:
        seen = await store.changes.data_version()
        unchanged = other.changes.total_changes
        await other.sessions.get(session.id)  # a read commits nothing
        assert await store.changes.data_version() == seen
        assert other.changes.total_changes == unchanged
        await other.messages.append(session.id, {"role": "assistant", "content": "theirs"})
        assert await store.changes.data_version() != seen


async def test_load_after_returns_what_was_appended_in_the_current_conversation(
    store: Store, session: SessionRecord
) -> None:
    first = await store.messages.append(session.id, user_message("one"))
    second = await store.messages.append(session.id, {"role": "assistant", "content": "two"})
    assert [m.id for m in await store.messages.load_after(session.id, 0)] == [first, second]
    assert [m.message["content"] for m in await store.messages.load_after(session.id, first)] == ["two"]
    assert await store.messages.load_after(session.id, second) == []
    await store.sessions.new_conversation(session.id)
    third = await store.messages.append(session.id, user_message("three"))
    assert [m.id for m in await store.messages.load_after(session.id, first)] == [third]


async def test_live_holder_is_none_once_its_process_is_gone(store: Store, session: SessionRecord) -> None:
    assert await store.holders.live(session.id) is None  # nobody holds it
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=HANG_GUARD_S)
    await store.holders.acquire(session.id, take_over=True, pid=gone.pid)
    assert await store.holders.get(session.id) is not None
    assert await store.holders.live(session.id) is None  # its process is gone: the session is free
    await store.holders.acquire(session.id)  # this (live) process
    live = await store.holders.live(session.id)
    assert live is not None and live.pid == os.getpid()
