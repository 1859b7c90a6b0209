"""Compaction records in the store: migration 2, add/latest/list, refusal of bad input."""

from __future__ import annotations

from pathlib import Path

import pytest

from paragents.models import user_message
from paragents.store import SCHEMA_VERSION, Store, StoreError


async def test_compaction_records(tmp_path: Path) -> None:
    assert SCHEMA_VERSION >= 2
    async with await Store.open(tmp_path / "db.sqlite") as store:
        s = await store.create_session(name="a", project_dir=tmp_path, workdir=tmp_path, model="m")
        ids = [await store.append_message(s.id, user_message(f"m{i}")) for i in range(4)]
        assert await store.latest_compaction(s.id) is None
        first = await store.add_compaction(s.id, ids[1], "summary one")
        second = await store.add_compaction(s.id, ids[2], "summary two")
        latest = await store.latest_compaction(s.id)
        assert latest is not None and latest.id == second and latest.upto_message_id == ids[2]
        assert [c.id for c in await store.list_compactions(s.id)] == [first, second]
        with pytest.raises(StoreError, match="non-empty"):
            await store.add_compaction(s.id, ids[0], "  ")
        with pytest.raises(StoreError, match="no message 999999"):
            await store.add_compaction(s.id, 999999, "x")
        # a new conversation (/clear) has no compaction in force; the old records stay
        await store.new_conversation(s.id)
        assert await store.latest_compaction(s.id) is None
        assert len(await store.list_compactions(s.id)) == 2
        with pytest.raises(StoreError):
            await store.add_compaction(s.id, ids[3], "old conversation's message")
