"""Audit of permission decisions: recorded, listed newest first, bad input refused."""

from __future__ import annotations

from typing import Any

import pytest

from paragents.store import SessionRecord, Store, StoreError


async def test_decisions_are_recorded_and_listed_newest_first(store: Store, session: SessionRecord) -> None:
    for i in range(3):
        await store.audit.record(
            session.id,
            tool="Bash",
            input={"command": f"ls {i}"},
            decision="ask",
            reason="no rule matched",
            rule=None,
            scope=None,
            answered_by="user",
            answer="allow_once",
        )
    await store.audit.record(
        session.id,
        tool="Read",
        input={"path": "/etc/passwd"},
        decision="deny",
        reason="matches deny rule",
        rule="Read(//etc/**)",
        scope="user",
        answered_by="policy",
    )
    latest = await store.audit.recent(session.id, limit=2)
    assert [d["tool"] for d in latest] == ["Read", "Bash"]
    assert latest[0]["input"] == {"path": "/etc/passwd"}
    assert (latest[0]["rule"], latest[0]["scope"], latest[0]["answer"]) == ("Read(//etc/**)", "user", None)
    assert latest[1]["input"] == {"command": "ls 2"} and latest[1]["answer"] == "allow_once"
    assert len(await store.audit.recent(session.id)) == 4


async def test_decision_with_bad_answered_by_or_session_is_refused(
    store: Store, session: SessionRecord
) -> None:
    kwargs: dict[str, Any] = {
        "tool": "Bash",
        "input": {},
        "decision": "allow",
        "reason": None,
        "rule": None,
        "scope": None,
    }
    with pytest.raises(StoreError, match="answered_by"):
        await store.audit.record(session.id, answered_by="robot", **kwargs)
    with pytest.raises(StoreError, match="no session"):
        await store.audit.record("missing", answered_by="user", **kwargs)
