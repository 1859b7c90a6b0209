"""A context larger than the model's window warns (TODO: "a context window of 100 shows ctx 120% with
no warning"): the title says "over the window" in white on red, and the transcript says once per
crossing what to do. The percentage is the last request's prompt and reply against the window."""

from __future__ import annotations

from paragents.events import ConversationCleared, UsageUpdated
from paragents.models import Usage
from paragents.ui.core.glyphs import glyphs
from paragents.ui.widgets.session_panel import SessionPanel
from paragents.ui.widgets.transcript import TextEntry
from tests.ui.conftest import SIZE
from tests.ui.feeding import feed
from tests.ui.panel_app import PanelApp


def warnings(panel: SessionPanel) -> list[str]:
    return [e.text for e in panel.transcript.records if isinstance(e, TextEntry) and e.kind == "warning"]


def ctx_style(panel: SessionPanel) -> str:
    title = panel.title_text()
    start = title.plain.index("ctx ")
    styles = [str(span.style) for span in title.spans if span.start <= start < span.end]
    return " ".join(styles)


async def test_a_context_larger_than_the_window_warns_in_the_title_and_once_in_the_transcript() -> None:
    app = PanelApp()
    async with app.run_test(size=SIZE) as pilot:
        panel = app.query_one(SessionPanel)
        await feed(panel, UsageUpdated("s1", Usage(90, 10, 100), 90, 100))
        await pilot.pause()
        assert "ctx 90%" in panel.title_text().plain and "over the window" not in panel.title_text().plain
        assert warnings(panel) == []
        await feed(panel, UsageUpdated("s1", Usage(190, 30, 220), 120, 100))
        await pilot.pause()
        plain = panel.title_text().plain
        assert f"{glyphs().warn} ctx 120% over the window" in plain, plain
        assert "on red" in ctx_style(panel)
        [said] = warnings(panel)
        assert said.startswith("The context (120 tokens) is larger than the context window of m (100 tokens)")
        await feed(panel, UsageUpdated("s1", Usage(300, 40, 340), 130, 100))  # still over: said once
        await pilot.pause()
        assert len(warnings(panel)) == 1
        # /clear empties the transcript and the context fits again; over again: said again
        await feed(panel, ConversationCleared("s1"))
        await feed(panel, UsageUpdated("s1", Usage(400, 40, 440), 150, 100))
        await pilot.pause()
        [again] = warnings(panel)
        assert again.startswith("The context (150 tokens) is larger than the context window")
