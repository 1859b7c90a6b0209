"""Compaction records in the store: migration 2, add/latest/list, refusal of bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.models import user_message
from paragents.store import SCHEMA_VERSION, Store, StoreError


async def test_compaction_records(tmp_path: Path) -> None:
    assert SCHEMA_VERSION >= 2
    async with await Store.open(tmp_path / "db.sqlite") as store:
        s = await store.sessions.create(name="a", project_dir=tmp_path, workdir=tmp_path, model="m")
        ids = [await store.messages.append(s.id, user_message(f"m{i}")) for i in range(4)]
        assert await store.compactions.latest(s.id) is None
        first = await store.compactions.add(s.id, ids[1], "summary one")
        second = await store.compactions.add(s.id, ids[2], "summary two")
        latest = await store.compactions.latest(s.id)
        assert latest is not None and latest.id == second and latest.upto_message_id == ids[2]
        assert [c.id for c in await store.compactions.all(s.id)] == [first, second]
        with pytest.raises(StoreError, match="non-empty"):
            await store.compactions.add(s.id, ids[0], "  ")
        with pytest.raises(StoreError, match="no message 999999"):
            await store.compactions.add(s.id, 999999, "x")
        # a new conversation (/clear) has no compaction in force; the old records stay
        await store.sessions.new_conversation(s.id)
        assert await store.compactions.latest(s.id) is None
        assert len(await store.compactions.all(s.id)) == 2
        with pytest.raises(StoreError):
            await store.compactions.add(s.id, ids[3], "old conversation's message")
