"""The TUI's inbox (f2) also lists asks another process waits on (rows of the store no panel here
shows), with the same bar; answering one there writes the row (first answer wins)."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents.llm.replay import ReplayServer
from paragents.sessions import Runtime
from paragents.store import Store
from paragents.ui.app import make_app
from paragents.ui.inbox.screen import InboxScreen
from paragents.ui.widgets.approval_bar import ApprovalBar
from tests.ui.conftest import SIZE, wait_until
from tests.ui.test_approvals import bar_text


@pytest.fixture
async def replay() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as server:
        yield server


async def test_an_ask_of_another_process_is_answered_from_the_inbox(
    replay: ReplayServer, tmp_path: Path
) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    db = tmp_path / "db.sqlite"
    async with await Store.open(db) as store:
        other = await store.sessions.create(name="elsewhere", project_dir=project, workdir=project, model="m")
        await store.sessions.update(other.id, is_open=False)  # a `paragents run` in another terminal
        await store.approvals.add(
            "far1", other.id, kind="approval", tool="run_command", summary="run_command make deploy",
            reason="no rule allows it", preview="make deploy", rules=("Bash(make deploy)",),
            pid=os.getppid(),  # alive, and not this process
        )  # fmt: skip
    rt = await Runtime.create(project, cli_overrides={"base_url": replay.base_url, "model": "m"}, db_path=db)
    app = make_app(rt)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready, "the app")
        await pilot.press("f2")
        screen = app.screen
        assert isinstance(screen, InboxScreen)
        await wait_until(pilot, lambda: [i.key for i in screen.items] == ["far1"], "the far ask listed")
        assert "elsewhere (pid" in screen.items[0].session_name
        bar = screen.query_one(ApprovalBar)
        await pilot.press("ctrl+g")
        await wait_until(pilot, lambda: bar.armed, "the bar takes the keys")
        await pilot.press("s")
        row = None

        async def answered() -> bool:
            nonlocal row
            row = await rt.store.approvals.get("far1")
            return row is not None and row.state == "answered"

        for _ in range(200):  # the answer is written by a task: wait for the row, frame by frame
            if await answered():
                break
            await pilot.pause()
        assert row is not None and row.state == "answered"
        assert row.answer == "allow_session" and str(row.answered_by).startswith("tui (pid ")
        await wait_until(pilot, lambda: not screen.items, "the inbox is empty again")
        await app.shutdown_runtime()


async def test_an_ask_of_another_process_names_the_directory_its_command_runs_in(
    replay: ReplayServer, tmp_path: Path
) -> None:
    """Fresh-user finding: the bar said "(the session's directory is not usable)" for another process's
    command whose directory was fine (the row has no preview cwd: it comes from the session's row)."""
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    db = tmp_path / "db.sqlite"
    async with await Store.open(db) as store:
        other = await store.sessions.create(name="elsewhere", project_dir=project, workdir=project, model="m")
        await store.sessions.update(other.id, is_open=False)
        for rid, args in (
            ("far1", {"command": "make", "cwd": "sub"}),
            ("far2", {"command": "ls", "cwd": "no"}),
        ):
            call = {"id": rid, "name": "run_command", "arguments": json.dumps(args)}
            await store.approvals.add(
                rid, other.id, kind="approval", tool="run_command", summary=f"run_command {args['command']}",
                call=call, preview=args["command"], pid=os.getppid(),
            )  # fmt: skip
    rt = await Runtime.create(project, cli_overrides={"base_url": replay.base_url, "model": "m"}, db_path=db)
    app = make_app(rt)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready, "the app")
        await pilot.press("f2")
        screen = app.screen
        assert isinstance(screen, InboxScreen)
        await wait_until(pilot, lambda: len(screen.items) == 2, "the far asks listed")
        shown = " ".join(bar_text(screen.query_one(ApprovalBar)).split())
        assert f"$ make in {project.resolve() / 'sub'}" in shown and "not usable" not in shown
        await pilot.press("down")
        await wait_until(pilot, lambda: "$ ls" in bar_text(screen.query_one(ApprovalBar)), "the second ask")
        shown = " ".join(bar_text(screen.query_one(ApprovalBar)).split())
        assert "will fail: cwd 'no' is not an existing directory" in shown
        await app.shutdown_runtime()
