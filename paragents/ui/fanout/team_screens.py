"""Screens of /review and /split: the merged review report (:class:`ReviewScreen`, findings worst
first, each with its specialists and evidence; the checked patch, which ``a`` applies) and a split
plan waiting for approval (:class:`PlanScreen`: Enter or ``y`` runs it, Esc or ``n`` cancels). Every
line is untrusted text (model output, file names) and is shown as plain ``Text``."""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from paragents.fanout.report import Finding, ReviewReport, merge_findings
from paragents.ui.core.text import clean

SEVERITY_STYLE = {"critical": "bold red", "high": "red", "medium": "yellow", "low": "cyan", "info": "dim"}


def report_text(report: ReviewReport) -> Text:
    """The report as one styled ``Text`` (styles set on spans, never parsed from the content)."""
    text = Text()
    who = ", ".join(report.specialists) or "nobody"
    text.append(f"git diff {report.base}: {len(report.findings)} finding(s) from {who}\n", style="bold")
    for name, reason in report.failed.items():
        text.append(f"specialist {name} failed: {clean(reason)}\n", style="red")
    for f in report.findings:
        text.append(f"\n[{f.severity}] ", style=SEVERITY_STYLE[f.severity])
        span = f"-{f.end_line}" if f.end_line and f.end_line != f.line else ""
        text.append(f"{clean(f.file)}:{f.line}{span}  ", style="bold")
        text.append(clean(f.title))
        text.append(f"  ({', '.join(f.specialists)})\n", style="dim")
        for item in f.evidence:
            text.append(f"    {item.specialist}: ", style="dim")
            text.append(clean(item.text) + "\n")
    if report.patch is not None:
        text.append("\npatch (git apply --check passed; a applies it):\n", style="bold green")
        text.append(clean(report.patch))
    elif report.patch_error:
        text.append(f"\nno patch: {clean(report.patch_error)}\n", style="yellow")
    return text


class ReviewScreen(ModalScreen[bool]):
    """The merged review report; ``a`` applies the checked patch (dismisses with True), Esc/q closes."""

    DEFAULT_CSS = """
    ReviewScreen { align: center middle; }
    ReviewScreen > Vertical { width: 92%; height: 88%; border: thick $accent; background: $surface; }
    ReviewScreen .title { height: auto; padding: 0 1; text-style: bold; }
    ReviewScreen VerticalScroll { height: 1fr; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("a", "apply", "Apply the patch", show=True),
    ]

    def __init__(self, report: ReviewReport) -> None:
        super().__init__()
        self.report = report

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Specialist review", classes="title", markup=False)
            with VerticalScroll():
                yield Static(report_text(self.report), markup=False)
        yield Footer()

    def action_close(self) -> None:
        self.dismiss(False)

    def action_apply(self) -> None:
        if self.report.patch is None:
            self.notify("No checked patch to apply.", severity="warning")
            return
        self.dismiss(True)


class PlanScreen(ModalScreen[bool]):
    """A split plan for approval: its subtasks in order, what each waits for, the overlaps."""

    DEFAULT_CSS = """
    PlanScreen { align: center middle; }
    PlanScreen > Vertical { width: 90%; height: 80%; border: thick $accent; background: $surface; }
    PlanScreen .title { height: auto; padding: 0 1; text-style: bold; }
    PlanScreen VerticalScroll { height: 1fr; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter,y", "run", "Run the plan"),
        Binding("escape,n", "cancel", "Cancel"),
    ]

    def __init__(self, lines: Sequence[str]) -> None:
        super().__init__()
        self.lines = list(lines)

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static("Split plan: run it? (y / n)", classes="title", markup=False)
            with VerticalScroll():
                yield Static(Text("\n".join(clean(line) for line in self.lines)), markup=False)
        yield Footer()

    def action_run(self) -> None:
        self.dismiss(True)

    def action_cancel(self) -> None:
        self.dismiss(False)


class Demo(App[None]):
    """``python -m paragents.ui.fanout.team_screens``: a report with a merged finding and a failure."""

    def on_mount(self) -> None:
        finding = {
            "file": "app.py",
            "line": 2,
            "severity": "high",
            "title": "SQL built from input",
            "evidence": "f'..'",
        }
        merged = merge_findings(
            {"security": [Finding.model_validate(finding)], "test": [Finding.model_validate(finding)]}
        )
        report = ReviewReport(
            base="HEAD",
            specialists=("security", "test"),
            failed={"perf": "invalid answer"},
            findings=tuple(merged),
        )
        self.push_screen(ReviewScreen(report))


if __name__ == "__main__":
    Demo().run()
