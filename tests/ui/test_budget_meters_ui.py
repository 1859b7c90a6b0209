"""The meters and the rest of issue 17 in the app (Pilot, real Runtime, loopback servers): the overview
shows prompt/cached/completion tokens, the spend priced per request and the % of the session's
budget, the header the project's spend today with the % of its per-day budget; a background
session's question is a "needs you" (inbox row, header count, notification) until a prompt is sent;
a webhook that keeps answering 500 is listed in the overview; the terminal title is restored at exit."""

from __future__ import annotations

from pathlib import Path

from textual.widgets import DataTable, Static

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.sessions import Runtime
from paragents.ui.app import make_app
from paragents.ui.inbox.screen import InboxScreen, QuestionNote
from paragents.ui.screens.overview import OverviewScreen
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import started

BIG = {"prompt_tokens": 9000, "completion_tokens": 1000, "total_tokens": 10000}
PRICES = {"m": {"input_price_per_mtok": 1.0, "output_price_per_mtok": 1.0, "cached_price_per_mtok": 0.1}}


async def test_meters_question_failed_webhook_and_title(tmp_path: Path, replay: ReplayServer) -> None:
    async with ReplayServer() as hook:  # nothing scripted: every POST answers 500
        project = tmp_path / "project"
        project.mkdir()
        runtime = await Runtime.create(
            project_dir=project,
            cli_overrides={
                "base_url": replay.base_url,
                "model": "m",
                "models": PRICES,
                "budgets": {"session": "0.05usd", "project_day": "0.1usd"},
                "notify": {"webhook": hook.base_url + "/hook"},
            },
            db_path=tmp_path / "db.sqlite",
        )
        replay.add(ScriptedResponse.from_message("done", usage={**BIG, "cached_tokens": 4000}), session="s1")
        replay.add(ScriptedResponse.from_message("Built.\n\nShall I deploy it?", usage=BIG), session="bg")
        replay.add(ScriptedResponse.from_message("Deployed.", usage=BIG), session="bg")
        app = make_app(runtime)
        written: list[str] = []
        async with app.run_test(size=SIZE) as pilot:
            (front,) = await started(pilot, app)
            await app.open_session("bg")
            await wait_until(pilot, lambda: len(app.panels) == 2, "the second panel")
            back = next(p for p in app.panels.values() if p is not front)
            app.focus_panel(front.session_id)
            notifier = app.notifier
            assert notifier is not None
            notifier.write = written.append
            notifier.digest_window = 0
            notifier.webhook_delays = (0.0,)
            runtime.submit(front.session_id, "build")
            runtime.submit(back.session_id, "build too")
            await runtime.wait_idle(front.session_id)
            await runtime.wait_idle(back.session_id)
            # $0.0064 + $0.01, priced per request, read from the store in the background
            await wait_until(pilot, lambda: "today $0.02 (16% of $0.10)" in app.sub_title, "the header")
            assert "1 needs you" in app.sub_title  # bg asks a question
            notifier.tick()
            assert [n.text for n in notifier.sent] == ["bg · question: Shall I deploy it? · f2"]
            await notifier.drain()
            assert len(hook.requests) == 2 and notifier.failures  # tried twice, kept, not lost

            await pilot.press("f3")
            await wait_until(pilot, lambda: isinstance(app.screen, OverviewScreen), "the overview")
            screen = app.screen
            table = screen.query_one(DataTable)
            first = [str(c) for c in table.get_row_at(0)]
            assert first[8:13] == ["9.0k", "4.0k", "1.0k", "$0.0064", "13% of $0.05"]
            second = [str(c) for c in table.get_row_at(1)]
            assert second[2] == "needs you: question" and second[11] == "$0.01"
            notes = str(screen.query_one("#overview-notes", Static).render())
            assert "project today $0.02 (16% of $0.10)" in notes
            assert "1 notification not delivered" in notes and "HTTP 500" in notes
            await pilot.press("escape")

            await pilot.press("f2")
            await wait_until(
                pilot, lambda: isinstance(app.screen, InboxScreen) and bool(app.screen.items), "inbox"
            )
            inbox = app.screen
            assert isinstance(inbox, InboxScreen)
            assert [(i.kind, i.summary) for i in inbox.items] == [("question", "Shall I deploy it?")]
            assert inbox.query_one(QuestionNote)
            await pilot.press("escape")

            runtime.submit(back.session_id, "yes")  # a prompt answers the question
            await runtime.wait_idle(back.session_id)
            await wait_until(pilot, lambda: "need" not in app.sub_title, "the question to be answered")
            assert written[0] == "\x1b[22;0t" and "\x1b]2;paragents · 1 needs you\x07" in written
            await app.shutdown_runtime()
        assert written[-1] == "\x1b[23;0t"  # the terminal's own title is back
