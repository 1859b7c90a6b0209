"""Pilot test of a best-of-3 in the app: ``/fanout 3 --verify CMD PROMPT`` opens three grouped
panels in lanes; their asks reach the inbox tagged with the group and one ctrl+a answers them all;
the compare screen opens when all finish with the smallest passing diff first; ``a`` opens the
lanes merge dialog for it (verify passed on its tree) and its button lands it."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static, TextArea

from paragents.llm.replay import ReplayServer
from paragents.ui.app import make_app
from paragents.ui.fanout.compare import CompareScreen
from paragents.ui.inbox.screen import InboxScreen
from paragents.ui.lanes.merge import MergeScreen
from tests.fanout.conftest import PROMPT, SLUG, VERIFY, make_runtime, script_candidates
from tests.lanes.conftest import sh
from tests.ui.conftest import SIZE, wait_until


async def test_best_of_three_from_the_tui(server: ReplayServer, repo: Path, tmp_path: Path) -> None:
    script = tmp_path / "verify.sh"
    script.write_text(f"#!/bin/sh\n{VERIFY}\n")
    script.chmod(0o755)
    script_candidates(server)
    runtime, _ = await make_runtime(server, repo, tmp_path / "db.sqlite", max_parallel_turns=3)
    app = make_app(runtime)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 1, "the first panel")
        await pilot.press(*f"/fanout 3 --verify {script} {PROMPT}", "enter")
        await wait_until(pilot, lambda: len(app.panels) == 4, "the three siblings' panels")
        names = sorted(v.name for v in runtime.sessions.values() if v.lane)
        assert names == [f"{SLUG}-{i}" for i in (1, 2, 3)]
        waiting = lambda: sum(v.state.value == "waiting" for v in runtime.sessions.values())  # noqa: E731
        await wait_until(pilot, lambda: waiting() == 3, "three asks")
        app.action_inbox()
        await wait_until(
            pilot, lambda: isinstance(app.screen, InboxScreen) and len(app.screen.items) == 3, "inbox"
        )
        assert {item.group for item in app.screen.items} == {SLUG}  # type: ignore[attr-defined]
        await pilot.press("ctrl+a")  # allow the suggested rule for the whole fan-out
        inbox = app.screen
        assert isinstance(inbox, InboxScreen)
        await wait_until(pilot, lambda: not inbox.items, "every sibling unblocked")
        # The compare screen opens by itself when the group is done, possibly over the inbox already
        # (a fast run): close the inbox only while it is on top, in the same step as the check.
        if app.screen is inbox:
            app.pop_screen()

        def rows() -> int:
            screen = app.screen
            if not isinstance(screen, CompareScreen):
                return 0
            tables = list(screen.query(DataTable))
            return tables[0].row_count if tables else 0

        await wait_until(pilot, lambda: rows() == 3, "the compare screen", 120)
        table = app.screen.query_one(DataTable)
        assert [str(table.get_row_at(i)[1]) for i in range(3)] == [f"{SLUG}-3", f"{SLUG}-2", f"{SLUG}-1"]
        assert str(table.get_row_at(2)[3]) == "exit 1" and "test_add" in str(table.get_row_at(2)[4])
        assert sh(repo, "log", "--oneline").count("\n") == 0  # nothing merged automatically
        await pilot.press("a")
        await wait_until(pilot, lambda: isinstance(app.screen, MergeScreen), "the merge dialog")
        dialog = app.screen
        await wait_until(pilot, lambda: bool(dialog.query_one(TextArea).text.strip()), "the drafted message")
        assert "passed on exactly this tree" in str(dialog.query_one("#plan-text", Static).content)
        subject = dialog.query_one(TextArea).text.splitlines()[0]
        await pilot.press("enter")  # the merge button has the focus
        await wait_until(pilot, lambda: "a + b" in (repo / "app.py").read_text(), "the applied candidate")
        assert sh(repo, "log", "-1", "--format=%s") == subject
        await app.shutdown_runtime()
