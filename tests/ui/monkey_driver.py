"""The monkey: random user acts on the real app (Pilot) and the invariants checked after each.

:func:`run_monkey` opens a real Runtime (tmp project, db and config) against a
:class:`~tests.ui.monkey_server.HostileServer`, starts the app, opens three sessions and then, for
``steps`` acts drawn with ``draw`` (Hypothesis's ``data.draw``), sends bursts of keys, pastes,
clicks, drags, resizes, focus changes and slash commands, and finally quits. Invariants:

- no exception (Textual re-raises app errors out of ``run_test``), and the app exits 0;
- every approval answered by the user was answered by an act aimed at it: its bar was armed by
  ctrl+g / F2 / inbox keys / a click on it, or its button was clicked (answers by policy are fine);
  no bar arms itself;
- every prompt the runtime received equals the text the box held at that Enter (a typed burst is
  modelled: the box text evolves key by key and each Enter sends what it holds);
- no typed character lands in a widget the user did not focus: only the focused editor changes
  (or the prompt of the panel whose transcript has focus), and focus never moves by itself between
  two acts (except back to its panel's prompt when the focused bar went away).
"""

from __future__ import annotations

import asyncio
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hypothesis import strategies as st
from textual import events
from textual.widget import Widget
from textual.widgets import Button, Input
from textual.worker import WorkerState

from paragents.events import (
    ConflictDetected,
    ConflictResolved,
    Event,
    PermissionRequested,
    PermissionResolved,
)
from paragents.sessions.runtime import Runtime
from paragents.ui.app import ParagentsApp, make_app
from paragents.ui.core.commands import is_command
from paragents.ui.inbox.screen import InboxScreen
from paragents.ui.widgets.answer_bar import AnswerBar
from paragents.ui.widgets.approval_bar import ApprovalBar
from paragents.ui.widgets.conflict_bar import ConflictBar
from paragents.ui.widgets.prompt_area import Draft, PromptArea
from paragents.ui.widgets.session_panel import SessionPanel
from tests.ui.monkey_server import HOSTILE, LONG_LINES, HostileServer, write_project

Draw = Callable[[st.SearchStrategy[Any]], Any]

ALPHABET = "abcxyz XYZ019.,;:!?-_=+*'\"()[]{}<>\\|#@$%^&~`漢字éß"
"""Characters typed in bursts (no "/": commands are their own act)."""
KEYS = (
    "enter", "backspace", "delete", "left", "right", "up", "down", "home", "end", "tab", "shift+tab",
    "escape", "pageup", "pagedown", "ctrl+g", "ctrl+g", "y", "n", "s", "a", "d", "ctrl+z", "ctrl+y",
    "ctrl+j", "alt+1", "alt+2", "alt+3", "alt+left", "alt+right", "f2", "f3", "alt+z", "ctrl+n",
    "ctrl+w", "q", "space",
)  # fmt: skip
"""Single keys pressed one at a time (each checked on its own)."""
COMMANDS = (
    "/new", "/new 漢[/]", "/fork", "/fork x[/]y", "/clear", "/close", "/cancel", "/mode acceptEdits",
    "/mode default", "/mode plan", "/rename [b]n[/b]", "/help", "/inbox", "/overview", "/sessions",
    "/memory", "/remember [/] note", "/sandbox", "/show-config", "/permissions", "/bogus", "/new --x",
)  # fmt: skip
"""Slash commands typed into an empty prompt box (then Enter)."""
ARMING_KEYS = {"ctrl+g", "f2"}
"""Keys that arm a bar on purpose (plus any act on the inbox screen, and clicks)."""
MAX_PANELS = 6
SIZES = ((160, 45), (120, 40), (80, 24), (60, 20), (40, 15), (20, 10), (200, 60))


class MonkeyFailure(AssertionError):
    """An invariant did not hold."""


@dataclass
class Tally:
    """What happened (for the report and to tell a useful run from an idle one)."""

    acts: int = 0
    asks: int = 0
    conflicts: int = 0
    answered_by_user: int = 0
    submitted: int = 0
    kinds: dict[str, int] = field(default_factory=dict)


@dataclass
class Focus:
    """Where focus was after an act: the widget, its panel (or None) and the screen."""

    widget: Widget | None
    panel: SessionPanel | None
    screen: Any


