"""How core events reach the panels: streamed deltas that wait in the app's queue are joined into one
message per session (order kept), and the CLI's app tunes the garbage collector."""

from __future__ import annotations

import gc
from pathlib import Path
from typing import Any

from paragents.events import MessageAdded, Notice, ReasoningDelta, TextDelta
from paragents.ui.app import make_app
from paragents.ui.core.gc_tuning import GC_THRESHOLDS
from paragents.ui.core.messages import AgentEvent
from paragents.ui.widgets.session_panel import SessionPanel
from tests.ui.conftest import SIZE, wait_until
from tests.ui.fake_runtime import FakeRuntime, make_view


async def test_waiting_deltas_are_joined_per_session_and_order_is_kept(tmp_path: Path) -> None:
    runtime = FakeRuntime([make_view("s1", "api"), make_view("s2", "web")], tmp_path)
    app = make_app(runtime)
    applied: list[tuple[str, str, Any]] = []
    original = SessionPanel.apply

    async def apply(self: SessionPanel, event: Any) -> None:
        applied.append((event.session_id, type(event).__name__, getattr(event, "text", None)))
        await original(self, event)

    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.ready and len(app.panels) == 2, "both panels")
        SessionPanel.apply = apply  # type: ignore[method-assign]
        try:
            # All emitted without yielding to the loop, as a burst of SSE chunks would be.
            for event in [
                TextDelta("s1", "a"),
                TextDelta("s2", "x"),
                TextDelta("s1", "b"),
                ReasoningDelta("s1", "hmm"),  # another kind: starts a new message
                TextDelta("s1", "c"),
                Notice("s1", "note"),  # any other event of s1 ends the joining
                TextDelta("s1", "d"),
                TextDelta("s2", "y"),
                TextDelta("s1", "e"),
            ]:
                runtime.emit(event)
            await wait_until(pilot, lambda: len(applied) >= 6, "the joined events")
        finally:
            SessionPanel.apply = original  # type: ignore[method-assign]
    assert applied == [
        ("s1", "TextDelta", "ab"),
        ("s2", "TextDelta", "xy"),
        ("s1", "ReasoningDelta", "hmm"),
        ("s1", "TextDelta", "c"),
        ("s1", "Notice", "note"),
        ("s1", "TextDelta", "de"),
    ]


def test_agent_event_absorbs_only_single_deltas_of_its_kind_and_session() -> None:
    message = AgentEvent(TextDelta("s1", "a"))
    assert message.absorb(TextDelta("s1", "b")) and message.absorb(TextDelta("s1", "c"))
    assert not message.absorb(TextDelta("s2", "z"))
    assert not message.absorb(ReasoningDelta("s1", "r"))
    assert not message.absorb(MessageAdded("s1", {"role": "assistant", "content": "x"}))
    assert message.event == TextDelta("s1", "abc", pieces=3)
    assert message.absorb(TextDelta("s1", "d"))
    assert message.event == TextDelta("s1", "abcd", pieces=4)
    assert not AgentEvent(Notice("s1", "n")).absorb(Notice("s1", "m"))


async def test_cli_app_raises_gc_thresholds_and_freezes_after_start(tmp_path: Path) -> None:
    before = gc.get_threshold()
    frozen_before = gc.get_freeze_count()
    app = make_app(FakeRuntime([make_view("s1", "api")], tmp_path), tune_gc=True)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await wait_until(pilot, lambda: app.ready, "startup")
            await wait_until(pilot, lambda: gc.get_freeze_count() > frozen_before, "gc.freeze()")
            assert gc.get_threshold() == GC_THRESHOLDS
    finally:
        gc.set_threshold(*before)
        gc.unfreeze()
    plain = make_app(FakeRuntime([make_view("s1", "api")], tmp_path))
    async with plain.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: plain.ready, "startup")
        assert gc.get_threshold() == before


async def test_pageup_and_pagedown_scroll_the_focused_transcript_while_the_prompt_has_focus(
    tmp_path: Path,
) -> None:
    from tests.ui.fake_runtime import make_view as View

    history: list[dict[str, Any]] = []
    for i in range(10):
        history += [
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": f"answer {i}"},
        ]
    view = View("s1", "api")
    view.messages = history
    runtime = FakeRuntime([view], tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=(80, 20)) as pilot:
        await wait_until(pilot, lambda: app.ready and bool(app.panels), "startup")
        panel = app.panels["s1"]
        transcript = panel.transcript
        await wait_until(
            pilot, lambda: transcript.max_scroll_y > 0 and not transcript.restore_pending, "history"
        )
        await wait_until(
            pilot, lambda: transcript.scroll_y == transcript.max_scroll_y, "anchored at the bottom"
        )
        bottom = transcript.scroll_y
        assert app.focused is panel.prompt_box.input
        await pilot.press("pageup")
        await wait_until(pilot, lambda: transcript.scroll_y < bottom, "scrolled up")
        assert app.focused is panel.prompt_box.input and panel.prompt_box.input.value == ""
        await pilot.press("pagedown", "pagedown")
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y, "back at the bottom")
