"""Editing keys sent in a burst apply in order with typed text (Textual's Input runs them later)."""

from __future__ import annotations

from textual import events
from textual.app import App, ComposeResult
from textual.widgets import Input

from paragents.ui.widgets.ordered_input import OrderedInput

KEYS = [("b", "b"), ("a", "a"), ("backspace", None), ("c", "c"), ("left", None), ("x", "x"), ("end", None)]


class Two(App[None]):
    def compose(self) -> ComposeResult:
        yield OrderedInput(id="ordered")
        yield Input(id="plain")


async def test_a_burst_of_keys_applies_in_order_in_an_ordered_input() -> None:
    app = Two()
    async with app.run_test() as pilot:
        ordered = app.query_one("#ordered", OrderedInput)
        ordered.focus()
        await pilot.pause()
        for key, char in KEYS:  # all queued before any is handled: a burst
            ordered.post_message(events.Key(key, char))
        await pilot.pause()
        await pilot.pause()
        assert ordered.value == "bxc" and ordered.cursor_position == 3
