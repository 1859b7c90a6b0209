"""Turns, usage totals and recovery of turns whose process died."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from paragents.models import SessionState, ToolCall, Usage, tool_message, user_message
from paragents.store import INTERRUPTED_RESULT, SessionRecord, Store, StoreError


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


async def test_start_and_finish_turn(store: Store, session: SessionRecord) -> None:
    turn_id = await store.turns.start(session.id, "fix the bug")
    running = await store.sessions.get(session.id)
    assert running is not None and running.state is SessionState.RUNNING and running.pid == os.getpid()
    turn = await store.turns.get(turn_id)
    assert turn is not None
    assert (turn.status, turn.prompt, turn.pid, turn.finished_at) == (
        "running",
        "fix the bug",
        os.getpid(),
        None,
    )
    assert turn.conversation_id == session.conversation_id
    await store.turns.finish(turn_id, "failed", "HTTP 500 from the endpoint")
    turn = await store.turns.get(turn_id)
    assert turn is not None and turn.status == "failed" and turn.error == "HTTP 500 from the endpoint"
    assert turn.finished_at is not None and turn.finished_at >= turn.started_at
    after = await store.sessions.get(session.id)
    assert after is not None and after.state is SessionState.FAILED and after.pid is None
    second = await store.turns.start(session.id, "again")
    await store.turns.finish(second, "completed")
    idle = await store.sessions.get(session.id)
    assert idle is not None and idle.state is SessionState.IDLE
    assert [t.id for t in await store.turns.all(session.id)] == [turn_id, second]


async def test_finish_turn_rejects_unknown_status_and_turn(store: Store, session: SessionRecord) -> None:
    turn_id = await store.turns.start(session.id, "p")
    with pytest.raises(StoreError, match="status"):
        await store.turns.finish(turn_id, "exploded")
    with pytest.raises(StoreError, match="no turn"):
        await store.turns.finish(turn_id + 100, "completed")
    with pytest.raises(StoreError, match="no session"):
        await store.turns.start("missing", "p")


async def test_finish_turn_releases_its_reservations(store: Store, session: SessionRecord) -> None:
    turn_id = await store.turns.start(session.id, "p")
    await store.reservations.add(session.id, "src/a.py", "write", turn_id=turn_id, pid=os.getpid())
    await store.reservations.add(session.id, "port:8000", "resource", pid=os.getpid())
    await store.turns.finish(turn_id, "completed")
    assert [r.path for r in await store.reservations.all()] == ["port:8000"]


async def test_add_usage_updates_totals_and_last_prompt(store: Store, session: SessionRecord) -> None:
    turn_id = await store.turns.start(session.id, "p")
    await store.turns.add_usage(session.id, turn_id, "m", Usage(100, 20, 120))
    await store.turns.add_usage(session.id, turn_id, "m", Usage(150, 5, 155), estimated=True)
    record = await store.sessions.get(session.id)
    assert record is not None
    assert record.usage == Usage(250, 25, 275)
    assert record.last_prompt_tokens == 150
    rows = await store.turns.list_usage(session.id)
    assert [(r["prompt_tokens"], r["estimated"], r["turn_id"]) for r in rows] == [
        (100, False, turn_id),
        (150, True, turn_id),
    ]
    with pytest.raises(StoreError, match="no session"):
        await store.turns.add_usage("missing", None, "m", Usage(1, 1, 2))


async def test_recover_interrupted_marks_dead_turns_and_repairs(store: Store, session: SessionRecord) -> None:
    dead = _dead_pid()
    turn_id = await store.turns.start(session.id, "refactor", pid=dead)
    await store.messages.append(session.id, user_message("refactor"), turn_id=turn_id)
    calls = [ToolCall("c1", "read_file", "{}").to_openai(), ToolCall("c2", "run_command", "{}").to_openai()]
    await store.messages.append(
        session.id, {"role": "assistant", "content": "", "tool_calls": calls}, turn_id=turn_id
    )
    await store.messages.append(session.id, tool_message("c1", "file text"), turn_id=turn_id)
    await store.reservations.add(session.id, "a.py", "write", turn_id=turn_id, pid=dead)

    notes = await store.turns.recover_interrupted(os.getpid())

    assert len(notes) == 1
    assert "'main'" in notes[0] and "interrupted" in notes[0] and str(dead) in notes[0]
    assert "1 unfinished tool call" in notes[0]
    turn = await store.turns.get(turn_id)
    assert turn is not None and turn.status == "interrupted" and turn.finished_at is not None
    assert turn.error is not None and str(dead) in turn.error
    record = await store.sessions.get(session.id)
    assert record is not None and record.state is SessionState.INTERRUPTED and record.pid is None
    stored = await store.messages.load(session.id)
    assert stored[-1].message == tool_message("c2", INTERRUPTED_RESULT)
    assert stored[-1].turn_id == turn_id
    assert await store.reservations.all() == []
    assert await store.turns.recover_interrupted(os.getpid()) == []


async def test_recover_interrupted_leaves_live_turns_alone(store: Store, project: Path) -> None:
    mine = await store.sessions.create(name="mine", project_dir=project, workdir=project, model="m")
    other = await store.sessions.create(name="other", project_dir=project, workdir=project, model="m")
    my_turn = await store.turns.start(mine.id, "p")
    live = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=subprocess.PIPE)
    try:
        other_turn = await store.turns.start(other.id, "p", pid=live.pid)
        assert await store.turns.recover_interrupted(os.getpid()) == []
        statuses = [(await store.turns.get(t)).status for t in (my_turn, other_turn)]  # type: ignore[union-attr]
        assert statuses == ["running", "running"]
    finally:
        live.communicate(b"")
    assert len(await store.turns.recover_interrupted(os.getpid())) == 1
    assert (await store.turns.get(other_turn)).status == "interrupted"  # type: ignore[union-attr]
    assert (await store.turns.get(my_turn)).status == "running"  # type: ignore[union-attr]


async def test_recover_interrupted_resets_sessions_left_busy_by_a_dead_process(
    store: Store, project: Path
) -> None:
    dead = _dead_pid()
    waiting = await store.sessions.create(name="w", project_dir=project, workdir=project, model="m")
    queued = await store.sessions.create(name="q", project_dir=project, workdir=project, model="m")
    mine = await store.sessions.create(name="mine", project_dir=project, workdir=project, model="m")
    await store.sessions.update(waiting.id, state=SessionState.WAITING, pid=dead)
    await store.sessions.update(queued.id, state=SessionState.QUEUED, pid=dead)
    await store.sessions.update(mine.id, state=SessionState.RUNNING, pid=os.getpid())
    notes = await store.turns.recover_interrupted(os.getpid())
    assert len(notes) == 2 and any("'w'" in n and "interrupted" in n for n in notes)
    states = {s.name: (s.state, s.pid) for s in await store.sessions.all()}
    assert states == {
        "w": (SessionState.INTERRUPTED, None),
        "q": (SessionState.IDLE, None),
        "mine": (SessionState.RUNNING, os.getpid()),
    }
