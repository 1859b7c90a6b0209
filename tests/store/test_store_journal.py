"""Audit of permission decisions, session events, reservations and notes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from paragents.store import SessionRecord, Store, StoreError


async def test_decisions_are_recorded_and_listed_newest_first(store: Store, session: SessionRecord) -> None:
    for i in range(3):
        await store.record_decision(
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
    await store.record_decision(
        session.id,
        tool="Read",
        input={"path": "/etc/passwd"},
        decision="deny",
        reason="matches deny rule",
        rule="Read(//etc/**)",
        scope="user",
        answered_by="policy",
    )
    latest = await store.recent_decisions(session.id, limit=2)
    assert [d["tool"] for d in latest] == ["Read", "Bash"]
    assert latest[0]["input"] == {"path": "/etc/passwd"}
    assert (latest[0]["rule"], latest[0]["scope"], latest[0]["answer"]) == ("Read(//etc/**)", "user", None)
    assert latest[1]["input"] == {"command": "ls 2"} and latest[1]["answer"] == "allow_once"
    assert len(await store.recent_decisions(session.id)) == 4


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
        await store.record_decision(session.id, answered_by="robot", **kwargs)
    with pytest.raises(StoreError, match="no session"):
        await store.record_decision("missing", answered_by="user", **kwargs)


async def test_events_round_trip_and_filter_by_kind(store: Store, session: SessionRecord) -> None:
    await store.record_event(session.id, "conflict", {"path": "a.py", "other": "s2"})
    await store.record_event(session.id, "note", {"text": "héllo"})
    await store.record_event(session.id, "conflict", {"path": "b.py"})
    all_events = await store.list_events(session.id)
    assert [e["kind"] for e in all_events] == ["conflict", "note", "conflict"]
    assert all_events[1]["data"] == {"text": "héllo"}
    conflicts = await store.list_events(session.id, "conflict")
    assert [e["data"]["path"] for e in conflicts] == ["a.py", "b.py"]
    with pytest.raises(StoreError, match="data"):
        await store.record_event(session.id, "bad", {"x": object()})


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


async def test_notes(store: Store, session: SessionRecord, project: Path) -> None:
    project_note = await store.add_note(project, "tests run with uv run pytest", author="user")
    await store.add_note(project, "working on the parser", session_id=session.id, author="main")
    assert [n.text for n in await store.list_notes(project)] == ["tests run with uv run pytest"]
    both = await store.list_notes(project, session.id)
    assert [(n.session_id, n.author) for n in both] == [(None, "user"), (session.id, "main")]
    assert both[0].project_dir == project.resolve()
    assert await store.delete_note(project_note) is True
    assert await store.delete_note(project_note) is False
    with pytest.raises(StoreError, match="empty"):
        await store.add_note(project, "  ", author="user")
