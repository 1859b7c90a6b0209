"""Inline conflict bar: shows one held tool call (a ``ConflictDetected`` event) in a session's panel.

It says which other session holds what (doing what, since when), or shows the diff of a file that
changed since the session read it, and offers the event's choices. Keys while it has focus: ``w`` wait
(the call runs by itself once the holder releases), ``r`` run anyway, ``s`` skip (the model is told
why), ``e`` re-read first (stale reads: the model gets the new content). It posts
:class:`ConflictAnswered`; the panel (or the inbox) resolves the event's Future.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static

from paragents.events import ConflictAnswer, ConflictDetected
from paragents.ui.glyphs import glyphs
from paragents.ui.text import clean, shorten

CHOICE_KEYS: dict[str, tuple[str, str]] = {
    "wait": ("w", "wait"),
    "run_anyway": ("r", "run anyway"),
    "skip": ("s", "skip"),
    "reread": ("e", "re-read first"),
}
"""Answer -> (key, label) shown in the bar, in the order of the event's ``choices``."""
MAX_DIFF_LINES = 12
"""Lines of a stale-read diff shown in the bar (the rest is summarised)."""


class ConflictAnswered(Message):
    """The user answered conflict ``conflict_id`` with ``answer`` (wait/run_anyway/skip/reread)."""

    def __init__(self, conflict_id: str, answer: ConflictAnswer) -> None:
        super().__init__()
        self.conflict_id = conflict_id
        """Id carried by the ConflictDetected event."""
        self.answer = answer
        """One of the event's ``choices``."""


def age_text(seconds: float) -> str:
    """Return a short age: 42 → "42s", 125 → "2m05s", 7300 → "2h01m" (negative counts as 0)."""
    s = max(int(seconds), 0)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def describe(event: ConflictDetected, now: float) -> Text:
    """Return the bar's text for ``event``: what is held, by whom, doing what, since when (``now`` in
    Unix seconds), and the diff of a stale read."""
    text = Text(overflow="fold")
    text.append(f"{glyphs().stop} Conflict: ", style="bold")
    text.append(shorten(clean(event.summary), 200))
    text.append("\n  ")
    path = event.path.removeprefix("resource:")
    if event.kind == "stale_read":
        text.append(f"{clean(path)} changed on disk since this session read it", style="bold")
        text.append(f" ({age_text(now - event.since)} ago)", style="dim")
    else:
        what = {
            "reservation": f"is writing {path}",
            "resource": f"is using the resource {path}",
            "unknown_targets": f"is writing {path}, and this command's targets cannot be known",
        }[event.kind]
        text.append(clean(event.holder or "another session"), style="bold")
        text.append(f" {what}")
        text.append(f" (for {age_text(now - event.since)})", style="dim")
        if event.holder_reason:
            text.append("\n  doing: ", style="dim")
            text.append(shorten(clean(event.holder_reason), 160), style="dim")
    if event.diff:
        lines = event.diff.splitlines()
        for line in lines[:MAX_DIFF_LINES]:
            style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
            text.append("\n  " + shorten(clean(line), 200), style=style)
        if len(lines) > MAX_DIFF_LINES:
            text.append(f"\n  … {len(lines) - MAX_DIFF_LINES} more diff lines", style="dim")
    return text


def keys_help(event: ConflictDetected) -> str:
    """Return the key line for the event's choices, e.g. "w wait · r run anyway · s skip"."""
    return f" {glyphs().sep} ".join(
        f"{CHOICE_KEYS[c][0]} {CHOICE_KEYS[c][1]}" for c in event.choices if c in CHOICE_KEYS
    )


class ConflictBar(Vertical, can_focus=True):
    """Shows ``conflict`` and turns the user's key into a :class:`ConflictAnswered`. ``clock`` returns
    the time now (Unix seconds); by default the app's ``clock`` (tests fix it), else ``time.time``."""

    DEFAULT_CSS = """
    ConflictBar { height: auto; padding: 0 1; border: tall $error; background: $error 10%; }
    ConflictBar:focus { border: tall $error-lighten-2; background: $error 20%; }
    ConflictBar > .conflict { height: auto; }
    ConflictBar > .keys { height: auto; color: $text-muted; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("w", "answer('wait')", "Wait"),
        Binding("r", "answer('run_anyway')", "Run anyway"),
        Binding("s", "answer('skip')", "Skip"),
        Binding("e", "answer('reread')", "Re-read first"),
    ]

    def __init__(self, conflict: ConflictDetected, *, clock: Callable[[], float] | None = None) -> None:
        super().__init__(classes="conflict-bar")
        self.conflict = conflict
        """The conflict being shown."""
        self.clock = clock

    def compose(self) -> ComposeResult:
        clock: Callable[[], float] = (
            self.clock if self.clock is not None else getattr(self.app, "clock", time.time)
        )
        yield Static(describe(self.conflict, clock()), classes="conflict")
        yield Static(keys_help(self.conflict), classes="keys", markup=False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Hide the keys of answers this conflict does not offer (e.g. wait for a stale read)."""
        offered = not parameters or parameters[0] in self.conflict.choices
        return action != "answer" or offered

    def action_answer(self, answer: str) -> None:
        """Post the answer when the conflict offers it (other keys do nothing)."""
        if answer in self.conflict.choices:
            self.post_message(ConflictAnswered(self.conflict.conflict_id, answer))


def resolve(conflict: ConflictDetected, answer: ConflictAnswer) -> bool:
    """Resolve the conflict's Future with ``answer``; return False when it was already settled."""
    if conflict.reply.done():
        return False
    conflict.reply.set_result(answer)
    return True
