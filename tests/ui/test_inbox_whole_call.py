"""Issue 28 item 3 in the TUI inbox (f2): an approval whose bounded preview leaves lines out says so
plainly under the list, and ctrl+o opens the whole call (line 306's ``curl … | sh`` included) in a
scrollable screen; the same for an ask another process waits on (its row keeps the call whole)."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

from textual.widgets import Static

from paragents.events import PermissionRequested
from paragents.models import CallPreview, ToolCall
from paragents.store import Store
from paragents.tools.base import bounded_lines
from paragents.ui.inbox.remote import RemoteAsks
from paragents.ui.inbox.screen import InboxScreen, WholeCallScreen
from paragents.ui.widgets.approval_bar import ApprovalBar
from tests.serve.calls import EVIL, LONG_COMMAND
from tests.ui.bars import bar_text, plain
from tests.ui.conftest import SIZE
from tests.ui.snapshot_app import app_with, feed, settle


async def test_a_cut_command_says_how_much_is_not_shown_and_ctrl_o_shows_it_whole(tmp_path: Path) -> None:
    app, runtime = app_with(tmp_path, ["api"])
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        text, omitted = bounded_lines(LONG_COMMAND)
        call = ToolCall("c1", "run_command", json.dumps({"command": LONG_COMMAND}))
        request = PermissionRequested(
            "s1", "r1", call, "run_command echo step 1", "no rule allows it", (),
            asyncio.get_running_loop().create_future(), CallPreview("command", text, omitted=omitted),
        )  # fmt: skip
        feed(runtime, [request])
        await settle(pilot)
        await pilot.press("f2")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InboxScreen) and screen.query_one(ApprovalBar)
        cut = plain(screen.query_one("#inbox-cut", Static))
        assert "10 more lines not shown: ctrl+o shows the whole call (310 lines" in cut
        await pilot.press("ctrl+o")
        await settle(pilot)
        whole = app.screen
        assert isinstance(whole, WholeCallScreen)
        shown = plain(whole.query_one("#whole-call", Static), width=200)
        assert EVIL in shown and "echo tail 3" in shown
        await pilot.press("escape")
        await settle(pilot)
        assert app.screen is screen and not request.reply.done()


async def test_an_ask_of_another_process_shows_its_whole_command_not_the_rows_cut_preview(
    tmp_path: Path,
) -> None:
    async with await Store.open(tmp_path / "db.sqlite") as store:
        other = await store.sessions.create(name="far", project_dir=tmp_path, workdir=tmp_path, model="m")
        cut = "\n".join(LONG_COMMAND.splitlines()[:300])  # what the asking process kept
        call = {"id": "c1", "name": "run_command", "arguments": json.dumps({"command": LONG_COMMAND})}
        await store.approvals.add(
            "far1", other.id, kind="approval", tool="run_command", summary="s", call=call, preview=cut,
            pid=os.getppid(),
        )  # fmt: skip
        row = await store.approvals.get("far1")
    assert row is not None
    runtime: Any = None  # _item reads only the row
    item = RemoteAsks(runtime, print)._item(row)
    assert isinstance(item.event, PermissionRequested) and item.event.preview is not None
    assert item.event.preview.text == LONG_COMMAND and EVIL in item.event.preview.text


async def test_control_characters_of_a_command_are_shown_as_symbols_not_dropped(tmp_path: Path) -> None:
    """Fresh-user finding: what is approved is shown byte for byte: ESC as "␛", BEL as "␇", a bidi
    override by its code point, in the bar and in the whole call (ctrl+o), never silently dropped."""
    app, runtime = app_with(tmp_path, ["api"])
    command = "printf '\x1b[2J\x07' && echo \u202egnp.exe"
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        call = ToolCall("c1", "run_command", json.dumps({"command": command}))
        request = PermissionRequested(
            "s1", "r1", call, "run_command printf", "no rule allows it", (),
            asyncio.get_running_loop().create_future(), CallPreview("command", command, cwd=str(tmp_path)),
        )  # fmt: skip
        feed(runtime, [request])
        await settle(pilot)
        await pilot.press("f2")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, InboxScreen)
        shown = bar_text(screen.query_one(ApprovalBar))
        assert "$ printf '\u241b[2J\u2407' && echo <U+202E>gnp.exe" in shown
        await pilot.press("ctrl+o")
        await settle(pilot)
        assert isinstance(app.screen, WholeCallScreen)
        whole = plain(app.screen.query_one("#whole-call", Static), width=200)
        assert "printf '\u241b[2J\u2407' && echo <U+202E>gnp.exe" in whole
