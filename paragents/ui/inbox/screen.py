"""The "needs you" inbox: every pending approval and conflict across sessions, oldest first.

The list shows age, session, kind and the call; the selected item's own bar (the same
:class:`~paragents.ui.widgets.approval_bar.ApprovalBar` or
:class:`~paragents.ui.widgets.conflict_bar.ConflictBar` as in the panel, so the same keys) sits
under it. As in a panel, its answer keys work only after the deliberate act aimed at it: ctrl+g
(the bar's key line says so) or a click on the bar or its buttons. Opening the inbox, moving the
selection or answering the previous item never arms a bar, so typing "say hi" here answers nothing.
``up``/``down`` move the selection, Enter focuses the item's session, Esc closes. A bar's answer
goes up as :class:`~paragents.ui.core.messages.Answer` to the app (``paragents.ui.answers``), which
resolves it and reloads this screen; the panels update from the resulting events. An approval's preview is
bounded: a line under the list says plainly how much it leaves out, and ctrl+o opens the whole call
(:class:`WholeCallScreen`).
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Static

from paragents.events import (
    BudgetPaused,
    ConflictDetected,
    PermissionRequested,
    PredictedConflict,
    QuestionAsked,
)
from paragents.models import ToolCall
from paragents.permissions.destructive import call_destructive
from paragents.serve.shown import not_shown, size_of, whole_call
from paragents.terminal_text import show_controls
from paragents.ui.core.glyphs import glyphs
from paragents.ui.core.messages import Answer, ApprovalChoice, ConflictChoice
from paragents.ui.core.text import clean, shorten
from paragents.ui.widgets.answer_bar import FOCUS_KEY, AnswerBar
from paragents.ui.widgets.approval_bar import ApprovalBar
from paragents.ui.widgets.budget_bar import BudgetBar
from paragents.ui.widgets.conflict_bar import ConflictBar, age_text, stale_summary
from paragents.ui.widgets.prediction_bar import PredictionBar

if TYPE_CHECKING:
    from paragents.ui.screens.overview import ActivityLog
    from paragents.ui.widgets.session_panel import SessionPanel


@dataclass(frozen=True)
class InboxItem:
    """One thing waiting on the user: ``key`` (request or conflict id), its session, ``kind``
    ("approval"/"conflict"/"budget"/"question"), the call ``summary`` (a question's text), ``since``
    (Unix seconds, or None) and the ``event``."""

    key: str
    session_id: str
    session_name: str
    kind: str
    summary: str
    since: float | None
    event: PermissionRequested | ConflictDetected | BudgetPaused | QuestionAsked | PredictedConflict
    group: str = ""
    """The fan-out group of the session ("" when none)."""


def collect_items(
    panels: Mapping[str, SessionPanel],
    activity: ActivityLog,
    extra: Sequence[InboxItem] = (),
    groups: Mapping[str, str] | None = None,
) -> list[InboxItem]:
    """Return the unanswered approvals and conflicts of every panel of ``panels`` (by session id) and
    the ``extra`` items (budget and loop-guard pauses), oldest first (arrival time from ``activity``;
    panel order breaks ties)."""
    asked = activity.asked
    items: list[InboxItem] = []
    for sid, panel in panels.items():
        name = panel.view.name
        for req in panel.view.open_asks:
            since = asked.get(req.request_id)
            group = (groups or {}).get(sid, "")
            items.append(InboxItem(req.request_id, sid, name, "approval", req.summary, since, req, group))
        for con in panel.view.open_conflicts:
            since = asked.get(con.conflict_id)
            summary = con.summary + stale_summary(con)
            items.append(InboxItem(con.conflict_id, sid, name, "conflict", summary, since, con))
    items.extend(extra)
    order = {key: i for i, key in enumerate(i.key for i in items)}
    items.sort(key=lambda i: (i.since if i.since is not None else math.inf, order[i.key]))
    return items


def inbox_title(count: int) -> str:
    """Return the inbox title with its count, e.g. "Needs you (3)"."""
    return f"Needs you ({count})"


def notification_sequence(text: str) -> str:
    """Return the OSC 9 escape sequence (iTerm2/Windows Terminal/kitty/foot desktop notification) for
    ``text``, with control characters removed so it cannot break out of the sequence."""
    safe = "".join(ch for ch in text if ch.isprintable())[:200]
    return f"\x1b]9;{safe}\x07"


class QuestionNote(Static):
    """The inbox's bar for a session whose turn ended with a question: the question (plain text) and
    that Enter goes to the session to answer it."""

    DEFAULT_CSS = "QuestionNote { padding: 0 1; border-top: solid $warning; height: auto; }"

    def __init__(self, question: QuestionAsked) -> None:
        text = Text(clean(question.text))
        text.append("\nEnter goes to the session to answer it.", style="dim")
        super().__init__(text)
        self.question = question


def cut_line(request: PermissionRequested) -> Text:
    """The line under the inbox list for an approval: how much its preview leaves out (plainly, in
    warning colour) and that ctrl+o opens the whole call, with its size."""
    size = size_of(whole_call(request.call.name, request.call.arguments))
    missing = not_shown(request.preview)
    text = Text()
    if missing:
        text.append(f"{glyphs().warn} {missing}", style="bold yellow")
        text.append(f": ctrl+o shows the whole call ({size})")
    else:
        text.append(f"ctrl+o shows the whole call ({size})", style="dim")
    return text


class WholeCallScreen(ModalScreen[None]):
    """Everything an ask's call will do (:func:`~paragents.serve.shown.whole_call`), as plain text in
    a scrollable box; Esc closes."""

    DEFAULT_CSS = """
    WholeCallScreen { align: center middle; }
    WholeCallScreen > VerticalScroll { width: 90%; height: 90%; border: tall $warning; padding: 0 1;
                                       background: $surface; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape", "close", "Close")]

    def __init__(self, request: PermissionRequested) -> None:
        super().__init__()
        self.request = request

    def compose(self) -> ComposeResult:
        whole = whole_call(self.request.call.name, self.request.call.arguments)
        head = Text(
            f"{clean(show_controls(self.request.summary))}  ({size_of(whole)}; Esc closes)\n", style="bold"
        )
        with VerticalScroll():
            yield Static(head + Text(clean(show_controls(whole))), id="whole-call")  # ESC as "␛"
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(None)


class InboxScreen(Screen[str | None]):
    """The inbox over ``items()`` (re-read by :meth:`reload`); ``clock`` gives Unix seconds for ages.
    Dismissed with a session id (Enter: focus it) or None (Esc)."""

    DEFAULT_CSS = """
    InboxScreen > #inbox-title { height: 1; padding: 0 1; background: $warning 30%; text-style: bold; }
    InboxScreen > #inbox-list { height: auto; max-height: 60%; padding: 0 1; }
    InboxScreen > #inbox-cut { height: auto; padding: 0 1; }
    InboxScreen > #inbox-bar { height: auto; }
    InboxScreen > #inbox-empty { padding: 1 2; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("up", "move(-1)", "Previous", priority=True),
        Binding("down", "move(1)", "Next", priority=True),
        Binding("enter", "open", "Go to session"),
        Binding(FOCUS_KEY, "arm_bar", "Answer with keys", priority=True),
        Binding("ctrl+a", "allow_group", "Allow for the whole fan-out", priority=True),
        Binding("ctrl+o", "whole_call", "Whole call", priority=True),
    ]

    def __init__(
        self,
        items: Callable[[], list[InboxItem]],
        clock: Callable[[], float],
        panels: Mapping[str, SessionPanel] | None = None,
        allow_group: Callable[[PermissionRequested], Awaitable[str]] | None = None,
        lane_open: Callable[[str], bool] = lambda lane: False,
    ) -> None:
        super().__init__()
        self.allow_group = allow_group
        """Answers a fan-out sibling's ask for its whole group (ctrl+a); None: not offered."""
        self.lane_open = lane_open
        """Whether an open session works in a lane (a predicted conflict can ask it to adapt)."""
        self.items_source = items
        self.panels: Mapping[str, SessionPanel] = panels if panels is not None else {}
        """The app's panels by session id: a conflict answered here is shown answered in its panel."""
        self.clock = clock
        self.items: list[InboxItem] = []
        self.selected: str | None = None
        """Key of the selected item."""

    def compose(self) -> ComposeResult:
        yield Static(inbox_title(0), id="inbox-title")
        yield Static("", id="inbox-list")
        yield Static("", id="inbox-cut")
        yield Vertical(id="inbox-bar")
        yield Static("Nothing waits on you. Esc goes back.", id="inbox-empty")
        yield Footer()

    async def on_mount(self) -> None:
        await self.reload()

    def _list_text(self) -> Text:
        now = self.clock()
        kind_width = max([9, *(len(i.kind) for i in self.items)])
        text = Text(no_wrap=True, overflow="ellipsis")
        for n, item in enumerate(self.items):
            mine = item.key == self.selected
            age = age_text(now - item.since) if item.since is not None else "?"
            pointer = glyphs().pointer
            text.append(f"{pointer} " if mine else " " * (len(pointer) + 1), style="bold")
            text.append(f"{age:>6}  ", style="dim")
            text.append(f"{shorten(item.session_name, 20):<20} ", style="bold")
            if item.group:
                text.append(f"[fan-out {shorten(item.group, 16)}] ", style="magenta")
            text.append(
                f"{clean(item.kind):<{kind_width}} ", style="red" if "conflict" in item.kind else "yellow"
            )
            text.append(shorten(show_controls(item.summary), 100), style="reverse" if mine else "")
            call = getattr(item.event, "call", None)
            if item.kind == "approval" and call is not None and call_destructive(call.name, call.arguments):
                text.append("  destructive", style="bold red")
            if n < len(self.items) - 1:
                text.append("\n")
        return text

    async def reload(self, *, arm: bool = False) -> None:
        """Re-read the items; keep the selection when it still waits, else select the oldest. With
        ``arm`` (the user acted here: opened the inbox, moved, answered) a newly shown bar takes the
        keys; a bar shown only because an ask arrived does not (up/down or a click arms it)."""
        self.items = self.items_source()
        keys = [i.key for i in self.items]
        if self.selected not in keys:
            self.selected = keys[0] if keys else None
        self.query_one("#inbox-title", Static).update(inbox_title(len(self.items)))
        self.query_one("#inbox-list", Static).update(self._list_text())
        self.query_one("#inbox-empty", Static).display = not self.items
        self.refresh_bindings()
        await self._show_bar(arm)

    async def _show_bar(self, arm: bool) -> None:
        slot = self.query_one("#inbox-bar", Vertical)
        item = next((i for i in self.items if i.key == self.selected), None)
        ask = item.event if item is not None and isinstance(item.event, PermissionRequested) else None
        cut = self.query_one("#inbox-cut", Static)
        cut.update(cut_line(ask) if ask is not None else "")
        cut.display = ask is not None
        current = next(iter(slot.children), None)
        shown = getattr(current, "request", None) or getattr(current, "conflict", None)
        shown = shown or getattr(current, "pause", None) or getattr(current, "prediction", None)
        if item is not None and isinstance(item.event, QuestionAsked) and isinstance(current, QuestionNote):
            shown = item.event if current.question == item.event else None
        if item is not None and shown is item.event:
            if arm and isinstance(current, AnswerBar) and not current.armed:
                current.arm()
            return
        await slot.remove_children()
        if item is None:
            return
        event = item.event
        bar: ApprovalBar | ConflictBar | BudgetBar | QuestionNote | PredictionBar
        if isinstance(event, QuestionAsked):
            bar = QuestionNote(event)
        elif isinstance(event, PredictedConflict):
            bar = PredictionBar(event, adapt_a=self.lane_open(event.a), adapt_b=self.lane_open(event.b))
        elif isinstance(event, BudgetPaused):
            bar = BudgetBar(event)
        elif isinstance(event, PermissionRequested):
            bar = ApprovalBar(event)
        else:
            bar = ConflictBar(event, clock=self.clock)
        await slot.mount(bar)
        if arm and not isinstance(bar, QuestionNote):
            bar.arm()

    async def action_move(self, step: int) -> None:
        """Select the previous (-1) or next (+1) item."""
        keys = [i.key for i in self.items]
        if not keys:
            return
        index = keys.index(self.selected) if self.selected in keys else 0
        self.selected = keys[(index + step) % len(keys)]
        self.query_one("#inbox-list", Static).update(self._list_text())
        self.refresh_bindings()
        await self._show_bar(False)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """ctrl+a (allow for the whole fan-out) is in the footer only while a fan-out ask is selected."""
        if action == "allow_group":
            item = next((i for i in self.items if i.key == self.selected), None)
            return item is not None and bool(item.group) and self.allow_group is not None
        return True

    async def action_allow_group(self) -> None:
        """ctrl+a: allow the selected fan-out ask's suggested rules for every sibling of its group."""
        item = next((i for i in self.items if i.key == self.selected), None)
        if item is None or not item.group or self.allow_group is None:
            self.notify("The selected item is not an ask of a fan-out session.", timeout=3)
            return
        assert isinstance(item.event, PermissionRequested)
        said = await self.allow_group(item.event)
        self.notify(said, markup=False)
        await self.reload(arm=True)

    def action_whole_call(self) -> None:
        """ctrl+o: open the selected approval's whole call (what a bounded preview leaves out)."""
        item = next((i for i in self.items if i.key == self.selected), None)
        if item is not None and isinstance(item.event, PermissionRequested):
            self.app.push_screen(WholeCallScreen(item.event))

    def action_arm_bar(self) -> None:
        """ctrl+g: the selected item's bar takes the answer keys (the deliberate act)."""
        bar = next(iter(self.query_one("#inbox-bar", Vertical).children), None)
        if isinstance(bar, AnswerBar):
            bar.arm()

    def action_open(self) -> None:
        """Close the inbox and focus the selected item's session."""
        item = next((i for i in self.items if i.key == self.selected), None)
        self.dismiss(item.session_id if item is not None else None)

    def action_close(self) -> None:
        """Close the inbox."""
        self.dismiss(None)


class Demo(App[None]):
    """The inbox with an approval and a conflict of two sessions, at a fixed clock."""

    NOW = 1_800_000_000.0

    def on_mount(self) -> None:
        import asyncio

        loop = asyncio.get_running_loop()
        ask = PermissionRequested(
            "s1", "r1", ToolCall("c1", "run_command", '{"command": "npm test"}'), "run_command npm test",
            "no rule allows it", ("Bash(npm test)",), loop.create_future(),
        )  # fmt: skip
        held = ConflictDetected(
            "s2", "k1", ToolCall("c2", "edit_file", '{"path": "src/app.py"}'), "edit_file src/app.py",
            "reservation", "/work/project/src/app.py", "api", "edit_file src/app.py", self.NOW - 95, None,
            ("wait", "run_anyway", "skip"), loop.create_future(),
        )  # fmt: skip
        items = [
            InboxItem("k1", "s2", "web", "conflict", held.summary, self.NOW - 95, held),
            InboxItem("r1", "s1", "api", "approval", ask.summary, self.NOW - 20, ask),
        ]
        asks: list[PermissionRequested | ConflictDetected] = [held, ask]
        self.push_screen(
            InboxScreen(
                lambda: [i for i, e in zip(items, asks, strict=True) if not e.reply.done()], lambda: self.NOW
            )
        )

    async def on_answer(self, message: Answer) -> None:
        """What the app does (paragents.ui.answers), for the two kinds shown here."""
        choice = message.choice
        if isinstance(choice, ApprovalChoice) and not choice.ask.reply.done():
            choice.ask.reply.set_result(choice.answer)
        elif isinstance(choice, ConflictChoice) and not choice.conflict.reply.done():
            choice.conflict.reply.set_result(choice.answer)
        if isinstance(self.screen, InboxScreen):
            await self.screen.reload()


if __name__ == "__main__":
    Demo().run()
