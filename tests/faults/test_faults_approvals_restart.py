"""The restart after a crash that left an approval pending, in the real TUI (Pilot, real Runtime and
SQLite): the interrupted turn's ask is shown again in its panel's approval bar under the same id, and
answering it through the runtime's in-process API (``Runtime.answer_approval``) continues the turn;
when the turn cannot continue the row is closed with a note and the panel says so."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.models import user_message
from paragents.sessions.runtime import Runtime
from paragents.store import Store
from paragents.ui.app import make_app
from paragents.ui.widgets.approval_bar import ApprovalBar
from tests.faults.tally import record
from tests.ui.conftest import SIZE, wait_until

CALL = {"id": "w1", "name": "write_file", "arguments": json.dumps({"path": "out.txt", "content": "hi\n"})}


@pytest.fixture
async def replay() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as server:
        yield server


def dead_pid() -> int:
    """The pid of a process that has exited (what a crash leaves in the store)."""
    done = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True)
    return int(done.stdout)


async def crashed_store(db: Path, project: Path, *, moved_on: bool = False) -> str:
    """Leave what a process killed while asking to write out.txt leaves: a running turn, its
    assistant message with the call, a pending approval row and a holder, all of a dead pid.
    ``moved_on``: another turn completed after it (the turn cannot continue). Returns the row id."""
    pid = dead_pid()
    async with await Store.open(db) as store:
        session = await store.sessions.create(name="crashy", project_dir=project, workdir=project, model="m")
        turn = await store.turns.start(session.id, "write out.txt", pid=pid)
        await store.messages.append(session.id, user_message("write out.txt"), turn_id=turn)
        assistant = {
            "role": "assistant",
            "content": "writing",
            "tool_calls": [{"id": CALL["id"], "type": "function", "function": {
                "name": CALL["name"], "arguments": CALL["arguments"]}}],
        }  # fmt: skip
        await store.messages.append(session.id, assistant, turn_id=turn)
        await store.approvals.add(
            "ask1", session.id, kind="approval", tool="write_file", summary="write_file out.txt",
            call=CALL, turn_id=turn, reason="no rule allows it", pid=pid,
        )  # fmt: skip
        await store.holders.acquire(session.id, pid=pid)
        if moved_on:
            await store.turns.recover_interrupted(0)
            later = await store.turns.start(session.id, "something else")
            await store.turns.finish(later, "completed")
    return "ask1"


async def test_the_restart_shows_the_pending_ask_again_and_an_answer_continues_the_turn(
    replay: ReplayServer, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    db = tmp_path / "db.sqlite"
    ask = await crashed_store(db, project)
    replay.add(ScriptedResponse.from_message("the file is written"))
    rt = await Runtime.create(project, cli_overrides={"base_url": replay.base_url, "model": "m"}, db_path=db)
    app = make_app(rt)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the restored panel")
        (panel,) = app.panels.values()
        await wait_until(pilot, lambda: bool(panel.query(ApprovalBar)), "the approval bar again")
        bar = panel.query_one(ApprovalBar)
        assert bar.request.request_id == ask and bar.request.call.name == "write_file"
        assert not (project / "out.txt").exists()
        result = await rt.approvals.answer_approval(ask, "allow_once", "phone")
        assert result.accepted
        view = rt.sessions[panel.session_id]
        await wait_until(pilot, lambda: view.last_result is not None, "the continued turn ends")
        await wait_until(pilot, lambda: not panel.query(ApprovalBar), "the bar goes away")
        refused = await rt.approvals.answer_approval(ask, "reject_once", "tui")
        assert refused.status == "already_answered" and "allow_once by phone" in refused.message
        await app.shutdown_runtime()
    assert (project / "out.txt").read_text() == "hi\n"
    assert view.last_result is not None and view.last_result.status.value == "completed"
    last_request = replay.requests[-1].body_json["messages"]
    assert [m.get("tool_call_id") for m in last_request if m["role"] == "tool"] == ["w1", "w1-resumed"]
    record("restart shows a pending approval again (TUI)", recovered=True)


async def test_a_pending_ask_whose_turn_cannot_continue_is_closed_with_a_note(
    replay: ReplayServer, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    db = tmp_path / "db.sqlite"
    ask = await crashed_store(db, project, moved_on=True)
    rt = await Runtime.create(project, cli_overrides={"base_url": replay.base_url, "model": "m"}, db_path=db)
    try:
        await rt.opening.restore()
        row = await rt.store.approvals.get(ask)
        assert row is not None and row.state == "closed"
        assert row.note is not None and "went on with another turn" in row.note
        assert await rt.approvals.pending_approvals() == []
        assert not any(view.pending for view in rt.sessions.values())
    finally:
        await rt.shutdown()
    assert replay.requests == []
    record("restart closes a pending approval that cannot continue", recovered=True)
