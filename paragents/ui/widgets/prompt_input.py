"""A session's prompt box: one-line Input (Enter submits) with slash-command completion, plus the
list of queued prompts above it (each editable or removable until it starts).

Completion: typing "/se" suggests "/sessions" inline (→ or End accepts) and the hint line under the
box lists every matching command with its usage. A bad command is reported in the hint line and is
not sent. Posts PromptSubmitted, CommandRequested and QueueEditRequested (paragents.ui.messages).
"""

from __future__ import annotations

from rich.text import Text
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.suggester import Suggester
from textual.widgets import Button, Input, Static

from paragents.ui.commands import CommandError, complete, is_command, parse_command
from paragents.ui.glyphs import glyphs
from paragents.ui.messages import CommandRequested, PromptSubmitted, QueueEditRequested
from paragents.ui.text import plain, shorten


class SlashSuggester(Suggester):
    """Suggests the first slash command whose name starts with what was typed ("/se" → "/sessions")."""

    def __init__(self) -> None:
        super().__init__(use_cache=True, case_sensitive=False)

    async def get_suggestion(self, value: str) -> str | None:
        """Return "/name" for the first command matching ``value``, or None."""
        matches = complete(value)
        return "/" + matches[0].name if matches else None


class QueuedItem(Horizontal):
    """One queued prompt: its text, an edit button and a remove button."""

    DEFAULT_CSS = """
    QueuedItem { height: auto; }
    QueuedItem > .queued-text { width: 1fr; height: auto; color: $text-muted; }
    QueuedItem > Button { min-width: 6; height: 1; margin: 0 0 0 1; }
    QueuedItem > Input { width: 1fr; }
    """

    def __init__(self, session_id: str, prompt_id: str, text: str, position: int) -> None:
        super().__init__()
        self.session_id = session_id
        self.prompt_id = prompt_id
        """Id of the queued prompt (from Runtime.submit / PromptQueued)."""
        self.text = text
        self.position = position

    def compose(self) -> ComposeResult:
        label = Text(f"{glyphs().queued} {self.position + 1}. ", style="bold")
        label.append(shorten(self.text, 200))
        yield Static(label, classes="queued-text")
        yield Button("edit", compact=True, classes="edit")
        yield Button(plain(glyphs().remove), compact=True, classes="remove", tooltip="remove from queue")

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.has_class("remove"):
            self.post_message(QueueEditRequested(self.session_id, self.prompt_id, None))
        elif event.button.has_class("edit"):
            await self.query_one(".queued-text").remove()
            editor = Input(self.text, classes="queued-edit")
            await self.mount(editor, before=0)
            editor.focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        text = event.value.strip()
        self.post_message(QueueEditRequested(self.session_id, self.prompt_id, text or None))


class QueueList(Vertical):
    """The queued (not started) prompts of a session; hidden when empty."""

    DEFAULT_CSS = """
    QueueList { height: auto; max-height: 8; overflow-y: auto; display: none; }
    QueueList.-nonempty { display: block; }
    """

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.prompts: tuple[tuple[str, str], ...] = ()
        """Current queue as (prompt_id, text) pairs, oldest first."""

    async def set_queue(self, prompts: tuple[tuple[str, str], ...]) -> None:
        """Show ``prompts`` ((prompt_id, text) pairs), replacing the previous list."""
        if prompts == self.prompts:
            return
        self.prompts = prompts
        await self.remove_children()
        await self.mount_all(
            [QueuedItem(self.session_id, pid, text, i) for i, (pid, text) in enumerate(prompts)]
        )
        self.set_class(bool(prompts), "-nonempty")


class PromptBox(Vertical):
    """Queue list, prompt Input and hint line of one session."""

    DEFAULT_CSS = """
    PromptBox { height: auto; }
    PromptBox > Input { border: tall $panel; }
    PromptBox > Input:focus { border: tall $accent; }
    PromptBox > .hint { height: auto; max-height: 6; color: $text-muted; padding: 0 1; display: none; }
    PromptBox > .hint.-shown { display: block; }
    PromptBox > .hint.-error { color: $error; }
    """

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id
        self._shown_hint: tuple[str, bool] = ("", False)

    def compose(self) -> ComposeResult:
        yield QueueList(self.session_id)
        yield Input(
            placeholder="Ask the agent… (Enter sends, / for commands)",
            suggester=SlashSuggester(),
            id="prompt",
        )
        yield Static("", classes="hint", markup=False)

    def on_mount(self) -> None:
        if self.app.is_headless:  # frozen cursor: deterministic screenshots in tests
            self.input.cursor_blink = False

    @property
    def input(self) -> Input:
        """The prompt Input."""
        return self.query_one("#prompt", Input)

    def _hint(self, text: str | Text, *, error: bool = False) -> None:
        # Called on every keystroke: touch the hint only when it changes (an update is a screen-wide
        # layout pass, ~20 ms with eight panels).
        key = (str(text), error)
        if key == self._shown_hint:
            return
        self._shown_hint = key
        hint = self.query_one(".hint", Static)
        hint.update(text)
        hint.set_class(bool(text), "-shown")
        hint.set_class(error, "-error")

    def on_input_changed(self, event: Input.Changed) -> None:
        if event.input.id != "prompt":
            return
        value = event.value
        matches = complete(value.strip()) if value.startswith("/") else []
        if matches:
            text = Text()
            for i, spec in enumerate(matches[:6]):
                if i:
                    text.append("\n")
                text.append(spec.usage, style="bold")
                text.append(f"  {spec.help}")
            self._hint(text)
        else:
            self._hint("")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        if event.input.id != "prompt":
            return
        event.stop()
        text = event.value
        if not text.strip():
            return
        if is_command(text):
            parsed = parse_command(text)
            if isinstance(parsed, CommandError):
                self._hint(parsed.message, error=True)
                return
            event.input.clear()
            self._hint("")
            self.post_message(CommandRequested(self.session_id, parsed))
            return
        event.input.clear()
        self._hint("")
        self.post_message(PromptSubmitted(self.session_id, text))

    async def set_queue(self, prompts: tuple[tuple[str, str], ...]) -> None:
        """Show the session's queued prompts ((prompt_id, text) pairs)."""
        await self.query_one(QueueList).set_queue(prompts)


if __name__ == "__main__":

    class _Demo(App[None]):
        def compose(self) -> ComposeResult:
            yield Static("", id="out")
            yield PromptBox("s1")

        async def on_mount(self) -> None:
            await self.query_one(PromptBox).set_queue((("p1", "run the tests"), ("p2", "then fix lint")))

        def on_prompt_submitted(self, msg: PromptSubmitted) -> None:
            self.query_one("#out", Static).update(f"prompt: {msg.text}")

        def on_command_requested(self, msg: CommandRequested) -> None:
            self.query_one("#out", Static).update(f"command: {msg.command}")

        def on_queue_edit_requested(self, msg: QueueEditRequested) -> None:
            self.query_one("#out", Static).update(f"queue edit: {msg.prompt_id} -> {msg.text!r}")

    _Demo().run()