def panel_of(widget: Widget | None) -> SessionPanel | None:
    if widget is None:
        return None
    return next((n for n in widget.ancestors_with_self if isinstance(n, SessionPanel)), None)


def bar_of(widget: Widget | None) -> AnswerBar | None:
    if widget is None:
        return None
    return next((n for n in widget.ancestors_with_self if isinstance(n, AnswerBar)), None)


def bar_id(bar: AnswerBar) -> str:
    """The ask or conflict a bar answers."""
    if isinstance(bar, ApprovalBar):
        return bar.request.request_id
    assert isinstance(bar, ConflictBar)
    return bar.conflict.conflict_id


class Monkey:
    """One monkey run on a started app (see the module docstring)."""

    def __init__(self, app: ParagentsApp, pilot: Any, runtime: Runtime, draw: Draw) -> None:
        self.app, self.pilot, self.runtime, self.draw = app, pilot, runtime, draw
        self.tally = Tally()
        self.submissions: list[tuple[str, str]] = []
        self.resolved: list[tuple[str, str, str]] = []
        """(request_id or conflict_id, answer, by) of every PermissionResolved and ConflictResolved."""
        self.aimed: set[str] = set()
        """Request ids the test armed (ctrl+g, F2, inbox, click) or clicked a button of."""
        self.armed_seen: set[str] = set()
        self.focus: Focus | None = None
        self.log: list[str] = []
        submit = runtime.submit

        def recording_submit(sid: str, text: str) -> str:
            self.submissions.append((sid, text))
            return submit(sid, text)

        runtime.submit = recording_submit  # type: ignore[method-assign]
        runtime.observers.append(self._observe)

    def _observe(self, event: Event) -> None:
        if isinstance(event, PermissionRequested):
            self.tally.asks += 1
        if isinstance(event, PermissionResolved):
            self.resolved.append((event.request_id, event.answer, event.by))
        if isinstance(event, ConflictDetected):
            self.tally.conflicts += 1
        if isinstance(event, ConflictResolved):
            self.resolved.append((event.conflict_id, event.answer, event.by))

    def fail(self, why: str) -> None:
        raise MonkeyFailure(f"{why}\nlast acts:\n  " + "\n  ".join(self.log[-15:]))

    # --- observations ---------------------------------------------------------------------------
    def editors(self) -> dict[int, tuple[Widget, str]]:
        found: dict[int, tuple[Widget, str]] = {}
        for screen in self.app.screen_stack:
            for area in screen.query(PromptArea):
                found[id(area)] = (area, area.value)
            for box in screen.query(Input):
                found[id(box)] = (box, box.value)
        return found

    def bars(self) -> list[AnswerBar]:
        """Every approval and conflict bar on any screen."""
        return [bar for screen in self.app.screen_stack for bar in screen.query(AnswerBar)]

    def check_answers(self) -> None:
        for rid, answer, by in self.resolved:
            if by == "user" and answer != "cancelled" and rid not in self.aimed:
                self.fail(f"ask {rid} was answered {answer!r} without an act aimed at it")

    def check_arming(self, arming: bool) -> None:
        for bar in self.bars():
            rid = bar_id(bar)
            if bar.armed and rid not in self.armed_seen:
                if not arming:
                    self.fail(f"the bar of ask {rid} armed itself")
                self.armed_seen.add(rid)
                self.aimed.add(rid)

    def record_focus(self) -> None:
        focused = self.app.focused
        self.focus = Focus(focused, panel_of(focused), self.app.screen)

    async def check_drift(self) -> None:
        """Between two acts focus stays where the last act left it (background work moved nothing)."""
        await self.pilot.pause()
        self.check_arming(False)
        before, now = self.focus, self.app.focused
        if before is None:
            return
        if self.app.screen is not before.screen:
            self.fail(f"the screen changed by itself: {before.screen!r} -> {self.app.screen!r}")
        if now is before.widget:
            return
        gone = before.widget is not None and not before.widget.is_attached
        if gone and before.panel is not None and now is before.panel.prompt_box.input:
            return  # the focused bar/editor went away: back to its panel's prompt
        if gone and now is None:
            return
        self.fail(f"focus moved by itself: {before.widget!r} -> {now!r}")

    async def settle(self) -> None:
        """Let the act's effects finish: its messages and the workers it started (commands)."""
        await self.pilot.pause()
        deadline = asyncio.get_running_loop().time() + 30
        while any(
            w.state in (WorkerState.PENDING, WorkerState.RUNNING)
            and not (w.group or "").startswith("startup")
            for w in self.app.workers
        ):
            if asyncio.get_running_loop().time() > deadline:
                self.fail("a worker did not finish in 30 s")
            await self.pilot.pause()
            await asyncio.sleep(0.005)
        await self.pilot.pause()

    def check_typing(self, before: dict[int, tuple[Widget, str]], focused: Widget | None) -> None:
        allowed: set[int] = set()
        if focused is not None:
            allowed.add(id(focused))
            panel = panel_of(focused)
            if panel is not None and not isinstance(focused, PromptArea | Input):
                allowed.add(id(panel.prompt_box.input))  # typing in a transcript goes to its prompt
        for key, (widget, old) in before.items():
            if key in allowed or not widget.is_attached:
                continue
            new = widget.value  # type: ignore[attr-defined]
            if new != old:
                self.fail(f"{widget!r} changed ({old[:40]!r} -> {new[:40]!r}) but {focused!r} had focus")

    def main_prompt(self) -> PromptArea | None:
        focused = self.app.focused
        if isinstance(focused, PromptArea) and focused.id == "prompt" and len(self.app.screen_stack) == 1:
            return focused
        return None

    # --- acts -----------------------------------------------------------------------------------
    async def step(self) -> bool:
        """Draw and do one act; return False once the app quit."""
        await self.check_drift()
        kind = self.draw(
            st.sampled_from(
                ["type"] * 5 + ["keys"] * 5 + ["paste"] * 2 + ["click"] * 3 + ["drag", "resize", "focus"]
                + ["command"] * 3 + ["answer"] * 2
            )
        )  # fmt: skip
        self.tally.kinds[kind] = self.tally.kinds.get(kind, 0) + 1
        self.tally.acts += 1
        start = len(self.submissions)
        arming = isinstance(self.app.screen, InboxScreen)
        arming = await getattr(self, f"act_{kind}")() or arming
        await self.settle()
        self.check_arming(arming or isinstance(self.app.screen, InboxScreen))
        self.check_answers()
        if kind in ("paste", "click", "drag", "resize") and len(self.submissions) != start:
            # (keys, bursts, answers and commands check each Enter in press() / act_type)
            self.fail(f"{kind} submitted {self.submissions[start:]!r}")
        self.record_focus()
        return not self.app._runtime_closed

    async def press(self, key: str) -> bool:
        """Press one key, checking where its text went and what it submitted; True when it armed."""
        before = self.editors()
        focused = self.app.focused
        box = self.main_prompt()
        start = len(self.submissions)
        expected: list[tuple[str, str]] | None = []
        if key == "enter" and box is not None:
            panel = panel_of(box)
            row, col = box.cursor_location
            newline = (
                box.selection.is_empty and col == len(box.document[row]) and box.document[row].endswith("\\")
            )
            value = box.value
            if newline or not value.strip():
                expected = []
            elif is_command(value):
                expected = None  # a command (valid: run by the app; invalid: an error): checked below
            else:
                assert panel is not None
                expected = [(panel.session_id, value)]
        self.log.append(f"key {key!r} focus={focused!r}")
        await self.pilot.press(key)
        await self.settle()
        arming = key in ARMING_KEYS or isinstance(self.app.screen, InboxScreen)
        self.check_arming(arming or (isinstance(focused, Input) and bar_of(focused) is not None))
        self.check_typing(before, focused)
        new = self.submissions[start:]
        if expected is None:
            if new:
                self.fail(f"a slash command was submitted as a prompt: {new!r}")
        elif new != expected:
            self.fail(f"{key!r} submitted {new!r}, the box held {expected!r}")
        self.tally.submitted += len(new)
        return arming

    async def act_keys(self) -> bool:
        keys = self.draw(st.lists(st.sampled_from(KEYS), min_size=1, max_size=6))
        armed = False
        for key in keys:
            if key in ("ctrl+n",) and len(self.app.panels) >= MAX_PANELS:
                key = "ctrl+w"
            armed = await self.press(key) or armed
            if self.app._runtime_closed:
                break
        return armed

    async def act_type(self) -> bool:
        text = self.draw(st.text(alphabet=ALPHABET, min_size=1, max_size=30))
        # Enters counted from the end: the simplest burst ("a", Enter) sends a prompt.
        enters = self.draw(st.lists(st.integers(0, len(text)), min_size=1, max_size=3))
        keys = list(text)
        for i in sorted(enters):
            keys.insert(len(text) - i, "enter")
        box = self.main_prompt()
        modelled = (
            box is not None
            and box.selection.is_empty
            and box.cursor_location == box.document.end
            and box._browsing is None
            and not is_command(box.text)
        )
        if not modelled or box is None:
            armed = False
            for key in keys:
                armed = await self.press(key) or armed
            return armed
        panel = panel_of(box)
        assert panel is not None
        shown, pastes, expected = box.text, dict(box._pastes), []
        for key in keys:
            if key != "enter":
                shown += key
            elif shown.endswith("\\"):
                shown = shown[:-1] + "\n"
            elif Draft(shown, pastes).value.strip():
                expected.append((panel.session_id, Draft(shown, pastes).value))
                shown, pastes = "", {}
        before, start = self.editors(), len(self.submissions)
        self.log.append(f"burst {keys!r} into {panel.session_id}")
        await self.pilot.press(*keys)
        await self.settle()
        self.check_typing(before, box)
        new = self.submissions[start:]
        if new != expected:
            self.fail(f"the burst submitted {new!r}; the box held {expected!r} at its Enters")
        if box.is_attached and box.text != shown:
            self.fail(f"after the burst the box holds {box.text[-60:]!r}, typed {shown[-60:]!r}")
        self.tally.submitted += len(new)
        return False

    async def act_paste(self) -> bool:
        size = self.draw(st.sampled_from(["line", "lines", "huge", "huge_lines"]))
        piece = self.draw(st.sampled_from(HOSTILE))
        text = {
            "line": piece.replace("\n", " ") or "x",
            "lines": "\r\n".join([piece, "two [/]", "three 🏳️‍🌈"]),
            "huge": LONG_LINES[0] * 20,
            "huge_lines": "\n".join(f"{i} {piece}" for i in range(3000)),
        }[size]
        before, focused = self.editors(), self.app.focused
        self.log.append(f"paste {size} ({len(text)} chars) focus={focused!r}")
        self.app.post_message(events.Paste(text))
        await self.settle()
        self.check_typing(before, focused)
        return isinstance(self.app.screen, InboxScreen)

    def _point(self) -> tuple[int, int]:
        width, height = self.app.size
        x = self.draw(st.integers(0, max(0, width - 1)))
        y = self.draw(st.integers(0, max(0, height - 1)))
        return x, y

    def _aim_at(self, x: int, y: int) -> None:
        """A mouse press at (x, y) on a bar is deliberate: it may arm it or press its button."""
        try:
            widget, _ = self.app.screen.get_widget_at(x, y)
        except Exception:
            return
        bar = bar_of(widget)
        if bar is not None:
            self.aimed.add(bar_id(bar))

    async def act_click(self) -> bool:
        targets: list[Widget] = [*self.app.screen.query(Button), *self.app.screen.query(PromptArea)]
        target = self.draw(st.sampled_from(targets)) if targets and self.draw(st.booleans()) else None
        width, height = self.app.size
        region = target.region if target is not None else None
        if region is not None and region.area:
            x, y = region.x + region.width // 2, region.y + region.height // 2
        if region is None or not region.area or not (0 <= x < width and 0 <= y < height):
            x, y = self._point()  # no target, or it is scrolled off the screen
        self._aim_at(x, y)
        self.log.append(f"click {(x, y)} target={target!r}")
        await self.pilot.click(offset=(x, y))
        await self.settle()
        self.check_arming(True)
        return True

    async def act_answer(self) -> bool:
        """Answer the focused panel's ask deliberately: ctrl+g, then an answer key (or Enter a note)."""
        panel = self.app.active_panel
        if panel is None or len(self.app.screen_stack) > 1:
            return await self.act_keys()
        if panel.approval_bar is None:
            if not panel.view.conflicts:
                return await self.act_keys()
            armed = await self.press("ctrl+g")  # a conflict bar: wait / run anyway / skip / re-read
            await self.press(self.draw(st.sampled_from(["w", "r", "s", "e"])))
            return armed
        armed = await self.press("ctrl+g")
        key = self.draw(st.sampled_from(["y", "n", "s", "d", "a"]))
        await self.press(key)
        if key in ("d", "a"):
            for extra in self.draw(st.lists(st.sampled_from(["x", "[", "/", "]", "enter"]), max_size=4)):
                await self.press(extra)
            await self.press("enter")
        return armed

    async def act_drag(self) -> bool:
        (x1, y1), (x2, y2) = self._point(), self._point()
        self._aim_at(x1, y1)
        self.log.append(f"drag {(x1, y1)} -> {(x2, y2)}")
        await self.pilot.mouse_down(offset=(x1, y1))
        await self.pilot.hover(offset=(x2, y2))
        await self.pilot.mouse_up(offset=(x2, y2))
        return True

    async def act_resize(self) -> bool:
        width, height = self.draw(st.sampled_from(SIZES))
        self.log.append(f"resize {width}x{height}")
        await self.pilot.resize_terminal(width, height)
        return False

    async def act_focus(self) -> bool:
        key = self.draw(st.sampled_from(["alt+1", "alt+2", "alt+3", "alt+left", "alt+right", "ctrl+g", "f2"]))
        return await self.press(key)

    async def act_command(self) -> bool:
        box = self.main_prompt()
        if box is None or len(box.text) > 200:
            return await self.act_keys()
        command = self.draw(st.sampled_from(COMMANDS))
        if command.startswith(("/new", "/fork")) and len(self.app.panels) >= MAX_PANELS:
            command = "/close"
        if box.text:  # empty it as a person would: select all (f7), backspace
            await self.press("f7")
            await self.press("backspace")
        if box.text or self.app.focused is not box:
            return False
        armed = False
        for key in [*command, "enter"]:
            armed = await self.press(key) or armed
            if self.app.focused is not box:
                break  # e.g. a completion moved on or a screen opened: the rest is for it
        return armed or command == "/inbox"

    async def quit(self) -> None:
        self.log.append("quit")
        await self.check_drift()
        await self.pilot.press("ctrl+q")
        if self.app.is_running and not self.app._runtime_closed:
            await self.pilot.press("ctrl+q")  # the first press only warned of queued prompts


