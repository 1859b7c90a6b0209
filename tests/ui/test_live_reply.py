"""The streaming reply says what is true after a resize and while the reader scrolls back in it: it is
wrapped again at the new width at once (a paused stream included), and rows above the reader never
move as more text arrives."""

from __future__ import annotations

from paragents.events import TextDelta
from paragents.ui.widgets.live_reply import LiveReply
from paragents.ui.widgets.session_panel import SessionPanel
from tests.ui.conftest import SIZE, wait_until
from tests.ui.feeding import feed
from tests.ui.panel_app import PanelApp

WORDS = " ".join(f"w{i:03d}" for i in range(400))


def widest(live: LiveReply) -> int:
    """The widest row (trailing spaces left out)."""
    return max(len(row.rstrip()) for row in live.rows_text().split("\n"))


async def test_a_paused_stream_is_wrapped_again_at_the_new_width_after_a_resize() -> None:
    app = PanelApp()
    async with app.run_test(size=(60, 30)) as pilot:
        panel = app.query_one(SessionPanel)
        await feed(panel, TextDelta("s1", "follow a single job: " + WORDS))
        panel.flush()
        await pilot.pause()
        live = panel.query_one(LiveReply)
        await wait_until(pilot, lambda: widest(live) <= live.size.width, "rows at the laid-out width")
        narrow = live.size.width
        await pilot.resize_terminal(*SIZE)  # no new chunk arrives: the stream is paused
        await wait_until(pilot, lambda: live.size.width > 2 * narrow, "the wider panel")
        await wait_until(pilot, lambda: widest(live) > narrow, "rows wrapped again")
        wide = live.size.width
        assert wide > 2 * narrow
        rows = live.rows_text().split("\n")
        assert len(rows[0]) > narrow  # the first row uses the new width, not the old wrapping
        assert all(len(row) <= wide for row in rows)
        painted = [live.render_line(y).text.rstrip() for y in range(len(rows))]
        assert painted == [row.rstrip() for row in rows]
        await pilot.resize_terminal(60, 30)  # and narrower again
        await wait_until(pilot, lambda: live.size.width == narrow, "the narrow panel")
        await wait_until(pilot, lambda: widest(live) <= narrow, "rows wrapped again")


async def test_rows_above_a_reader_scrolled_back_in_a_streaming_reply_do_not_move() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        t = panel.transcript
        lines = 4 * t.size.height
        await feed(panel, TextDelta("s1", "".join(f"line {i}\n" for i in range(lines))))
        panel.flush()
        await pilot.pause()
        live = panel.query_one(LiveReply)
        t.release_anchor()  # the reader scrolls up, back into the reply (PageUp does this)
        t.scroll_to(y=live.virtual_region.y + 5, animate=False)
        await pilot.pause()
        top = t.scroll_y
        seen = [live.render_line(int(top) - live.virtual_region.y + k).text.rstrip() for k in range(5)]
        assert seen == [f"line {i}" for i in range(5, 10)]  # the start of the reply is reachable
        for batch in range(3):  # more text arrives while the reader reads
            await feed(panel, TextDelta("s1", "".join(f"more {batch}.{i}\n" for i in range(20))))
            panel.flush()
            await pilot.pause()
            assert t.scroll_y == top
            now = [live.render_line(int(top) - live.virtual_region.y + k).text.rstrip() for k in range(5)]
            assert now == seen
        assert live.rows_text().split("\n")[-1] == "more 2.19"


async def test_a_huge_pasted_prompt_shows_its_head_and_says_how_much_more() -> None:
    """A 3,000-line prompt wrapped whole in a narrow panel took ~1 GB and stalled the app."""
    from paragents.events import TurnStarted
    from paragents.ui.widgets.transcript import SHOWN_PROMPT_LINES, UserPrompt

    app = PanelApp()
    async with app.run_test(size=(40, 20)) as pilot:
        panel = app.query_one(SessionPanel)
        huge = "\n".join(f"line {i}: " + "x" * 120 for i in range(3000))
        await feed(panel, TurnStarted("s1", huge))
        await pilot.pause()
        prompt = panel.query_one(UserPrompt)
        shown = str(prompt.render())
        assert "line 0:" in shown and f"line {SHOWN_PROMPT_LINES - 1}:" in shown
        assert f"line {SHOWN_PROMPT_LINES}:" not in shown
        assert "2,960 more lines (the whole prompt was sent)" in shown
        assert prompt.size.height < 400


async def test_a_prompt_kept_unsent_says_so_not_that_it_was_sent() -> None:
    """A prompt refused for being bigger than the context window is stored marked incomplete; the
    restored transcript says it was not sent (never "the whole prompt was sent")."""
    from paragents.ui.widgets.transcript import Transcript, UserPrompt

    app = PanelApp()
    async with app.run_test(size=(60, 20)) as pilot:
        panel = app.query_one(SessionPanel)
        huge = "\n".join(f"line {i}" for i in range(3000))
        panel.query_one(Transcript).add_message({"role": "user", "content": huge, "incomplete": True})
        await pilot.pause()
        shown = str(panel.query_one(UserPrompt).render())
        assert "line 0" in shown and "(not sent: too big for the context window)" in shown
        assert "the whole prompt was sent" not in shown
