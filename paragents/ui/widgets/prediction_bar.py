"""The predicted-conflict bar: one conflict predicted between two lanes (a
:class:`~paragents.events.PredictedConflict`), shown in the inbox (f2) with its actions: show both
sides (a read-only screen with both lanes' diffs of the files), ask one lane's agent to adapt (a
queued prompt naming the files and quoting the other side's change, as ``/lane adapt``), dismiss
(hidden until the prediction changes). Like the other bars its keys work only once armed (ctrl+g or
a click); its buttons act on a click. It calls the runtime itself (``runtime`` is the app's)."""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Button, Static

from paragents.events import PredictedConflict
from paragents.ui.text import clean
from paragents.ui.widgets.answer_bar import AnswerBar, answer_buttons


def prediction_summary(conflict: PredictedConflict) -> str:
    """The inbox line: "api conflicts with web in src/app.py, src/b.py (neither has merged yet)", or
    against its base branch "api conflicts with its base main in calc.py (api has not merged yet)"."""
    pending = f"{conflict.a} has not merged yet" if conflict.against_base else "neither has merged yet"
    return f"{conflict.describe()} ({pending})"


def lane_sessions(runtime: Any, lane: str) -> list[str]:
    """Ids of the open sessions working in ``lane``."""
    return [sid for sid, view in getattr(runtime, "sessions", {}).items() if view.lane == lane]


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

    def __init__(self, prediction: PredictedConflict, runtime: Any) -> None:
        super().__init__(classes="prediction-bar")
        self.prediction = prediction
        self.runtime = runtime

    def _choices(self) -> list[tuple[str, str]]:
        p = self.prediction
        choices = [("sides", "Show both sides")]
        if lane_sessions(self.runtime, p.a):
            choices.append(("adapt_a", f"Ask {p.a} to adapt"))
        if not p.against_base and lane_sessions(self.runtime, p.b):
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

    async def action_act(self, choice: str) -> None:
        """Run one action: show both sides, ask a lane to adapt, or dismiss."""
        p = self.prediction
        if choice not in dict(self._choices()):
            return
        try:
            if choice == "sides":
                from paragents.ui.screens.prediction import SidesScreen

                sides = await self.runtime.lane_conflict_sides(p.key)
                self.app.push_screen(SidesScreen(prediction_summary(p), sides))
            elif choice in ("adapt_a", "adapt_b"):
                lane, other = (p.a, p.b) if choice == "adapt_a" else (p.b, p.a)
                sid = lane_sessions(self.runtime, lane)[0]
                await self.runtime.adapt_lane(sid, other)
                self.app.notify(f"Asked {lane}'s agent to adapt to {other}'s change (queued).", markup=False)
            elif choice == "dismiss":
                self.runtime.dismiss_lane_conflict(p.key)
        except Exception as exc:  # SessionError: the prediction went away meanwhile
            self.app.notify(clean(str(exc)), severity="error", markup=False)

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """A click on a button acts."""
        event.stop()
        await self.action_act(event.button.id or "")
