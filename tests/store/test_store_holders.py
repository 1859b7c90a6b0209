"""One live writer per session (holders), the history revision, stored tool outcomes, and a store
that keeps failing: real SQLite files, and real second processes where a process is the point."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from paragents.models import tool_message, user_message
from paragents.store import (
    INTERRUPTED_RESULT,
    HistoryChanged,
    SessionHeld,
    SessionRecord,
    Store,
    StoreError,
    connection,
)
from paragents.store.migrations import MIGRATIONS, split_statements
from tests.patience import HANG_GUARD_S

CHILD = Path(__file__).with_name("store_child_holder.py")


@pytest.fixture
def holder_child(db_file: Path, session: SessionRecord) -> Iterator[subprocess.Popen[str]]:
    """A real second process holding ``session`` (killed at the end if still alive)."""
    proc = subprocess.Popen(
        [sys.executable, str(CHILD), str(db_file), session.id],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )  # fmt: skip
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "held", proc.stderr
        yield proc
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.communicate(timeout=HANG_GUARD_S)


async def test_a_session_held_by_a_live_process_is_refused_and_taken_over_once_it_is_dead(
    store: Store, session: SessionRecord, holder_child: subprocess.Popen[str]
) -> None:
    with pytest.raises(SessionHeld) as held:
        await store.acquire_session(session.id)
    assert held.value.holder.pid == holder_child.pid
    assert f"held by pid {holder_child.pid}" in str(held.value) and "'main'" in str(held.value)
    assert (await store.get_holder(session.id)).pid == holder_child.pid  # type: ignore[union-attr]

    holder_child.kill()
    holder_child.wait(timeout=HANG_GUARD_S)
    previous = await store.acquire_session(session.id)  # dead holder: taken over without asking
    assert previous is not None and previous.pid == holder_child.pid
    assert (await store.get_holder(session.id)).pid == os.getpid()  # type: ignore[union-attr]
    assert await store.acquire_session(session.id) is None  # ours already: no-op


async def test_a_confirmed_take_over_wins_over_a_live_holder_and_a_released_session_is_free(
    store: Store, session: SessionRecord, holder_child: subprocess.Popen[str]
) -> None:
    previous = await store.acquire_session(session.id, take_over=True)
    assert previous is not None and previous.pid == holder_child.pid
    assert await store.renew_holds([session.id], pid=holder_child.pid) == [session.id]  # it lost it
    assert await store.renew_holds([session.id]) == []
    assert await store.release_session(session.id)
    assert await store.get_holder(session.id) is None


async def test_a_holder_whose_heartbeat_is_stale_is_taken_over(store: Store, session: SessionRecord) -> None:
    other = os.getppid()  # a live process that is not this one
    await store.acquire_session(session.id, pid=other)
    with pytest.raises(SessionHeld):
        await store.acquire_session(session.id)
    previous = await store.acquire_session(session.id, stale_after=-1.0)
    assert previous is not None and previous.pid == other


async def test_a_holder_whose_process_is_a_zombie_is_gone(
    store: Store, session: SessionRecord, holder_child: subprocess.Popen[str]
) -> None:
    """Killed and not reaped (its parent, this test, does not wait for it, as PID 1 does not in a
    container without ``--init``): the pid still exists, in state Z, and holds nothing."""
    holder_child.kill()
    deadline = time.monotonic() + HANG_GUARD_S
    stat = Path(f"/proc/{holder_child.pid}/stat")
    while stat.read_text().rpartition(")")[2].split()[0] != "Z":  # a bounded wait for the kill
        assert time.monotonic() < deadline, "the killed child never became a zombie"
        time.sleep(0.01)
    assert connection.pid_alive(holder_child.pid) is False
    previous = await store.acquire_session(session.id)
    assert previous is not None and previous.pid == holder_child.pid


async def test_a_holder_pid_reused_by_another_process_is_gone(store: Store, session: SessionRecord) -> None:
    """The recorded start time of the holder's process differs from the start time of the process
    now using that pid: the holder is gone (a reused pid), though the pid is alive."""
    other = os.getppid()  # a live process that is not this one
    await store.acquire_session(session.id, pid=other)
    held = await store.get_holder(session.id)
    assert held is not None and held.proc_start == connection.process_start(other) is not None
    with pytest.raises(SessionHeld):  # the same process: still held
        await store.acquire_session(session.id)
    raw = sqlite3.connect(store.path, isolation_level=None)
    raw.execute("UPDATE session_holders SET proc_start = proc_start - 1 WHERE session_id = ?", (session.id,))
    raw.close()
    previous = await store.acquire_session(session.id)
    assert previous is not None and previous.pid == other
    mine = await store.get_holder(session.id)
    assert mine is not None and mine.proc_start == connection.process_start(os.getpid())


async def test_every_history_write_bumps_the_revision_and_a_stale_write_is_refused(
    store: Store, session: SessionRecord
) -> None:
    start = await store.session_revision(session.id)
    first = await store.append_message(session.id, user_message("one"), expect_revision=start)
    assert await store.session_revision(session.id) == start + 1
    await store.append_message(session.id, user_message("from elsewhere"))  # another writer
    with pytest.raises(HistoryChanged) as stale:
        await store.append_message(session.id, user_message("stale copy"), expect_revision=start + 1)
    assert stale.value.revision == start + 2
    with pytest.raises(HistoryChanged):
        await store.add_compaction(session.id, first, "summary", expect_revision=start + 1)
    await store.add_compaction(session.id, first, "summary", expect_revision=start + 2)
    await store.new_conversation(session.id)
    assert await store.session_revision(session.id) == start + 4
    contents = [m.message["content"] for m in await store.load_messages(session.id, session.conversation_id)]
    assert contents == ["one", "from elsewhere"]  # the refused write left nothing behind


async def test_tool_results_keep_their_outcome_and_repairs_are_interrupted(
    store: Store, session: SessionRecord
) -> None:
    calls = [{"id": f"c{i}", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}
             for i in range(6)]  # fmt: skip
    await store.append_message(session.id, {"role": "assistant", "content": "", "tool_calls": calls})
    for i, outcome in enumerate(["ok", "error", "denied", "cancelled", "skipped"]):
        await store.append_message(session.id, tool_message(f"c{i}", outcome), outcome=outcome)
    stored, _history = await store.load_for_display_and_history(session.id)
    shown = [m.for_display() for m in stored if m.role == "tool"]
    assert [m["outcome"] for m in shown] == ["ok", "error", "denied", "cancelled", "skipped", "interrupted"]
    assert shown[-1]["content"] == INTERRUPTED_RESULT
    assert "process stopped before this call finished" in INTERRUPTED_RESULT
    assert "call it again if it is still needed" in INTERRUPTED_RESULT


def test_migration_3_infers_the_outcome_of_tool_results_stored_before(db_file: Path) -> None:
    db_file.parent.mkdir(parents=True)
    raw = sqlite3.connect(db_file, isolation_level=None)
    raw.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
    for script in MIGRATIONS[:2]:
        for statement in split_statements(script):
            raw.execute(statement)
    raw.execute("INSERT INTO schema_version VALUES (2)")
    raw.execute(
        "INSERT INTO sessions (id, name, project_dir, workdir, model, conversation_id, created_at,"
        " updated_at) VALUES ('s', 'old', '/p', '/p', 'm', 'c', 0, 0)"
    )
    raw.execute("INSERT INTO conversations (id, session_id, created_at) VALUES ('c', 's', 0)")
    texts = ["file contents", "error: no such file", "denied by policy: rule", "cancelled: by the user",
             "interrupted: the process stopped before this call finished"]  # fmt: skip
    for seq, text in enumerate(texts):
        raw.execute(
            "INSERT INTO messages (session_id, conversation_id, seq, role, message_json, created_at)"
            " VALUES ('s', 'c', ?, 'tool', ?, 0)",
            (seq, json.dumps({"role": "tool", "tool_call_id": f"c{seq}", "content": text})),
        )
    raw.close()

    async def outcomes() -> list[str | None]:
        async with await Store.open(db_file) as store:
            return [m.outcome for m in await store.load_messages("s")]

    import asyncio

    assert asyncio.run(outcomes()) == ["ok", "error", "denied", "cancelled", "interrupted"]


@pytest.fixture
def small_busy_budget(monkeypatch: pytest.MonkeyPatch) -> float:
    """A busy budget of about 0.6 s (two tries of 300 ms): returns its length in seconds."""
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 300)
    monkeypatch.setattr(connection, "BUSY_RETRIES", 1)
    monkeypatch.setattr(connection, "BUSY_BACKOFF", 0.0)
    return 0.6


async def test_a_store_locked_past_its_budget_fails_fast_afterwards_and_finishes_turns_later(
    db_file: Path, project: Path, small_busy_budget: float
) -> None:
    store = await Store.open(db_file)
    session = await store.create_session(name="main", project_dir=project, workdir=project, model="m")
    turn = await store.start_turn(session.id, "prompt")
    locker = sqlite3.connect(db_file, isolation_level=None)
    try:
        locker.execute("BEGIN IMMEDIATE")  # another program holds the write lock
        with pytest.raises(StoreError, match="stayed locked"):
            await store.append_message(session.id, user_message("lost to the lock"))
        assert store.failing is not None
        started = time.monotonic()
        with pytest.raises(StoreError):
            await store.finish_turn(turn, "failed", "the store failed")
        with pytest.raises(StoreError):
            await store.update_session(session.id, state="failed")
        assert time.monotonic() - started < small_busy_budget  # two writes, not two whole budgets
        assert store.unfinished_turns == {turn: ("failed", "the store failed")}
    finally:
        locker.execute("ROLLBACK")
        locker.close()
    await store.close()  # writes the finish it kept
    async with await Store.open(db_file) as again:
        row = await again.get_turn(turn)
        assert row is not None and row.status == "failed" and row.error == "the store failed"
        assert again.failing is None
