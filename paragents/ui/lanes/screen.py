"""The Lanes review screen (``/lanes``): one row per lane; the selected lane's verify result,
commits, per-file counts and its whole diff against its base (untracked files included),
syntax-highlighted; and the actions that bring a lane back, each first saying exactly what git will
do (lane_merge.py). A review is bound to the lane's state when it was loaded: a lane that moved
since is refused and reviewed again. Esc or q closes."""

from __future__ import annotations

import dataclasses
import shutil
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

from rich.console import Group
from rich.syntax import Syntax
from rich.text import Text
from textual import work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Log, OptionList, Static
from textual.widgets.option_list import Option

from paragents.lanes.bring_back import LaneState
from paragents.lanes.review import LaneReview
from paragents.store.records.lanes import VerifyRecord
from paragents.ui.core.glyphs import glyphs
from paragents.ui.core.text import clean
from paragents.ui.lanes.commit import CommitScreen
from paragents.ui.lanes.merge import ConfirmScreen, MergeScreen, Outcome

READABLE = ("SessionError", "LaneError", "StoreError")


class LanesScreen(ModalScreen[None]):
    """Review the lanes: pick one on the left, read its verify result, commits and diff on the right,
    and bring it back with the keys in the footer."""

    DEFAULT_CSS = """
    LanesScreen { align: center middle; }
    LanesScreen > Vertical { width: 95%; height: 90%; border: thick $accent; background: $surface; }
    LanesScreen .title { height: auto; padding: 0 1; text-style: bold; }
    LanesScreen OptionList { width: 32; height: 1fr; }
    LanesScreen #right { width: 1fr; height: 1fr; }
    LanesScreen VerticalScroll { width: 1fr; height: 1fr; padding: 0 1; }
    LanesScreen Log { height: 8; border-top: solid $accent; display: none; }
    LanesScreen Log.shown { display: block; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("v", "verify", "Verify"),
        Binding("c", "commit", "Commit changes"),
        Binding("s", "merge('squash')", "Squash"),
        Binding("r", "merge('rebase')", "Rebase"),
        Binding("m", "merge('merge')", "Merge commit"),
        Binding("p", "merge('pr')", "Push+PR"),
        Binding("k", "keep", "Keep working"),
        Binding("d", "discard", "Discard"),
        Binding("escape,q", "dismiss", "Close"),
    ]

    def __init__(
        self,
        reviews: Sequence[Any],
        actions: Any = None,
        close_session: Callable[[str], Awaitable[None]] | None = None,
    ) -> None:
        super().__init__()
        self.reviews = list(reviews)
        self.actions = actions
        self.close_session = close_session
        self.index = 0
        self.log_lane: str | None = None
        """The lane whose verify output the log holds (shown only while that lane is selected)."""
        self.verifying: tuple[str, float] | None = None
        """The lane whose verify runs now and when it started (``time.monotonic``), else None."""

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(
                Text("Lanes — each action shows the git commands and asks before running them"),
                classes="title",
            )
            with Horizontal():
                yield OptionList(*self._options())
                with Vertical(id="right"):
                    with VerticalScroll():
                        yield Static(self._body(0), id="lane-body")
                    yield Log(id="verify-log", max_lines=2000)
            yield Footer()

    def _options(self) -> list[Option]:
        return [Option(Text(clean(r.name)), id=f"lane-{i}") for i, r in enumerate(self.reviews)]

    def on_mount(self) -> None:
        if self.reviews:
            self.query_one(OptionList).highlighted = 0
        self.query_one(OptionList).focus()

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        self.index = event.option_index
        self._show()
        review = self.review
        log = self.query_one("#verify-log", Log)
        log.set_class(review is not None and review.name == self.log_lane, "shown")

    def _show(self) -> None:
        self.query_one("#lane-body", Static).update(self._body(self.index))

    @property
    def review(self) -> Any | None:
        return self.reviews[self.index] if 0 <= self.index < len(self.reviews) else None

    def _body(self, index: int) -> Any:
        if not self.reviews:
            return Text("No lanes in this repository: /new NAME --lane opens a session in one.")
        review = self.reviews[index]
        head = Text(clean(review.summary) + "\n", style="bold")
        if review.problem:
            return Group(head, Text(clean(review.problem), style="yellow"))
        lines = [verify_text(review)]
        if self.verifying is not None and self.verifying[0] == review.name:
            lines.insert(0, self._running_text())
        lines.append(Text(f"{len(review.commits)} commit(s) not on the target yet:", style="bold"))
        lines += [Text("  " + clean(c)) for c in review.commits] or [Text("  none")]
        lines.append(Text(f"\n{len(review.files)} file(s) changed against the base:", style="bold"))
        for path, added, deleted in review.files:
            plus = "-" if added is None else added
            minus = "-" if deleted is None else deleted
            lines.append(Text(f"  {clean(path)}  +{plus} -{minus}"))
        patch = Syntax(clean(review.patch) or "(no changes)", "diff", theme="ansi_dark", word_wrap=True)
        return Group(head, *lines, Text(""), patch)

    # --- actions -----------------------------------------------------------------------------------
    def _usable(self) -> Any | None:
        review = self.review
        if review is None or self.actions is None:
            return None
        if review.problem or review.state is None:
            self.notify(
                clean(review.problem or "this lane cannot be reviewed"), severity="warning", markup=False
            )
            return None
        return review

    @work(exclusive=True, group="lane-verify")
    async def action_verify(self) -> None:
        review = self._usable()
        if review is None:
            return
        log = self.query_one("#verify-log", Log)
        log.clear()
        self.log_lane = review.name
        log.add_class("shown")
        log.write_line(f"verify in lane {review.name}:")
        self.verifying = (review.name, time.monotonic())
        ticker = self.set_interval(1.0, self._tick)
        self._tick()
        try:
            record = await self.actions.verify(review.name, log.write_line)
        except Exception as exc:
            if type(exc).__name__ not in READABLE:
                raise
            log.write_line(str(exc))
            log.border_title = f"verify in lane {clean(review.name)} could not run"
            return
        finally:
            ticker.stop()
            self.verifying = None
            self._show()
        log.write_line(f"exit {record.exit_code} on tree {record.tree[:12]} (commit {record.commit[:12]})")
        log.border_title = f"verify in lane {clean(review.name)}: exit {record.exit_code}"
        for i, r in enumerate(self.reviews):
            if r.name == review.name:
                self.reviews[i] = dataclasses.replace(r, verify=record)
        self._show()

    def _running_text(self) -> Text:
        """The line saying a verify runs now in the selected lane, and for how long."""
        command = getattr(self.actions, "verify_command", "") or "the verify command"
        started = self.verifying[1] if self.verifying else time.monotonic()
        text = Text(
            f"{glyphs().status.get('running', '*')} verify running: `{clean(command)}`", style="bold yellow"
        )
        text.append(f" for {int(time.monotonic() - started)}s (its output is below)\n", style="yellow")
        return text

    def _tick(self) -> None:
        """Say, once a second while a verify runs, that it runs and for how long (a command that
        prints nothing for a minute otherwise looks like nothing happens)."""
        if self.verifying is None:
            return
        name, started = self.verifying
        log = self.query_one("#verify-log", Log)
        log.border_title = f"verify running in lane {clean(name)} · {int(time.monotonic() - started)}s"
        review = self.review
        if review is not None and review.name == name:
            self._show()

    @work(exclusive=True, group="lane-action")
    async def action_merge(self, strategy: str) -> None:
        review = self._usable()
        if review is None:
            return
        try:
            plan = await self.actions.plan(review.name, strategy, review.state)
        except Exception as exc:
            await self._refused(exc)
            return
        outcome = await self.app.push_screen_wait(MergeScreen(self.actions, review, plan, gh=has_gh()))
        await self._after(outcome)

    @work(exclusive=True, group="lane-action")
    async def action_commit(self) -> None:
        review = self._usable()
        if review is None:
            return
        if review.state.clean:
            self.notify(f"Lane {review.name} has no uncommitted files.", markup=False)
            return
        await self._after(await self.app.push_screen_wait(CommitScreen(self.actions, review)))

    @work(exclusive=True, group="lane-action")
    async def action_discard(self) -> None:
        review = self._usable()
        if review is None:
            return
        try:
            commands = await self.actions.discard_plan(review.name)
        except Exception as exc:
            await self._refused(exc)
            return
        sid = self.actions.session_of(review)
        note = "Its work stays restorable from the bundle (the restore commands are printed after)."
        if sid is not None:
            note += " Its session is closed first."
        title = f"Discard lane {review.name}?"
        if not await self.app.push_screen_wait(ConfirmScreen(title, commands, note, "Discard")):
            return
        try:
            if sid is not None and self.close_session is not None:
                await self.close_session(sid)
            decision = await self.actions.discard(review.name)
        except Exception as exc:
            await self._refused(exc)
            return
        if decision.action != "removed":
            text = f"Lane {review.name} kept: {'; '.join(decision.reasons)}"
        else:
            text = f"Lane {review.name} discarded."
            if decision.bundle:
                text += f" Work saved in {decision.bundle}; restore with:\n" + "\n".join(decision.restore)
        await self._after(Outcome("done", text))

    def action_keep(self) -> None:
        review = self.review
        if review is not None:
            self.notify(f"Lane {review.name} stays as it is; its session keeps working.", markup=False)
        self.dismiss(None)

    async def _refused(self, exc: Exception) -> None:
        name = type(exc).__name__
        if name == "LaneMoved":
            await self._after(Outcome("moved", str(exc)))
            return
        if name not in READABLE:
            raise exc
        self.notify(clean(str(exc)), severity="error", markup=False, timeout=12)

    async def _after(self, outcome: Outcome | None) -> None:
        if outcome is None:
            return
        moved = outcome.kind == "moved"
        self.notify(
            clean(outcome.text),
            title="Lanes",
            severity="warning" if moved else "information",
            markup=False,
            timeout=15,
        )
        if outcome.kind in ("moved", "done"):
            await self.reload()

    async def reload(self) -> None:
        """Review every lane again (its state now)."""
        if self.actions is None:
            return
        self.reviews = list(await self.actions.reviews())
        options = self.query_one(OptionList)
        options.clear_options()
        options.add_options(self._options())
        self.index = min(self.index, max(len(self.reviews) - 1, 0))
        if self.reviews:
            options.highlighted = self.index
        self._show()


def verify_text(review: Any) -> Text:
    """The line saying the lane's last verify result (exit code, commit, output tail)."""
    record = review.verify
    if record is None:
        return Text("verify: not run on this lane yet (v runs it)\n", style="yellow")
    state = review.state
    current = state is not None and record.covers(state.tree)
    outcome = "passed" if record.passed else f"FAILED (exit {record.exit_code})"
    where = f"exactly this tree: {state.describe()}" if current else f"tree {record.tree[:12]}"
    text = Text(f"verify: `{clean(record.command)}` {outcome} on {where}", style="bold")
    text.stylize("green" if record.passed and current else ("red" if current else "yellow"))
    if not current:
        text.append(" — the lane changed since: run it again (v)", style="yellow")
    elif state is not None and not state.clean:
        text.append(
            "\n  uncommitted files: commit them (c) to merge; the result holds for the commit", style="dim"
        )
    tail = "\n".join(record.output_tail.splitlines()[-6:])
    if tail:
        text.append("\n" + clean(tail), style="dim")
    text.append("\n")
    return text


def has_gh() -> bool:
    return shutil.which("gh") is not None


class Demo(App[None]):
    """The Lanes screen with two lanes: api (verify passed on its commit) and web (never verified)."""

    def on_mount(self) -> None:
        state = LaneState("a1b2c3d4e5f6a7b8", "tree1", "tree1")
        patch = "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n@@ -1,2 +1,2 @@\n"
        patch += " def hello():\n-    return 1\n+    return 2\n"
        verify = VerifyRecord(1, "uv run pytest -q", state.head, state.tree, 0, "3 passed in 0.12s", 0.0)
        reviews = [
            LaneReview(
                "api", "api  paragents/api  clean  1 ahead of main", state.head, ("a1b2c3d return 2",),
                (("app.py", 1, 1),), patch, state=state, verify=verify, target="main",
            ),
            LaneReview("web", "web  paragents/web  clean  0 ahead of main", "f" * 16, state=state),
        ]  # fmt: skip
        self.push_screen(LanesScreen(reviews))


if __name__ == "__main__":
    Demo().run()
