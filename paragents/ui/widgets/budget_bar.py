"""The budget bar: one session held at a budget or the loop guard (a ``BudgetPaused`` event), shown
in the inbox with its three answers: raise the cap to a typed value, allow one more request, stop.

Buttons and the Input only (Textual's own widgets); the answers call the runtime (``set_budget``,
``allow_one_more``, ``stop_paused``), whose events update the panels and the inbox."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Input, Static

from paragents.events import BudgetPaused
from paragents.ui.text import clean
from paragents.ui.widgets.ordered_input import OrderedInput


def pause_summary(name: str, pause: BudgetPaused) -> str:
    """Return the inbox line: "api reached $2.00 of $2.00: raise to … / allow one more request / stop"."""
    if pause.level == "loop":
        return f"{clean(name)}: {clean(pause.reason)}: go on / stop"
    return f"{clean(name)} reached {pause.spent} of {pause.cap}: raise to … / allow one more request / stop"


class BudgetBar(Vertical):
    """The answers to one budget pause of session ``sid`` (``runtime`` is the app's Runtime)."""

    DEFAULT_CSS = """
    BudgetBar { height: auto; padding: 0 1; border-top: solid $warning; }
    BudgetBar > Horizontal { height: auto; }
    BudgetBar Input { width: 16; }
    """

    def __init__(self, pause: BudgetPaused, sid: str, runtime: Any) -> None:
        super().__init__()
        self.pause = pause
        self.sid = sid
        self.runtime = runtime

    def compose(self) -> ComposeResult:
        yield Static(Text(clean(self.pause.reason)))
        with Horizontal():
            if self.pause.level != "loop":
                yield OrderedInput(placeholder="e.g. 5usd", id="budget-value")
                yield Button("Raise to", id="budget-raise", variant="primary")
            yield Button("Allow one more request" if self.pause.level != "loop" else "Go on", id="budget-one")
            yield Button("Stop", id="budget-stop", variant="error")

    def arm(self) -> None:
        """Focus the first answer (the inbox calls it when the user came to answer)."""
        first = self.query("Input").first() if self.query("Input") else self.query_one("#budget-one")
        first.focus()

    async def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._raise(event.value)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "budget-raise":
            self._raise(self.query_one("#budget-value", Input).value)
        elif event.button.id == "budget-one":
            self.runtime.allow_one_more(self.sid)
        elif event.button.id == "budget-stop":
            self.runtime.stop_paused(self.sid)

    def _raise(self, value: str) -> None:
        level = "project" if self.pause.level == "project_day" else "session"
        try:
            self.runtime.set_budget(self.sid, level, value.strip())
        except Exception as exc:  # SessionError: a budget that does not parse
            self.app.notify(clean(str(exc)), severity="error", markup=False)
