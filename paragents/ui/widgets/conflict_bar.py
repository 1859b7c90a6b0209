"""Inline conflict bar: shows one held tool call (a ``ConflictDetected`` event) in a session's panel.

It says which other session holds what (what it did, how long ago, and that it holds it until its
turn ends), or shows the diff of a file that changed since the session read it, and offers the
event's choices as buttons. Answers are only given deliberately
(:mod:`paragents.ui.widgets.answer_bar`): a click on a button, or a key once the user moved focus
here (ctrl+g or a click): ``w`` wait (the call runs by itself once the holder releases), ``r`` run
anyway, ``s`` skip (the model is told why), ``e`` re-read first (stale reads: the model gets the new
content). It posts :class:`~paragents.ui.core.messages.Answer` (a
:class:`~paragents.ui.core.messages.ConflictChoice`); the app resolves the event's Future.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.widgets import Button, Static

from paragents.events import ConflictAnswer, ConflictDetected
from paragents.models import ToolCall
from paragents.ui.core.glyphs import glyphs
from paragents.ui.core.messages import Answer, ConflictChoice
from paragents.ui.core.text import clean, shorten
from paragents.ui.widgets.answer_bar import AnswerBar, answer_buttons

CHOICE_KEYS: dict[str, tuple[str, str]] = {
    "wait": ("w", "wait"),
    "run_anyway": ("r", "run anyway"),
    "skip": ("s", "skip"),
    "reread": ("e", "re-read first"),
}
"""Answer -> (key, label) shown in the bar, in the order of the event's ``choices``."""
MAX_DIFF_LINES = 12
"""Lines of a stale-read diff shown in the bar (the rest is summarised)."""


def age_text(seconds: float) -> str:
    """Return a short age: 42 → "42s", 125 → "2m05s", 7300 → "2h01m" (negative counts as 0)."""
    s = max(int(seconds), 0)
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


def resolved_line(event: ConflictDetected | None, answer: str, by: str) -> str:
    """Return the transcript's one plain line for a conflict that ended with ``answer`` (by ``by``:
    "user", "auto", "unattended", "cancelled", or another client such as "http: phone"); ``event``
    is the conflict as shown (None when this panel never saw it)."""
    if event is None:
        where, holder = "", "the other session"
    else:
        where = f" on {shorten(clean(event.path.removeprefix('resource:')), 80)}"
        holder = shorten(clean(event.holder), 40) if event.holder else "the other side"
    if answer == "cancelled" or by == "cancelled":
        how = "the turn was cancelled, the call did not run"
    elif answer == "wait":
        how = f"{holder} finished, the call ran" + (" (you chose wait)" if by == "user" else "")
    elif answer == "run_anyway":
        how = "run anyway"
    elif answer == "reread":
        how = "re-read first (the model got the file's new content)"
    elif answer == "skip":
        how = "skipped (the model was told why)"
    else:
        how = clean(answer)
    if by == "unattended":
        how += ", as nobody answered in time"
    elif by not in ("user", "auto", "cancelled", ""):
        how += f", answered by {shorten(clean(by), 40)}"
    return f"Conflict{where} resolved: {how}."


def describe(event: ConflictDetected, now: float, *, with_diff: bool = True) -> Text:
    """Return the bar's text for ``event``: what is held, by whom, what it did, how long ago (``now``
    in Unix seconds), and (``with_diff``) the diff of a stale read."""
    text = Text(overflow="fold")
    text.append(f"{glyphs().stop} Conflict: ", style="bold")
    text.append(shorten(clean(event.summary), 200))
    text.append("\n  ")
    path = clean(event.path.removeprefix("resource:"))
    age = age_text(now - event.since)
    if event.kind == "stale_read":
        text.append_text(stale_text(event, path, age))
    else:
        text.append(clean(event.holder or "another session"), style="bold")
        text.append(" ")
        text.append_text(holder_text(event, path, age))
    if with_diff:
        text.append_text(diff_text(event))
    return text


