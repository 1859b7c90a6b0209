"""A held queued prompt in a narrow panel (two panels at 80 columns) keeps its text on full rows: its
buttons go under it (beside it the text wrapped to one word a row; found in the issue 30 tmux run)."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Horizontal
from textual.widgets import Button

from paragents.ui.widgets.prompt_input import QueuedItem, QueueList
from tests.ui.conftest import wait_until

TEXT = "please refactor the parser and add tests for every branch"


class Host(App[None]):
    CSS = "Horizontal > QueueList { width: 50%; display: block; }"

    def compose(self) -> ComposeResult:
        with Horizontal():
            yield QueueList("a")
            yield QueueList("b")


async def test_a_narrow_held_prompt_puts_its_buttons_under_its_text() -> None:
    app = Host()
    async with app.run_test(size=(80, 20)) as pilot:
        narrow, _ = app.query(QueueList)
        await narrow.set_queue((("p1", TEXT),), held=("p1",))
        await wait_until(pilot, lambda: bool(narrow.query(QueuedItem)), "the queued item")
        await pilot.pause()
        item = narrow.query_one(QueuedItem)
        text = item.query_one(".queued-text")
        buttons = list(item.query(Button))
        assert item.size.width < 48 and len(buttons) == 3  # send, edit, remove
        assert text.size.width == item.size.width  # the whole row, not what three buttons leave
        assert all(b.region.y >= text.region.bottom for b in buttons)  # the buttons under the text
        assert text.size.height <= 3  # "⋯ 1. held, from last time: please refactor …" in a few rows


async def test_a_wide_held_prompt_keeps_its_buttons_beside_its_text() -> None:
    app = Host()
    async with app.run_test(size=(160, 20)) as pilot:
        wide, _ = app.query(QueueList)
        await wide.set_queue((("p1", TEXT),), held=("p1",))
        await wait_until(pilot, lambda: bool(wide.query(QueuedItem)), "the queued item")
        await pilot.pause()
        item = wide.query_one(QueuedItem)
        text = item.query_one(".queued-text")
        assert all(b.region.y == text.region.y and b.region.x > text.region.x for b in item.query(Button))
