"""A session's prompt box: the multi-line prompt editor (:mod:`paragents.ui.widgets.prompt_area`;
Enter sends) with slash-command completion, plus the list of queued prompts above it (each editable
or removable until it starts).

Completion: typing "/se" suggests "/sessions" inline (→, End or Tab accepts) and the hint line under
the box lists every matching command with its usage. A bad command is reported in the hint line and
is not sent. Posts PromptSubmitted, CommandRequested and QueueEditRequested (paragents.ui.core.messages).
"""

from __future__ import annotations

import time
from typing import Any

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static, TextArea

from paragents import events as ev
from paragents.ui.core.agent_commands import PARAGENTS_NAMES, agent_command, agent_matches, agent_prompt
from paragents.ui.core.commands import CommandError, complete, is_command, parse_command
from paragents.ui.core.glyphs import glyphs
from paragents.ui.core.messages import (
    CommandRequested,
    DraftChanged,
    PromptSubmitted,
    QueueEditRequested,
    QueueReleaseRequested,
)
from paragents.ui.core.text import clean, plain, shorten
from paragents.ui.widgets.prompt_area import PromptArea

DRAFT_SAVE_S = 1.0
"""Seconds after the last keystroke at which the unsent draft is saved (DraftChanged)."""


def suggest_command(value: str) -> str | None:
    """Return "/name" for the first command whose name starts with ``value`` ("/se" → "/sessions")."""
    if not value.startswith("/"):
        return None
    matches = complete(value)
    return "/" + matches[0].name if matches else None


def command_error(text: str) -> str | None:
    """The problem with a slash command (shown in the hint line; it is not sent), else None."""
    if is_command(text):
        parsed = parse_command(text)
        if isinstance(parsed, CommandError):
            return parsed.message
    return None


NARROW_QUEUED = 48
"""Below this width a queued prompt's buttons go under its text (beside it, at 80 columns with two
panels, the text wrapped to one word a row)."""


class QueuedItem(Horizontal):
    """One queued prompt: its text, an edit button and a remove button; a ``held`` one (still queued
    when paragents stopped, back not sent) also a send button that lets it start."""

    DEFAULT_CSS = """
    QueuedItem { height: auto; }
    QueuedItem > .queued-text { width: 1fr; height: auto; color: $text-muted; }
    QueuedItem > .queued-buttons { width: auto; height: 1; }
    QueuedItem Button { min-width: 6; height: 1; margin: 0 0 0 1; }
    QueuedItem > PromptArea { width: 1fr; }
    QueuedItem.-narrow { layout: vertical; }
    QueuedItem.-narrow > .queued-buttons { width: 1fr; }
    """

    def __init__(
        self, session_id: str, prompt_id: str, text: str, position: int, *, held: bool = False
    ) -> None:
        super().__init__()
        self.session_id = session_id
        self.prompt_id = prompt_id
        """Id of the queued prompt (from Runtime.submit / QueueChanged)."""
        self.text = text
        self.position = position
        self.held = held
        """Waits to be sent (queued when paragents stopped)."""

    def compose(self) -> ComposeResult:
        label = Text(f"{glyphs().queued} {self.position + 1}. ", style="bold")
        if self.held:
            label.append("held, from last time: ", style="yellow")
        label.append(shorten(self.text, 200))
        yield Static(label, classes="queued-text")
        with Horizontal(classes="queued-buttons"):
            if self.held:
                yield Button("send", compact=True, classes="send", tooltip="start this prompt in its turn")
            yield Button("edit", compact=True, classes="edit")
            yield Button(plain(glyphs().remove), compact=True, classes="remove", tooltip="remove from queue")

    def on_resize(self, event: events.Resize) -> None:
        self.set_class(event.size.width < NARROW_QUEUED, "-narrow")

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.has_class("remove"):
            self.post_message(QueueEditRequested(self.session_id, self.prompt_id, None))
        elif event.button.has_class("send"):
            self.post_message(QueueReleaseRequested(self.session_id, self.prompt_id))
        elif event.button.has_class("edit"):
            await self.query_one(".queued-text").remove()
            editor = PromptArea(self.text, classes="queued-edit")
            await self.mount(editor, before=0)
            editor.focus()

    def on_prompt_area_submitted(self, event: PromptArea.Submitted) -> None:
        event.stop()
        text = event.text.strip()
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
        self.held: tuple[str, ...] = ()
        """Ids of the queued prompts held (not sent until released)."""

    async def set_queue(self, prompts: tuple[tuple[str, str], ...], held: tuple[str, ...] = ()) -> None:
        """Show ``prompts`` ((prompt_id, text) pairs; the ids in ``held`` wait to be sent), replacing
        the previous list."""
        if prompts == self.prompts and held == self.held:
            return
        self.prompts, self.held = prompts, held
        await self.remove_children()
        await self.mount_all(
            [
                QueuedItem(self.session_id, pid, text, i, held=pid in held)
                for i, (pid, text) in enumerate(prompts)
            ]
        )
        self.set_class(bool(prompts), "-nonempty")


