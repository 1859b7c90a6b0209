"""The multi-line prompt editor (a Textual ``TextArea``): Enter sends, newlines, pastes, history.

Keys (README "Keys", /help):

- Enter sends the whole text. A newline: ``shift+enter`` or ``alt+enter`` where the terminal reports
  them (terminals with the kitty keyboard protocol: kitty, WezTerm, foot, Ghostty, Alacritty, iTerm2
  3.5+; tmux with ``extended-keys``), ``ctrl+j`` everywhere (it is a plain line feed), or ``\\`` at
  the end of a line followed by Enter (the backslash becomes the newline).
- up on the first line / down on the last line browse the session's earlier prompts.
- ``ctrl+z`` undo, ``ctrl+y`` or ``ctrl+shift+z`` (kitty-protocol terminals) redo; a paste is one step.
- A suggestion (slash commands) is accepted with →, End or Tab.

A paste goes in as one edit, CR LF / CR turned into LF and everything else (tabs, long lines) kept as
it is. A paste of more than :data:`COLLAPSE_LINES` lines or :data:`COLLAPSE_CHARS` characters (or one
the editor's line model would alter) is shown as one token such as ``[pasted 5,000 lines]``; the
token is replaced by the pasted text when the prompt is sent (:attr:`PromptArea.value`).

Why the keys are handled in ``_on_key``: Textual runs a non-priority key binding only once the key
has bubbled up to the App, after the editor went on with the next keys already queued for it. With
a burst of keys (a fast typist, a paste without bracketed paste, a busy loop) "CCC⏎DDD⏎" would send
"CCCDDD" twice. So Enter, the newline keys and every key bound on the editor itself run in the
editor's own key handler, in order with the printable keys; keys it does not bind still bubble to
the app's bindings (Esc, PageUp/PageDown, …).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import ClassVar

from textual import events
from textual.actions import SkipAction
from textual.binding import Binding, BindingType
from textual.geometry import Region
from textual.message import Message
from textual.strip import Strip
from textual.widgets import TextArea
from textual.widgets.text_area import Document, Selection

NEWLINE_KEYS = frozenset({"shift+enter", "alt+enter", "ctrl+j", "shift+\r"})
"""Keys that insert a newline ("shift+\\r" is xterm's modifyOtherKeys form, sent by tmux)."""
COLLAPSE_LINES = 10
"""A paste of more lines than this is shown as a ``[pasted N lines]`` token."""
COLLAPSE_CHARS = 2000
"""A paste of more characters than this is shown as a token."""
HISTORY_SIZE = 500
"""Prompts kept for up/down browsing."""


def normalize_paste(text: str) -> str:
    """Return pasted ``text`` with CR LF and lone CR turned into LF (terminals send CR for newlines)."""
    return text.replace("\r\n", "\n").replace("\r", "\n")


def paste_label(text: str) -> str:
    """Return the token shown for a collapsed paste: "[pasted 5,000 lines]" or "[pasted 900 characters]"."""
    lines = text.count("\n") + (0 if text.endswith("\n") else 1)
    return f"[pasted {lines:,} lines]" if lines > 1 else f"[pasted {len(text):,} characters]"


def should_collapse(text: str) -> bool:
    """True when ``text`` is shown as a token: long, or altered by the editor's line model (which
    splits on form feeds, U+2028 and the like)."""
    if len(text) > COLLAPSE_CHARS or text.count("\n") >= COLLAPSE_LINES:
        return True
    return Document(text).text != text


@dataclass
class Draft:
    """What the box holds: the shown text and the pasted texts behind its tokens."""

    shown: str
    pastes: dict[str, str] = field(default_factory=dict)

    @property
    def value(self) -> str:
        """The text to send: every token replaced by its paste (one pass, pastes are not rescanned)."""
        used = [token for token in self.pastes if token in self.shown]
        if not used:
            return self.shown
        pattern = re.compile("|".join(re.escape(token) for token in used))
        return pattern.sub(lambda m: self.pastes[m.group()], self.shown)

    @classmethod
    def from_text(cls, text: str) -> Draft:
        """A draft holding ``text``, collapsed to a token when it is big."""
        if not should_collapse(text):
            return cls(text)
        token = paste_label(text)
        return cls(token, {token: text})


class PromptArea(TextArea):
    """Multi-line prompt editor; posts :class:`PromptArea.Submitted` on Enter.

    ``check`` (optional) is asked about the text on Enter: None sends it and empties the box, an error
    message sends it with that error and keeps it in the box. ``suggest`` returns the completion of
    the text (or None). ``history`` enables up/down browsing of the prompts sent from this box
    (:attr:`prompt_history`).
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+shift+z", "redo", "Redo", show=False),
    ]

    DEFAULT_CSS = """
    PromptArea { height: auto; max-height: 12; min-height: 3; }
    """

    @dataclass
    class Submitted(Message):
        """Enter was pressed: ``text`` is the whole prompt (pastes expanded), ``error`` what ``check``
        said (None: the box was emptied)."""

        area: PromptArea
        text: str
        error: str | None = None

        @property
        def control(self) -> PromptArea:
            return self.area

    def __init__(
        self,
        text: str = "",
        *,
        placeholder: str = "",
        check: Callable[[str], str | None] | None = None,
        suggest: Callable[[str], str | None] | None = None,
        history: bool = False,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        # Set before TextArea.__init__, which already calls update_suggestion and _refresh_size.
        self.check = check
        self.suggest = suggest
        self.prompt_history: list[Draft] | None = [] if history else None
        """Earlier prompts, oldest first (None: no browsing)."""
        self._pastes: dict[str, str] = {}
        self._browsing: int | None = None
        """Index in ``history`` of the prompt shown while browsing, else None."""
        self._draft = Draft("")
        """What was in the box when browsing started."""
        self._height = 0
        super().__init__(
            "",
            soft_wrap=True,
            tab_behavior="focus",
            show_line_numbers=False,
            highlight_cursor_line=False,
            placeholder=placeholder,
            id=id,
            classes=classes,
        )
        if text:
            self.set_draft(Draft.from_text(text))
            self.selection = Selection.cursor(self.document.end)

    # --- contents ------------------------------------------------------------------------------
    @property
    def value(self) -> str:
        """The whole prompt: the shown text with every paste token replaced by its paste."""
        return Draft(self.text, self._pastes).value

    @value.setter
    def value(self, text: str) -> None:
        self.set_draft(Draft.from_text(text))
        self.move_cursor(self.document.end)

    @property
    def draft(self) -> Draft:
        """The shown text and the pastes its tokens stand for."""
        return Draft(self.text, {t: p for t, p in self._pastes.items() if t in self.text})

    def set_draft(self, draft: Draft) -> None:
        """Show ``draft`` (clears undo)."""
        self._pastes = dict(draft.pastes)
        self.load_text(draft.shown)

    def reset(self) -> None:
        """Empty the box, its pastes and undo history; end browsing."""
        self._browsing = None
        self.set_draft(Draft(""))

    def remember_earlier(self, texts: list[str]) -> None:
        """Put ``texts`` (prompts of the stored conversation, oldest first) before the history."""
        if self.prompt_history is None:
            return
        drafts = [Draft.from_text(text) for text in texts if text.strip()]
        self.prompt_history[:0] = drafts
        del self.prompt_history[:-HISTORY_SIZE]
        if self._browsing is not None:
            self._browsing = min(self._browsing + len(drafts), len(self.prompt_history))

    def _remember(self, draft: Draft) -> None:
        history = self.prompt_history
        if history is None or not draft.shown.strip() or (history and history[-1] == draft):
            return
        history.append(draft)
        del history[:-HISTORY_SIZE]

    def insert_paste(self, text: str) -> None:
        """Insert pasted ``text`` at the cursor as one edit (one undo step); a big one as a token."""
        text = normalize_paste(text)
        if not text:
            return
        if should_collapse(text):
            token = paste_label(text)
            n = 1
            while token in self._pastes and self._pastes[token] != text:
                n += 1
                token = f"{paste_label(text)[:-1]} #{n}]"
            self._pastes[token] = text
            text = token
        result = self._replace_via_keyboard(text, *self.selection)
        if result is not None:
            self.move_cursor(result.end_location)

    # --- submit --------------------------------------------------------------------------------
    def action_submit(self) -> None:
        """Send the prompt (Enter): post Submitted with the text as it is now."""
        draft = self.draft
        text = draft.value
        if not text.strip():
            return
        error = self.check(text) if self.check is not None else None
        if error is None:
            self._remember(draft)
            self.reset()
        self.post_message(self.Submitted(self, text, error))

    def _enter(self) -> None:
        row, column = self.cursor_location
        line = self.document[row]
        if self.selection.is_empty and column == len(line) and line.endswith("\\"):
            # "\" + Enter at the end of a line: a newline instead of the backslash
            self._replace_via_keyboard("\n", (row, column - 1), (row, column))
            return
        self.action_submit()

    # --- keys ----------------------------------------------------------------------------------
    async def _on_key(self, event: events.Key) -> None:
        # Runs before TextArea._on_key (MRO dispatch); prevent_default() skips it for keys handled here.
        key = event.key
        if key == "enter":
            self._enter()
        elif key in NEWLINE_KEYS:
            self._replace_via_keyboard("\n", *self.selection)
        elif key == "tab" and self.suggestion:
            self.insert(self.suggestion)
        elif event.is_printable or not await self._run_own_binding(key):
            return  # typed text (TextArea inserts it) or a key for the app's bindings
        self._restart_blink()
        event.stop()
        event.prevent_default()

    async def _run_own_binding(self, key: str) -> bool:
        """Run this editor's binding for ``key`` now (see the module docstring); False when it has
        none or its action declined (SkipAction), so the key goes on to the app."""
        for binding in self._bindings.key_to_bindings.get(key, ()):
            if await self.app.run_action(binding.action, self):
                return True
        return False

    async def _on_paste(self, event: events.Paste) -> None:
        event.stop()
        event.prevent_default()  # not TextArea._on_paste
        if not self.read_only:
            self.insert_paste(event.text)

    def action_paste(self) -> None:
        """Paste the app's clipboard (ctrl+v) like a terminal paste."""
        if not self.read_only and self.app.clipboard:
            self.insert_paste(self.app.clipboard)

    def action_cursor_page_up(self) -> None:
        raise SkipAction()  # PageUp/PageDown scroll the transcript (app bindings)

    def action_cursor_page_down(self) -> None:
        raise SkipAction()

    # --- history -------------------------------------------------------------------------------
    def action_cursor_up(self, select: bool = False) -> None:
        if select or not self.navigator.is_first_wrapped_line(self.cursor_location) or not self._browse(-1):
            super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        if select or not self.navigator.is_last_wrapped_line(self.cursor_location) or not self._browse(1):
            super().action_cursor_down(select)

    def _browse(self, step: int) -> bool:
        """Show the previous (-1) or next (+1) prompt of the history; False when there is none."""
        history = self.prompt_history
        if not history or (self._browsing is None and step > 0):
            return False
        if self._browsing is None:
            self._draft = self.draft
            self._browsing = len(history)
        index = self._browsing + step
        if index < 0:
            return False
        if index >= len(history):
            self._browsing = None
            self.set_draft(self._draft)
            self.move_cursor(self.document.end)
            return True
        self._browsing = index
        self.set_draft(history[index])
        if step < 0:  # on the first line, so that up goes on browsing
            self.move_cursor((0, len(self.document[0])))
        else:
            self.move_cursor(self.document.end)
        return True

    # --- completion ----------------------------------------------------------------------------
    def update_suggestion(self) -> None:
        """Suggest the rest of a one-line text when ``suggest`` knows it and the cursor is at its end."""
        text = self.text
        suggestion = ""
        if (
            self.suggest is not None
            and text
            and "\n" not in text
            and self.cursor_location == self.document.end
        ):
            completed = self.suggest(text)
            if completed and completed.startswith(text) and len(completed) > len(text):
                suggestion = completed[len(text) :]
        self.suggestion = suggestion

    def action_cursor_line_end(self, select: bool = False) -> None:
        if self.suggestion and not select:
            self.insert(self.suggestion)
        else:
            super().action_cursor_line_end(select)

    # --- size ----------------------------------------------------------------------------------
    def render_line(self, y: int) -> Strip:
        """A line of the box; blank while the box has no width (a terminal a few columns wide), where
        TextArea would wrap its placeholder at width 0 and crash."""
        if self.content_size.width <= 0:
            return Strip.blank(max(self.size.width, 0))
        return super().render_line(y)

    def render_lines(self, crop: Region) -> list[Strip]:
        """The box's lines; blank (and drawn again next frame) while Textual has not applied its
        component styles yet: a box mounted while a modal screen is on top can be drawn in the screen's
        background first, and TextArea's theme then raised KeyError ('text-area--gutter') and crashed
        the app (seen under load when /lanes' discard closed a session)."""
        if "text-area--gutter" in self._component_styles:
            try:
                return super().render_lines(crop)
            except KeyError:  # another component style not applied yet: the same race
                pass
        self.refresh()
        return [Strip.blank(crop.width) for _ in range(crop.height)]

    def _refresh_size(self) -> None:
        super()._refresh_size()
        height = self.virtual_size.height
        if height != self._height:  # the box grows/shrinks (height: auto): a layout pass, only then
            self._height = height
            self.refresh(layout=True)
