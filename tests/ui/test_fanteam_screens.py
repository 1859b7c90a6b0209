"""The /review report screen shows merged findings as plain text (a finding's markup-looking title is
not parsed), and the /review arguments parse."""

from __future__ import annotations

from textual.app import App
from textual.widgets import Static

from paragents.fanout.report import Finding, ReviewReport, merge_findings
from paragents.ui.fanout.team import parse_review_args
from paragents.ui.fanout.team_screens import ReviewScreen


def test_review_arguments() -> None:
    assert parse_review_args("security,test --base main --patch") == (["security", "test"], "main", True)
    assert parse_review_args(None) == ([], None, False)


async def test_report_screen_lists_merged_finding_and_failure_as_plain_text() -> None:
    raw = {
        "file": "[b]app.py",
        "line": 2,
        "severity": "high",
        "title": "[red]SQL[/red] built",
        "evidence": "q",
    }
    merged = merge_findings(
        {"security": [Finding.model_validate(raw)], "test": [Finding.model_validate(raw)]}
    )
    report = ReviewReport(
        base="HEAD", specialists=("security", "test"), failed={"perf": "bad"}, findings=tuple(merged)
    )
    closed: list[bool | None] = []

    class Host(App[None]):
        def on_mount(self) -> None:
            self.push_screen(ReviewScreen(report), closed.append)

    app = Host()
    async with app.run_test(size=(120, 30)) as pilot:
        await pilot.pause()
        shown = "\n".join(str(s.render()) for s in app.screen.query(Static))
        assert "[high] [b]app.py:2  [red]SQL[/red] built  (security, test)" in shown
        assert "specialist perf failed: bad" in shown
        await pilot.press("a")  # no patch: stays open
        await pilot.pause()
        assert closed == []
        await pilot.press("escape")
        await pilot.pause()
        assert closed == [False]