class PromptBox(Vertical):
    """Queue list, prompt editor and hint line of one session."""

    DEFAULT_CSS = """
    PromptBox { height: auto; }
    PromptBox > PromptArea { border: tall $panel; }
    PromptBox > PromptArea:focus { border: tall $accent; }
    PromptBox > .hint { height: auto; max-height: 6; color: $text-muted; padding: 0 1; display: none; }
    PromptBox > .hint.-shown { display: block; }
    PromptBox > .hint.-error { color: $error; }
    """

    def __init__(self, session_id: str) -> None:
        super().__init__()
        self.session_id = session_id
        self._shown_hint: tuple[str, bool] = ("", False)
        self._saved_draft = ""
        """The draft as last saved (DraftChanged posted), to post only changes."""
        self._draft_timer: Any = None
        self._typed_at = 0.0
        self.agent: ev.AgentControlsChanged | None = None
        """What the session's external ACP agent offers (its commands are completed and sent to it;
        ``/mode`` and ``/model`` address it), set by the panel; None for paragents' own agent."""
        self.input = PromptArea(
            placeholder="Ask… (Enter sends, ctrl+j newline, / commands)",
            check=self._check,
            suggest=self._suggest,
            history=True,
            id="prompt",
        )
        """The prompt editor."""

    def compose(self) -> ComposeResult:
        yield QueueList(self.session_id)
        yield self.input
        yield Static("", classes="hint", markup=False)

    def on_mount(self) -> None:
        if self.app.is_headless:  # frozen cursor: deterministic screenshots in tests
            self.input.cursor_blink = False

    def remember(self, messages: list[Any]) -> None:
        """Add the user prompts among ``messages`` (a stored conversation) to the up/down history."""
        texts = [
            m["content"] for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)
        ]
        self.input.remember_earlier(texts)

    def prefill(self, text: str) -> None:
        """Put ``text`` in the box (cursor at its end) and focus it."""
        self.input.value = text
        self.input.focus()

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

    # --- the unsent draft, kept for next time --------------------------------------------------------
    def _draft_typed(self) -> None:
        """Save the draft once typing pauses for :data:`DRAFT_SAVE_S`: a keystroke only stamps the
        time; one timer per pause (it re-arms itself for the rest of the wait when typing went on)."""
        self._typed_at = time.monotonic()
        if self._draft_timer is None:
            self._draft_timer = self.set_timer(DRAFT_SAVE_S, self._draft_due)

    def _draft_due(self) -> None:
        self._draft_timer = None  # this one fired
        left = DRAFT_SAVE_S - (time.monotonic() - self._typed_at)
        if left > 0.05:
            self._draft_timer = self.set_timer(left, self._draft_due)
        else:
            self.save_draft()

    def save_draft(self) -> None:
        """Post DraftChanged when the draft differs from the one last saved."""
        if self._draft_timer is not None:
            self._draft_timer.stop()
            self._draft_timer = None
        text = self.unsaved_draft()
        if text is not None:
            self._saved_draft = text
            self.post_message(DraftChanged(self.session_id, text))

    def unsaved_draft(self) -> str | None:
        """The box's text when it differs from the draft last saved, else None."""
        text = self.input.value
        return None if text == self._saved_draft else text

    def keep_unsent(self, text: str) -> None:
        """Put ``text``, a prompt that could not be sent (the session is held by another process), back
        into the box with the cursor at its end; what was typed since stays after it."""
        area = self.input
        typed = area.text
        area.text = text + (f"\n{typed}" if typed else "")
        area.move_cursor(area.document.end)
        self.post_message(DraftChanged(self.session_id, area.text))

    def restore_draft(self, text: str) -> None:
        """Put a draft kept from last time into the box: the whole box when it is empty, else after
        what is typed (the cursor stays). Never focuses, never sends."""
        if not text or text in self.input.value:
            return
        if not self.input.value:
            self.input.value = text
            self._saved_draft = self.input.value  # the store already holds it
        else:
            area = self.input
            selection = area.selection  # before the end: it stays valid after the insert
            area.insert("\n\n" + text, area.document.end)
            area.selection = selection

    def _check(self, text: str) -> str | None:
        if agent_prompt(text, self.agent) is not None or agent_command(text, self.agent) is not None:
            return None
        return command_error(text)

    def _suggest(self, value: str) -> str | None:
        """The inline suggestion: the first line of the hint list (the agent's commands come first)."""
        theirs = agent_matches(value, self.agent)
        if value.startswith("//"):
            return "//" + theirs[0][0] if theirs else None
        if theirs and theirs[0][0].lower() not in PARAGENTS_NAMES:  # shadowed: paragents' own wins
            return "/" + theirs[0][0]
        return suggest_command(value)

    def on_text_area_changed(self, event: TextArea.Changed) -> None:
        if event.text_area is not self.input:
            return
        self._draft_typed()
        value = self.input.text
        matches = complete(value.strip()) if value.startswith("/") else []
        theirs = agent_matches(value, self.agent) if value.startswith("/") else []
        # six rows at most: the agent's commands first (paragents' own are known; theirs are what this
        # session adds), at least three of them when both match
        theirs = theirs[: max(3, 6 - len(matches))]
        text = Text()
        agent = self.agent.agent if self.agent is not None else ""
        for name, desc in theirs:
            if text:
                text.append("\n")
            shadowed = value.startswith("//") or name.lower() in PARAGENTS_NAMES  # paragents' wins
            # the agent's words: plain text, never markup, made safe for the terminal (flags: [FR])
            text.append(("//" if shadowed else "/") + clean(name), style="bold")
            text.append(clean(f"  {desc} · {agent}" if desc else f"  · {agent}"))
        for spec in matches[: 6 - len(theirs)]:
            if text:
                text.append("\n")
            text.append(spec.usage, style="bold")
            text.append(f"  {spec.help}")
        self._hint(text if text else "")

    def on_prompt_area_submitted(self, event: PromptArea.Submitted) -> None:
        if event.area is not self.input:
            return
        event.stop()
        if event.error is not None:
            self._hint(event.error, error=True)
            return
        self._hint("")
        if self._saved_draft:  # sent: the box is empty now, and must not come back next time
            self._saved_draft = ""
            self.post_message(DraftChanged(self.session_id, ""))
        to_agent = agent_prompt(event.text, self.agent)
        if to_agent is not None:  # the agent's own command: sent to it as the prompt
            self.post_message(PromptSubmitted(self.session_id, to_agent))
            return
        addressed = agent_command(event.text, self.agent)
        if addressed is not None:
            self.post_message(CommandRequested(self.session_id, addressed))
            return
        parsed = parse_command(event.text) if is_command(event.text) else None
        if parsed is not None and not isinstance(parsed, CommandError):
            self.post_message(CommandRequested(self.session_id, parsed))
        else:
            self.post_message(PromptSubmitted(self.session_id, event.text))

    async def set_queue(self, prompts: tuple[tuple[str, str], ...], held: tuple[str, ...] = ()) -> None:
        """Show the session's queued prompts ((prompt_id, text) pairs; ``held``: ids not sent yet).
        Focus on a queued prompt that goes (its button, its editor) comes back to the prompt editor,
        never to whatever Textual picks next (an ask's bar)."""
        queue = self.query_one(QueueList)
        had_focus = queue.has_focus_within
        await queue.set_queue(prompts, held)
        if had_focus and not queue.has_focus_within and self.is_attached:
            self.screen.set_focus(self.input, scroll_visible=False)


class Demo(App[None]):
    """The prompt box with two queued prompts (edit/remove buttons) and what it posts."""

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


if __name__ == "__main__":
    Demo().run()