async def run_monkey(draw: Draw, steps: int, seed: int) -> Tally:
    """One run: a real runtime, three sessions, ``steps`` random acts, quit (see module docstring)."""
    with tempfile.TemporaryDirectory(prefix="paragents-monkey-") as tmp:
        root = Path(tmp)
        project = root / "project"
        project.mkdir()
        write_project(project)
        saved = {k: os.environ.get(k) for k in ("PARAGENTS_CONFIG_DIR", "PARAGENTS_STATE_DIR")}
        os.environ["PARAGENTS_CONFIG_DIR"] = str(root / "config")
        os.environ["PARAGENTS_STATE_DIR"] = str(root / "state")
        try:
            async with HostileServer(seed) as server:
                runtime = await Runtime.create(
                    project_dir=project,
                    cli_overrides={"base_url": server.base_url, "model": "m"},
                    db_path=root / "db.sqlite",
                )
                return await _drive(runtime, draw, steps)
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value


async def _drive(runtime: Runtime, draw: Draw, steps: int) -> Tally:
    app = make_app(runtime)
    monkey: Monkey | None = None
    try:
        async with app.run_test(size=(160, 45)) as pilot:
            monkey = Monkey(app, pilot, runtime, draw)
            await monkey.settle()
            while len(app.panels) < 3:
                await pilot.press("ctrl+n")
                await monkey.settle()
            monkey.record_focus()
            for _ in range(steps):
                if not await monkey.step():
                    break
            if not app._runtime_closed:
                await monkey.quit()
        if app.return_code not in (0, None) or app._exception is not None:
            raise MonkeyFailure(f"the app exited {app.return_code} ({app._exception!r})")
        monkey.check_answers()
        monkey.tally.answered_by_user = sum(
            1 for _, a, by in monkey.resolved if by == "user" and a != "cancelled"
        )
        return monkey.tally
    except BaseException:
        if monkey is not None:
            print("monkey: last acts before the failure:\n  " + "\n  ".join(monkey.log[-15:]))
        raise
    finally:
        if not app._runtime_closed:
            await runtime.shutdown()