def stale_text(event: ConflictDetected, path: str, age: str) -> Text:
    """Who changed the file a stale read is about and when ("api wrote src/config.py 40s ago, after
    this session read it"), or that no session here did; and which other sessions read it too."""
    text = Text()
    if event.holder:
        text.append(clean(event.holder), style="bold")
        text.append(f" wrote {path} {age} ago, after this session read it")
    else:
        text.append(f"{path} changed on disk since this session read it", style="bold")
        text.append(f" ({age} ago; not by a session of this paragents)", style="dim")
    if event.others:
        names = ", ".join(shorten(clean(name), 40) for name in event.others[:5])
        more = f" and {len(event.others) - 5} more" if len(event.others) > 5 else ""
        text.append(f"\n  also read by {names}{more}", style="dim")
    return text


def stale_summary(event: ConflictDetected) -> str:
    """The inbox line's addition for a stale read: "(api wrote src/config.py)"; "" otherwise."""
    if event.kind != "stale_read":
        return ""
    name = event.path.rsplit("/", 1)[-1]
    return f" ({event.holder} wrote {name})" if event.holder else f" ({name} changed on disk)"


def diff_text(event: ConflictDetected) -> Text:
    """Return the first :data:`MAX_DIFF_LINES` lines of the event's diff (each on a new line, its
    indentation kept), and how many more there are; empty without a diff."""
    text = Text(overflow="fold")
    if event.diff:
        lines = event.diff.splitlines()
        for line in lines[:MAX_DIFF_LINES]:
            style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
            text.append("\n  " + diff_line(line), style=style)
        if len(lines) > MAX_DIFF_LINES:
            text.append(f"\n  … {len(lines) - MAX_DIFF_LINES} more diff lines", style="dim")
    return text


def diff_line(line: str, limit: int = 200) -> str:
    """Return one diff line cleaned and cut to ``limit`` characters, keeping its indentation (unlike
    :func:`~paragents.ui.core.text.shorten`, which folds whitespace)."""
    line = clean(line).replace("\n", " ")
    return line if len(line) <= limit else line[: limit - 1] + "…"


def holder_text(event: ConflictDetected, path: str, age: str) -> Text:
    """Return what the holder did to ``path`` and when (``age`` ago), and how long it holds it.

    A reservation is taken when the holder's call starts and kept until the holder's turn ends, so
    the call itself (``holder_reason``, its summary) is usually over: say what it did, not "is
    writing". A holder still queued says so."""
    reason = clean(event.holder_reason)
    text = Text()
    if reason.startswith("waiting to run: "):
        text.append(f"is also waiting to write {path}, and asked first ({age} ago)")
        text.append(f"\n  its call: {shorten(reason.removeprefix('waiting to run: '), 160)}", style="dim")
        return text
    tool = reason.split(" ", 1)[0]
    done = {"write_file": "wrote", "edit_file": "edited", "run_command": "ran a command that may write"}
    if event.kind == "resource":
        text.append(f"took the resource {path} {age} ago")
    elif tool in done:
        text.append(f"{done[tool]} {path} {age} ago")
    else:
        text.append(f"reserved {path} {age} ago")
    text.append(", holds it until its turn ends")
    if event.kind == "unknown_targets":
        text.append("; this command's write targets cannot be known before it runs")
    if reason:
        text.append(f"\n  its call: {shorten(reason, 160)}", style="dim")
    return text


def keys_help(event: ConflictDetected) -> str:
    """Return the key line for the event's choices, e.g. "w wait · r run anyway · s skip"."""
    return f" {glyphs().sep} ".join(
        f"{CHOICE_KEYS[c][0]} {CHOICE_KEYS[c][1]}" for c in event.choices if c in CHOICE_KEYS
    )


