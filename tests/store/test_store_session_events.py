"""Session events: stored as JSON, listed oldest first, filtered by kind."""

from __future__ import annotations

import pytest

from paragents.store import SessionRecord, Store, StoreError


async def test_events_round_trip_and_filter_by_kind(store: Store, session: SessionRecord) -> None:
    await store.events.record(session.id, "conflict", {"path": "a.py", "other": "s2"})
    await store.events.record(session.id, "note", {"text": "héllo"})
    await store.events.record(session.id, "conflict", {"path": "b.py"})
    all_events = await store.events.all(session.id)
    assert [e["kind"] for e in all_events] == ["conflict", "note", "conflict"]
    assert all_events[1]["data"] == {"text": "héllo"}
    conflicts = await store.events.all(session.id, "conflict")
    assert [e["data"]["path"] for e in conflicts] == ["a.py", "b.py"]
    with pytest.raises(StoreError, match="data"):
        await store.events.record(session.id, "bad", {"x": object()})
