"""The budget bar: one session held at a budget or the loop guard (a ``BudgetPaused`` event), shown in
the session's own panel and in the inbox, with its answers: raise the cap to a typed value, allow one
more request, stop (the loop guard: go on, stop).

Like the approval bar it answers only deliberately (:mod:`paragents.ui.widgets.answer_bar`): a click on
a button, or a key once the user moved focus here with ctrl+g or a click: ``r`` raise to… (opens the
value Input: Enter raises, Esc goes back), ``o`` allow one more request, ``s`` stop; the loop guard's
``g`` go on, ``s`` stop. Typing elsewhere never answers it. It posts
:class:`~paragents.ui.core.messages.Answer` (a :class:`~paragents.ui.core.messages.BudgetChoice`);
the app calls the runtime, whose events update the panels and the inbox."""

from __future__ import annotations

import asyncio
from typing import ClassVar

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Button, Input, Static

from paragents.events import BudgetPaused
from paragents.ui.core.messages import Answer, BudgetAction, BudgetChoice
from paragents.ui.core.text import clean
from paragents.ui.widgets.answer_bar import AnswerBar, answer_buttons, focus_now
from paragents.ui.widgets.ordered_input import OrderedInput

BUDGET_CHOICES = [("raise", "Raise to…"), ("one_more", "Allow one more request"), ("stop", "Stop")]
LOOP_CHOICES = [("one_more", "Go on"), ("stop", "Stop")]
BUDGET_KEYS = "r raise to… · o allow one more request · s stop"
LOOP_KEYS = "g go on · s stop"


def pause_summary(name: str, pause: BudgetPaused) -> str:
    """Return the inbox line: "api reached $2.00 of $2.00: raise to … / allow one more request / stop"."""
    if pause.level == "loop":
        return f"{clean(name)}: {clean(pause.reason)}: go on / stop"
    return f"{clean(name)} reached {pause.spent} of {pause.cap}: raise to … / allow one more request / stop"


def pause_title(pause: BudgetPaused) -> str:
    """The panel title's word for the pause: "paused: loop guard" or "paused: budget"."""
    return "paused: loop guard" if pause.level == "loop" else "paused: budget"


class BudgetBar(AnswerBar):
    """The answers to one budget or loop-guard pause (``pause``)."""

    DEFAULT_CSS = """
    BudgetBar { height: auto; padding: 0 1; border: tall $warning; background: $warning 10%; }
    BudgetBar.-armed { border: tall $warning-lighten-2; background: $warning 20%; }
    BudgetBar > .pause { height: auto; }
    BudgetBar > Input { display: none; width: 40; }
    BudgetBar.-value > Input { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("r", "raise_to", "Raise to…"),
        Binding("o", "answer('one_more')", "Allow one more request"),
        Binding("g", "go_on", "Go on"),
        Binding("s", "answer('stop')", "Stop"),
    ]
    ANSWER_ACTIONS = frozenset({"raise_to", "answer", "go_on"})

    def __init__(self, pause: BudgetPaused) -> None:
        super().__init__(classes="budget-bar")
        self.pause = pause
        """The pause being shown."""
        self._done = False

    @property
    def loop(self) -> bool:
        """True for a loop-guard pause (go on / stop), False for a budget (raise / one more / stop)."""
        return self.pause.level == "loop"

    def key_help(self) -> str:
        return LOOP_KEYS if self.loop else BUDGET_KEYS

    def compose(self) -> ComposeResult:
        head = "Loop guard: " if self.loop else "Budget: "
        text = Text(head, style="bold")
        text.append(clean(self.pause.reason))
        yield Static(text, classes="pause")
        yield Static(self.keys_text(), classes="keys")
        yield answer_buttons(LOOP_CHOICES if self.loop else BUDGET_CHOICES)
        if not self.loop:
            yield OrderedInput(placeholder="the new cap, e.g. 5usd or 500k (Enter raises, Esc goes back)")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Only the answers this pause offers (a loop guard has no cap to raise and says "go on"; a
        budget says "allow one more request"), only while armed."""
        if self.loop and (action == "raise_to" or (action == "answer" and parameters != ("stop",))):
            return False
        if not self.loop and action == "go_on":
            return False
        return super().check_action(action, parameters)

    def action_raise_to(self) -> None:
        """Show the value Input (Enter raises the cap to what is typed, Esc goes back)."""
        if self.loop:
            return
        self.add_class("-value")
        focus_now(self.query_one(Input))

    def action_go_on(self) -> None:
        """The loop guard's "go on": send the held request."""
        self._post("one_more")

    def action_answer(self, action: str) -> None:
        """Answer without a value: allow one more request (go on) or stop."""
        if action in ("one_more", "stop"):
            self._post(action)  # type: ignore[arg-type]

    def _post(self, action: BudgetAction, value: str = "") -> None:
        if self._done:
            return
        if action != "raise":
            self._done = True  # one answer; a refused raise value may be typed again
        self.post_message(Answer(BudgetChoice(self.pause, action, value)))
        if action != "raise":
            self.answered()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A click on a button answers ("Raise to…" arms the bar and opens the Input)."""
        event.stop()
        choice = event.button.id or ""
        if choice == "raise" and not self.loop:
            self.arm()
            self.action_raise_to()
        elif choice in ("one_more", "stop"):
            self.action_answer(choice)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        value = event.value.strip()
        if not value:
            self.notify("Type the new cap (e.g. 5usd or 500k), or press Esc and choose another answer.")
            return
        self._post("raise", value)

    def on_key(self, event: events.Key) -> None:
        """Esc in the value Input goes back to the bar (it does not cancel the turn)."""
        if event.key == "escape" and self.has_class("-value"):
            event.stop()
            event.prevent_default()
            self.remove_class("-value")
            focus_now(self)  # now: an answer key typed right after Esc reaches the bar


class Demo(App[None]):
    """A budget pause and a loop-guard pause."""

    def compose(self) -> ComposeResult:
        loop = asyncio.get_running_loop()
        yield BudgetBar(
            BudgetPaused(
                "s1",
                "session",
                "usd",
                "$2.00",
                "$2.00",
                "session budget of $2.00 reached ($2.00 spent)",
                loop.create_future(),
            )
        )
        yield BudgetBar(
            BudgetPaused(
                "s2",
                "loop",
                "identical_calls",
                "3",
                "3",
                "the same call (read_file path=a.py) 3 times in a row",
                loop.create_future(),
            )
        )
        yield Static("", id="out")

    def on_answer(self, msg: Answer) -> None:
        assert isinstance(msg.choice, BudgetChoice)
        self.query_one("#out", Static).update(f"answered {msg.choice.action} {msg.choice.value!r}")


if __name__ == "__main__":
    Demo().run()
