"""Store faults at the session level: the database stays locked by another program past the busy
budget while a turn runs (real Runtime, real SQLite file, a real second connection holding the write
lock). The turn must end visibly failed with ``error_kind`` "store" and a message saying what to do,
no task may end with an exception nobody retrieved, later writes must fail fast instead of each
waiting the whole budget, and the turn row must be written as failed once the lock is gone."""

from __future__ import annotations

import asyncio
import gc
import sqlite3
import time
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.llm.replay import ScriptedResponse
from paragents.store import connection
from tests.faults.tally import record
from tests.runtime_env import Env, env  # noqa: F401 (fixture)

BUDGET = 0.6
"""The busy budget the test sets (two tries of 300 ms), in seconds."""


@pytest.fixture
def small_busy_budget(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(connection, "BUSY_TIMEOUT_MS", 300)
    monkeypatch.setattr(connection, "BUSY_RETRIES", 1)
    monkeypatch.setattr(connection, "BUSY_BACKOFF", 0.0)


async def test_store_locked_mid_turn_fails_the_turn_as_store_and_leaves_no_running_row(
    env: Env,  # noqa: F811
    small_busy_budget: None,
    caplog: pytest.LogCaptureFixture,
) -> None:
    loop = asyncio.get_running_loop()
    unhandled: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: unhandled.append(context))
    recovered = False
    try:
        rt = await env.runtime()
        s = await rt.new_session("victim")
        locker = sqlite3.connect(Path(env.db), isolation_level=None)

        async def lock_now(i: int) -> None:
            if i == 0 and not locker.in_transaction:
                locker.execute("BEGIN IMMEDIATE")  # another program takes the write lock

        response = ScriptedResponse.from_message(content="an answer that cannot be saved")
        response.before_read = lock_now
        env.server.add(response, session="victim")
        rt.submit(s.id, "prompt while the database gets locked")
        await env.sink.wait_for(lambda: bool(env.sink.of(ev.TurnFinished, s.id)))
        failed_at = time.monotonic()
        await rt.wait_idle(s.id)
        after_failure = time.monotonic() - failed_at  # the turn's later writes: fast, not a budget each

        (finished,) = env.sink.of(ev.TurnFinished, s.id)
        assert finished.status == "failed" and finished.error_kind == "store"
        assert "stayed locked" in (finished.error or "") and "then try again" in (finished.error or "")
        assert s.last_result is not None and s.last_result.error_kind == "store"
        assert after_failure < BUDGET
        turn_id = max(t for (t,) in locker.execute("SELECT id FROM turns"))

        locker.execute("ROLLBACK")  # the other program lets go
        locker.close()
        await rt.shutdown()
        gc.collect()
        await asyncio.sleep(0)  # let a destroyed task's handler run (none should)

        raw = sqlite3.connect(Path(env.db))
        status, error = raw.execute("SELECT status, error FROM turns WHERE id = ?", (turn_id,)).fetchone()
        raw.close()
        assert status == "failed" and "stayed locked" in error
        never_retrieved = [c for c in unhandled if "never retrieved" in str(c.get("message"))]
        assert not never_retrieved, never_retrieved
        assert "never retrieved" not in caplog.text
        recovered = True
    finally:
        loop.set_exception_handler(None)
        record("database locked past the busy budget mid-turn", recovered=recovered)