class ConflictBar(AnswerBar):
    """Shows ``conflict`` and turns a click or a key into an :class:`Answer`. ``clock``
    returns the time now (Unix seconds); by default the app's ``clock`` (tests fix it), else
    ``time.time``."""

    DEFAULT_CSS = """
    ConflictBar { height: auto; padding: 0 1; border: tall $error; background: $error 10%; }
    ConflictBar.-armed { border: tall $error-lighten-2; background: $error 20%; }
    ConflictBar > .conflict { height: auto; }
    ConflictBar > .conflict-diff { height: auto; }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("w", "answer('wait')", "Wait"),
        Binding("r", "answer('run_anyway')", "Run anyway"),
        Binding("s", "answer('skip')", "Skip"),
        Binding("e", "answer('reread')", "Re-read first"),
    ]
    ANSWER_ACTIONS = frozenset({"answer"})

    def __init__(self, conflict: ConflictDetected, *, clock: Callable[[], float] | None = None) -> None:
        super().__init__(classes="conflict-bar")
        self.conflict = conflict
        """The conflict being shown."""
        self.clock = clock

    def key_help(self) -> str:
        """The keys of the answers this conflict offers."""
        return keys_help(self.conflict)

    def compose(self) -> ComposeResult:
        clock: Callable[[], float] = (
            self.clock if self.clock is not None else getattr(self.app, "clock", time.time)
        )
        yield Static(describe(self.conflict, clock(), with_diff=False), classes="conflict")
        yield Static(self.keys_text(), classes="keys")
        choices = [c for c in self.conflict.choices if c in CHOICE_KEYS]
        yield answer_buttons([(c, CHOICE_KEYS[c][1].capitalize()) for c in choices])
        if self.conflict.diff:  # under the buttons: a small panel scrolls it, never them
            yield Static(diff_text(self.conflict)[1:], classes="conflict-diff")  # no leading newline

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """Keys answer only while armed, and only with answers this conflict offers (e.g. no wait
        for a stale read)."""
        offered = not parameters or parameters[0] in self.conflict.choices
        return action != "answer" or (offered and self.armed)

    def action_answer(self, answer: str) -> None:
        """Post the answer when the conflict offers it (other keys do nothing)."""
        if answer in self.conflict.choices:
            self.post_message(Answer(ConflictChoice(self.conflict, answer)))
            self.answered()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """A click on a button answers."""
        event.stop()
        self.action_answer(event.button.id or "")


def resolve(conflict: ConflictDetected, answer: ConflictAnswer) -> bool:
    """Resolve the conflict's Future with ``answer``; return False when it was already settled."""
    if conflict.reply.done():
        return False
    conflict.reply.set_result(answer)
    return True


class Demo(App[None]):
    """The conflict bar's states: a call held by another session's reservation, and a stale read
    (api changed the file on disk since this session read it; docs read it too), at a fixed clock."""

    NOW = 1_800_000_000.0

    def compose(self) -> ComposeResult:
        import asyncio

        loop = asyncio.get_running_loop()
        call = ToolCall("c1", "edit_file", '{"path": "src/app.py"}')
        diff = "--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n def main():\n-    return 1\n+    return 2\n"
        held = ConflictDetected(
            "s2", "k1", call, "edit_file src/app.py", "reservation", "/work/project/src/app.py", "api",
            "edit_file src/app.py", self.NOW - 95, None, ("wait", "run_anyway", "skip"), loop.create_future(),
        )  # fmt: skip
        stale = ConflictDetected(
            "s3", "k2", call, "edit_file src/app.py", "stale_read", "/work/project/src/app.py", "api", "",
            self.NOW - 30, diff, ("reread", "run_anyway", "skip"), loop.create_future(), ("docs",),
        )  # fmt: skip
        yield ConflictBar(held, clock=lambda: self.NOW)
        yield ConflictBar(stale, clock=lambda: self.NOW)
        yield Static("", id="out")

    def on_answer(self, msg: Answer) -> None:
        assert isinstance(msg.choice, ConflictChoice)
        self.query_one("#out", Static).update(f"answered {msg.choice.answer}")


if __name__ == "__main__":
    Demo().run()
