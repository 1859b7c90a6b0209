"""The predicted-conflict bar: one conflict predicted between two lanes (a
:class:`~paragents.events.PredictedConflict`), shown in the inbox (f2) with its actions: show both
sides (a read-only screen with both lanes' diffs of the files), ask one lane's agent to adapt (a
queued prompt naming the files and quoting the other side's change, as ``/lane adapt``), dismiss
(hidden until the prediction changes). Like the other bars its keys work only once armed (ctrl+g or
a click); its buttons act on a click. It posts :class:`~paragents.ui.core.messages.Answer` (a
:class:`~paragents.ui.core.messages.PredictionChoice`); the app acts on it."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Button, Static

from paragents.events import PredictedConflict
from paragents.ui.core.messages import Answer, PredictionChoice
from paragents.ui.core.text import clean
from paragents.ui.widgets.answer_bar import AnswerBar, answer_buttons


def prediction_summary(conflict: PredictedConflict) -> str:
    """The inbox line: "api conflicts with web in src/app.py, src/b.py (neither has merged yet)", or
    against its base branch "api conflicts with its base main in calc.py (api has not merged yet)"."""
    pending = f"{conflict.a} has not merged yet" if conflict.against_base else "neither has merged yet"
    return f"{conflict.describe()} ({pending})"


class PredictionBar(AnswerBar):
    """The actions on one predicted conflict."""

    DEFAULT_CSS = """
    PredictionBar { height: auto; padding: 0 1; border: tall $warning; background: $warning 10%; }
    PredictionBar.-armed { border: tall $warning-lighten-2; background: $warning 20%; }
    PredictionBar > .prediction { height: auto; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "act('sides')", "Show both sides"),
        Binding("a", "act('adapt_a')", "Ask the first lane to adapt"),
        Binding("b", "act('adapt_b')", "Ask the second lane to adapt"),
        Binding("d", "act('dismiss')", "Dismiss"),
    ]
    ANSWER_ACTIONS = frozenset({"act"})

    def __init__(
        self, prediction: PredictedConflict, *, adapt_a: bool = False, adapt_b: bool = False
    ) -> None:
        """``adapt_a`` / ``adapt_b``: whether an open session works in lane a / b (it can be asked to
        adapt)."""
        super().__init__(classes="prediction-bar")
        self.prediction = prediction
        self.adapt_a = adapt_a
        self.adapt_b = adapt_b and not prediction.against_base

    def _choices(self) -> list[tuple[str, str]]:
        p = self.prediction
        choices = [("sides", "Show both sides")]
        if self.adapt_a:
            choices.append(("adapt_a", f"Ask {p.a} to adapt"))
        if self.adapt_b:
            choices.append(("adapt_b", f"Ask {p.b} to adapt"))
        choices.append(("dismiss", "Dismiss"))
        return choices

    def key_help(self) -> str:
        keys = {"sides": "v", "adapt_a": "a", "adapt_b": "b", "dismiss": "d"}
        return " · ".join(f"{keys[c]} {clean(label).lower()}" for c, label in self._choices())

    def compose(self) -> ComposeResult:
        yield Static(Text(prediction_summary(self.prediction)), classes="prediction")
        yield Static(self.keys_text(), classes="keys")
        yield answer_buttons(self._choices())

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        offered = not parameters or parameters[0] in dict(self._choices())
        return action != "act" or (offered and self.armed)

    def action_act(self, choice: str) -> None:
        """Ask for one action: show both sides, ask a lane to adapt, or dismiss."""
        if choice not in dict(self._choices()):
            return
        self.post_message(Answer(PredictionChoice(self.prediction, choice)))  # type: ignore[arg-type]

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A click on a button acts."""
        event.stop()
        self.action_act(event.button.id or "")
