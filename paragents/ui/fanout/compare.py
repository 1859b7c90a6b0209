"""The fan-out compare screen (opens when every candidate finished, or with ``/fanout compare``): one
row per candidate in evidence order (passing verify first, then the smaller diff), with its verify
exit code and failing tests, diffstat, hunks, overlaps with other candidates, tokens, cost, wall time
and the judge's rank beside them (advice, never instead of the evidence). Below: the highlighted
candidate's failing tests, files, judge reason and hunks (a SelectionList, for grafting).

Keys: ``a`` apply the highlighted candidate: the lanes merge dialog (the git commands, merge-tree's
answer, the verify result on exactly its tree: a failed or stale one refuses unless the override is
ticked, the drafted message editable); ``t`` make it the graft target;
``g`` graft the hunks selected below (of the highlighted candidate) onto the target; ``d`` twice
discards every lane (lanes gc rules; unmerged work is bundled first); Esc closes. Nothing is merged
without one of these keys. The actions come from a :class:`CompareActions` (the app binds them to
the runtime), so the screen holds no runtime."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import DataTable, Footer, SelectionList, Static

from paragents.fanout.compare import Comparison, applied_candidate, choice_summary, compare_from
from paragents.fanout.evidence import CandidateView, overlap_cell
from paragents.store.records.fanout import CandidateRecord, GroupRecord
from paragents.ui.core.text import clean, shorten
from paragents.ui.lanes.merge import MergeScreen

COLUMNS = (
    "#",
    "candidate",
    "model",
    "verify",
    "failing",
    "diff",
    "hunks",
    "overlaps",
    "tokens",
    "cost",
    "wall",
    "judge",
)


@dataclass
class CompareActions:
    """What the screen's keys do: each returns the sentence to show (or raises a readable error).
    ``land`` prepares landing one candidate: (the merge dialog's actions, the lane's review, the
    squash plan) for :class:`~paragents.ui.lanes.merge.MergeScreen`."""

    land: Callable[[str], Awaitable[tuple[Any, Any, Any]]]
    graft: Callable[[str, str, set[str]], Awaitable[str]]
    discard: Callable[[], Awaitable[str]]
    reload: Callable[[], Awaitable[Comparison]]


def verify_cell(c: CandidateView) -> Text:
    if c.worker_failed:
        return Text("worker failed", style="bold red")
    if c.deleted_tests and c.verify is not None and c.verify.passed:
        return Text("exit 0 (tests deleted)", style="yellow")
    v = c.verify
    if v is None:
        return Text("-", style="dim")
    if v.timed_out:
        return Text("timeout", style="red")
    return Text(f"exit {v.exit_code}", style="green" if v.passed else "red")


def row_cells(rank: int, c: CandidateView, order: Sequence[CandidateView]) -> tuple[Any, ...]:
    """The table cells of one candidate (all plain Text: names, models and tests are untrusted)."""
    failing = ", ".join(c.verify.failing) if c.verify else ""
    cost = "-" if c.cost is None else f"${c.cost:.4f}"
    wall = "-" if c.seconds is None else f"{c.seconds:.0f}s"
    return (
        Text(str(rank)),
        Text(shorten(c.name, 24), style="bold"),
        Text(shorten(c.record.model, 16)),
        verify_cell(c),
        Text(shorten(failing, 30) or "-"),
        Text(c.diffstat()),
        Text(str(len(c.hunks))),
        Text(shorten(overlap_cell(c, order), 20)),
        Text(str(c.tokens)),
        Text(cost),
        Text(wall),
        Text("-" if c.judge_rank is None else str(c.judge_rank)),
    )


class CompareScreen(ModalScreen[None]):
    """Compare a fan-out's candidates by evidence and bring one back (see the module docstring)."""

    DEFAULT_CSS = """
    CompareScreen { align: center middle; }
    CompareScreen > Vertical { width: 98%; height: 95%; border: thick $accent; background: $surface; }
    CompareScreen .title { height: auto; padding: 0 1; }
    CompareScreen DataTable { height: auto; max-height: 12; }
    CompareScreen #cmp-detail { width: 1fr; height: 1fr; padding: 0 1; }
    CompareScreen SelectionList { width: 1fr; height: 1fr; }
    CompareScreen #cmp-status { height: auto; padding: 0 1; color: $warning; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "dismiss", "Close"),
        Binding("a", "apply", "Apply"),
        Binding("t", "target", "Graft target"),
        Binding("g", "graft", "Graft hunks"),
        Binding("d", "discard", "Discard all"),
    ]

    def __init__(self, comparison: Comparison, actions: CompareActions | None = None) -> None:
        super().__init__()
        self.comparison = comparison
        self.actions = actions
        self.target: str | None = None
        """The candidate grafted hunks go to (default: the chosen or first candidate)."""
        self._discard_armed = False

    # -- layout ---------------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(self._title(), classes="title", id="cmp-title")
            yield DataTable(cursor_type="row", zebra_stripes=True, id="cmp-table")
            with Horizontal():
                with VerticalScroll(id="cmp-detail"):
                    yield Static("", id="cmp-body")
                yield SelectionList[str](id="cmp-hunks")
            yield Static("", id="cmp-status")
            yield Footer()

    def on_mount(self) -> None:
        self.query_one("#cmp-detail", VerticalScroll).can_focus = False  # tab: table <-> hunks
        self._fill()
        self.query_one(DataTable).focus()

    def _title(self) -> Text:
        group = self.comparison.group
        text = Text(f"Fan-out {clean(group.name)} ({group.id}) · {group.state}", style="bold")
        text.append(f"\n{shorten(group.prompt, 200)}", style="")
        if group.verify:
            text.append(f"\nverify: {shorten(group.verify, 100)}", style="dim")
        if self.comparison.judge_error:
            text.append(f"\n{shorten(self.comparison.judge_error, 200)}", style="red")
        elif self.comparison.judge_risks:
            text.append(
                "\njudge's risks: " + shorten("; ".join(self.comparison.judge_risks), 200), style="yellow"
            )
        if group.choice:
            text.append(f"\nyour choice: {clean(choice_summary(group))}")
        return text

    def _fill(self) -> None:
        table = self.query_one(DataTable)
        table.clear(columns=True)
        table.add_columns(*COLUMNS)
        order = self.comparison.candidates
        for rank, c in enumerate(order, 1):
            table.add_row(*row_cells(rank, c, order), key=c.name)
        if self.target is None:
            chosen = applied_candidate(self.comparison.group)
            first = self.comparison.candidates[0].name if self.comparison.candidates else None
            self.target = str(chosen) if chosen else first
        self.query_one("#cmp-title", Static).update(self._title())
        self._show(0)

    def _current(self) -> CandidateView | None:
        table = self.query_one(DataTable)
        cands = self.comparison.candidates
        row = table.cursor_row
        return cands[row] if 0 <= row < len(cands) else None

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show(event.cursor_row)

    def _show(self, row: int) -> None:
        cands = self.comparison.candidates
        body = self.query_one("#cmp-body", Static)
        hunks = self.query_one("#cmp-hunks", SelectionList)
        hunks.clear_options()
        if not (0 <= row < len(cands)):
            body.update(Text("No candidates."))
            return
        c = cands[row]
        text = Text(f"{clean(c.name)}", style="bold")
        text.append(f"  (graft target: {clean(self.target or '-')})\n", style="dim")
        if c.record.evidence.get("error"):
            text.append(f"error: {clean(str(c.record.evidence['error']))}\n", style="red")
        if c.deleted_tests:
            text.append(f"deletes test files: {clean(', '.join(c.deleted_tests))}\n", style="bold red")
        if c.verify is not None:
            text.append(f"verify exit {c.verify.exit_code} in {c.verify.seconds:.1f}s\n")
            for test in c.verify.failing:
                text.append(f"  FAILED {clean(test)}\n", style="red")
        if c.judge_rank is not None:
            text.append(f"judge: #{c.judge_rank} {clean(c.judge_reason)}\n", style="cyan")
        text.append("files:\n", style="bold")
        for f in c.files:
            text.append(f"  {clean(str(f['path']))}  +{f['added']} -{f['deleted']}\n")
        if not c.files:
            text.append("  (no changes)\n", style="dim")
        if c.verify is not None and not c.verify.passed:
            text.append("verify output (end):\n", style="bold")
            text.append(clean(c.verify.tail[-1200:]), style="dim")
        body.update(text)
        hunks.add_options(
            [(Text(f"{clean(h.file)} {h.header} +{h.added} -{h.removed}"), h.key) for h in c.hunks]
        )
        if c.hunks:
            hunks.highlighted = 0  # space selects at once once the list has focus (tab)

    # -- actions --------------------------------------------------------------------------------------
    def _status(self, text: str, style: str = "") -> None:
        self.query_one("#cmp-status", Static).update(Text(clean(text), style=style))

    async def _run(self, work: Callable[[], Awaitable[str]]) -> None:
        try:
            said = await work()
        except Exception as exc:  # every action error is shown as its message
            self._status(str(exc), "red")
            return
        self._status(said)
        if self.actions is not None:
            try:
                self.comparison = await self.actions.reload()
            except Exception as exc:
                self._status(f"{said}; could not reload: {exc}", "red")
                return
            self._fill()

    def action_apply(self) -> None:
        cand = self._current()
        if cand is None or self.actions is None:
            return
        self.target = cand.name
        self._status(f"checking how {cand.name} would land ...")
        self.run_worker(self._land(self.actions, cand.name), group="compare", exclusive=True)

    async def _land(self, actions: CompareActions, name: str) -> None:
        """Open the merge dialog for candidate ``name``; reload once it landed."""
        try:
            landing, review, plan = await actions.land(name)
        except Exception as exc:  # a readable refusal (no patch, the lane is gone)
            self._status(str(exc), "red")
            return
        outcome = await self.app.push_screen_wait(MergeScreen(landing, review, plan))
        if outcome is None:
            self._status(f"{name} not applied")
            return

        async def said() -> str:
            return str(outcome.text)

        await self._run(said)

    def action_target(self) -> None:
        cand = self._current()
        if cand is not None:
            self.target = cand.name
            self._status(f"grafted hunks go to {cand.name}")
            self._show(self.query_one(DataTable).cursor_row)

    def action_graft(self) -> None:
        cand = self._current()
        keys = set(self.query_one("#cmp-hunks", SelectionList).selected)
        if cand is None or self.actions is None:
            return
        if not keys:
            self._status("select hunks below first (space), then press g", "yellow")
            return
        if self.target is None or self.target == cand.name:
            self._status("pick another candidate as the graft target first (t on its row)", "yellow")
            return
        actions, target, source = self.actions, self.target, cand.name
        self.run_worker(
            self._run(lambda: actions.graft(target, source, keys)), group="compare", exclusive=True
        )

    def action_discard(self) -> None:
        if self.actions is None:
            return
        if not self._discard_armed:
            self._discard_armed = True
            self._status(
                "press d again to close every sibling and remove its lane (unmerged work is bundled)"
            )
            return
        self._discard_armed = False
        actions = self.actions
        self.run_worker(self._run(actions.discard), group="compare", exclusive=True)


def demo_comparison() -> Comparison:
    """A finished best-of-3 as the compare screen shows it (for the Demo and the snapshot test)."""
    head = "diff --git a/app.py b/app.py\n--- a/app.py\n+++ b/app.py\n"
    patch_small = head + "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"
    patch_big = head + (
        "@@ -1,2 +1,7 @@\n+# add two numbers\n+\n+\n def add(a, b):\n-    return a - b\n"
        "+    total = a\n+    total += b\n+    return total\n"
    )
    patch_broken = head + "@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a * b\n"

    def cand(
        idx: int, patch: str, added: int, deleted: int, code: int, failing: list[str], tokens: int
    ) -> CandidateRecord:
        verify = {
            "command": "uv run pytest -q",
            "exit_code": code,
            "tail": "1 failed, 1 passed" if code else "2 passed",
            "failing": failing,
            "seconds": 0.8 + idx / 10,
            "timed_out": False,
        }
        others = {str(o): ([] if {idx, o} != {2, 3} else ["app.py"]) for o in (1, 2, 3) if o != idx}
        evidence = {
            "files": [{"path": "app.py", "added": added, "deleted": deleted}],
            "tokens": tokens,
            "cost": 0.0012 * idx,
            "seconds": 20.0 + idx,
            "overlaps": others,
            "head": f"{idx}" * 40,
        }
        return CandidateRecord(
            "g1",
            idx,
            f"s{idx}",
            f"fix-add-{idx}",
            "qwen" if idx != 2 else "llama",
            f"fix-add-{idx}",
            f"/lanes/fix-add-{idx}",
            f"paragents/fix-add-{idx}",
            "finished",
            verify,
            evidence,
            patch,
        )

    cands = (
        cand(1, patch_broken, 1, 1, 1, ["test_app.py::test_add"], 1830),
        cand(2, patch_big, 6, 1, 0, [], 2410),
        cand(3, patch_small, 1, 1, 0, [], 1502),
    )
    judge = [
        {
            "attempt": 1,
            "model": "qwen",
            "answer": {
                "ranking": ["fix-add-3", "fix-add-2", "fix-add-1"],
                "reasons": {
                    "fix-add-3": "smallest fix, tests pass",
                    "fix-add-2": "passes, more churn",
                    "fix-add-1": "breaks add",
                },
                "risks": ["no test for negative numbers"],
            },
        }
    ]
    group = GroupRecord(
        "g1f2e3d4c5b6",
        "best_of",
        "/repo",
        "fix-add",
        "fix the add function",
        "main",
        "0" * 40,
        "uv run pytest -q",
        {"n": 3},
        "finished",
        judge,
        None,
        0.0,
        1.0,
        cands,
    )
    return compare_from(group)


class Demo(App[None]):
    """``python -m paragents.ui.fanout.compare``: a finished best-of-3 (one breaks the build)."""

    def on_mount(self) -> None:
        self.push_screen(CompareScreen(demo_comparison()))


if __name__ == "__main__":
    Demo().run()
