"""The main screen with no session open: what to do next (:class:`EmptyHint`), and a command line
for the slash commands that need no session (``/setup``, ``/new --model M``, ``/new --agent qwen``,
``/sessions``...), since without a panel there is no prompt box to type them in. A command is
parsed as in a prompt box and posted as :class:`~paragents.ui.core.messages.CommandRequested` (session
""); anything else is refused with a hint, never sent anywhere."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import Vertical
from textual.widgets import Input, Static

from paragents.ui.core.commands import CommandError, is_command, parse_command
from paragents.ui.core.messages import CommandRequested
from paragents.ui.widgets.ordered_input import OrderedInput

PLACEHOLDER = "type a command: /setup · /new --model NAME · /new --agent qwen · /sessions · /help"


class EmptyHint(Vertical):
    """``hint`` (plain text) above a one-line command input (see the module docstring)."""

    DEFAULT_CSS = """
    EmptyHint { height: auto; width: 100%; align-horizontal: center; padding: 1 4; }
    EmptyHint > #empty-hint { width: auto; max-width: 100%; }
    EmptyHint > #empty-command { width: 80; max-width: 100%; margin-top: 1; }
    EmptyHint > #empty-error { color: $error; width: auto; height: auto; }
    """

    def __init__(self, hint: str, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.hint = hint

    def compose(self) -> ComposeResult:
        yield Static(self.hint, id="empty-hint", markup=False)
        yield OrderedInput(placeholder=PLACEHOLDER, id="empty-command")
        yield Static("", id="empty-error", markup=False)

    def on_mount(self) -> None:
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        error = self.query_one("#empty-error", Static)
        if not text:
            return
        if not is_command(text):
            error.update("Open a session first (/new, or ctrl+n once a model is set up) to send a prompt.")
            return
        parsed = parse_command(text)
        if isinstance(parsed, CommandError):
            error.update(parsed.message)
            return
        error.update("")
        event.input.value = ""
        self.post_message(CommandRequested("", parsed))


class Demo(App[None]):
    """The empty screen's hint and command line (try `/new --bogus`, or a plain prompt)."""

    def compose(self) -> ComposeResult:
        yield EmptyHint("No model is set up yet: type /setup below, or press ctrl+p and choose /setup.")


if __name__ == "__main__":
    Demo().run()
