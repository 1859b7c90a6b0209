"""Moving around the panels: alt+digit as tmux/xterm send it (ESC + digit), following the bottom of a
transcript (wheel, End, a sent prompt) and zooming one panel (alt+z)."""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

from textual import events
from textual._xterm_parser import XTermParser

from paragents.sessions import SessionView
from paragents.ui.app import ParagentsApp, make_app
from paragents.ui.widgets.prompt_area import PromptArea
from paragents.ui.widgets.transcript import FOLLOW_ROWS
from tests.ui.conftest import SIZE, wait_until
from tests.ui.fake_runtime import FakeRuntime, make_view


def _history(exchanges: int) -> list[dict[str, Any]]:
    history: list[dict[str, Any]] = []
    for i in range(exchanges):
        history += [
            {"role": "user", "content": f"question {i}"},
            {"role": "assistant", "content": f"answer {i}\n\nwith a second paragraph"},
        ]
    return history


def _views(count: int, exchanges: int = 0) -> list[SessionView]:
    views = [make_view(f"s{n}", f"panel{n}") for n in range(1, count + 1)]
    for view in views:
        view.messages = _history(exchanges)
    return views


async def _started(pilot: Any, app: ParagentsApp, count: int) -> None:
    await wait_until(pilot, lambda: app.ready and len(app.panels) == count, "panels")
    await wait_until(
        pilot, lambda: not any(p.transcript.restore_pending for p in app.panels.values()), "histories"
    )


def _is_active(app: ParagentsApp, sid: str) -> bool:
    return app.active_sid == sid


def _prompt(app: ParagentsApp, sid: str) -> PromptArea:
    return app.panels[sid].prompt_box.input


def test_parser_reports_esc_digit_as_alt_digit(tmp_path: Path) -> None:
    make_app(FakeRuntime([], tmp_path))  # the app installs the mapping
    parser = XTermParser()
    keys = [(k.key, k.character) for k in parser.feed("\x1b1\x1b2\x1b9") if isinstance(k, events.Key)]
    assert keys == [("alt+1", None), ("alt+2", None), ("alt+9", None)]
    # A "¡" the terminal sends as a character is still typed as one.
    assert [k.character for k in parser.feed("¡") if isinstance(k, events.Key)] == ["¡"]


async def test_esc_digit_from_the_terminal_focuses_that_panel_and_types_nothing(tmp_path: Path) -> None:
    app = make_app(FakeRuntime(_views(3), tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await _started(pilot, app, 3)
        for sequence, sid in (("\x1b2", "s2"), ("\x1b3", "s3"), ("\x1b1", "s1")):
            driver = app._driver
            assert driver is not None
            for event in XTermParser().feed(sequence):  # the bytes tmux sends for send-keys M-2
                driver.process_message(event)
            await wait_until(pilot, partial(_is_active, app, sid), f"panel {sid} focused")
            assert app.focused is _prompt(app, sid)
        await pilot.press("x")  # the next key lands in the panel just focused
        assert [_prompt(app, s).value for s in ("s1", "s2", "s3")] == ["x", "", ""]


async def _scrolled_up_panel(pilot: Any, app: ParagentsApp) -> Any:
    await _started(pilot, app, 1)
    transcript = app.panels["s1"].transcript
    await wait_until(pilot, lambda: transcript.max_scroll_y > 10, "a long transcript")
    await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y, "at the bottom")
    await pilot.press("pageup")
    await wait_until(pilot, lambda: transcript.scroll_y < transcript.max_scroll_y - 5, "scrolled up")
    return transcript


async def _new_output_shows(pilot: Any, transcript: Any) -> bool:
    """Add a long notice; True when the view stays at the bottom of the transcript."""
    transcript.add_notice("new output " * 30)
    for _ in range(3):  # mount, layout, anchored scroll
        await pilot.pause()
    return bool(transcript.scroll_y == transcript.max_scroll_y)


async def _wheel(pilot: Any, widget: Any, kind: type[events.MouseEvent]) -> None:
    """One mouse-wheel step over ``widget`` (Textual scrolls App.scroll_sensitivity_y rows)."""
    widget.post_message(kind(widget, 1, 1, 0, 0, 0, False, False, False))
    await pilot.pause()


async def test_wheel_back_to_within_two_rows_of_the_bottom_resumes_following(tmp_path: Path) -> None:
    app = make_app(FakeRuntime(_views(1, exchanges=12), tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = await _scrolled_up_panel(pilot, app)
        assert not await _new_output_shows(pilot, transcript)
        # Three rows above the bottom, one wheel step (two rows) down ends one row above it.
        transcript.scroll_to(y=transcript.max_scroll_y - FOLLOW_ROWS - 1, animate=False)
        await pilot.pause()
        await _wheel(pilot, transcript, events.MouseScrollDown)
        assert await _new_output_shows(pilot, transcript)
        # A wheel step *up* from the bottom does not resume following.
        await _wheel(pilot, transcript, events.MouseScrollUp)
        assert transcript.scroll_y < transcript.max_scroll_y
        assert not await _new_output_shows(pilot, transcript)


async def test_pageup_in_a_transcript_that_fits_keeps_it_following(tmp_path: Path) -> None:
    app = make_app(FakeRuntime(_views(1, exchanges=1), tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        await _started(pilot, app, 1)
        transcript = app.panels["s1"].transcript
        assert transcript.max_scroll_y == 0
        await pilot.press("pageup")
        for _ in range(4):
            transcript.add_notice("output " * 40)
        await wait_until(pilot, lambda: transcript.max_scroll_y > 0, "output past the panel")
        assert await _new_output_shows(pilot, transcript)


async def test_end_follows_again_while_the_prompt_has_focus(tmp_path: Path) -> None:
    app = make_app(FakeRuntime(_views(1, exchanges=12), tmp_path))
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = await _scrolled_up_panel(pilot, app)
        prompt = _prompt(app, "s1")
        await pilot.press(*"abc", "home")
        assert app.focused is prompt and prompt.cursor_location == (0, 0)
        await pilot.press("end")
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y, "at the bottom")
        assert prompt.cursor_location == (0, 0)  # the End went to the transcript
        assert await _new_output_shows(pilot, transcript)
        await pilot.press("end")  # already following: End is the prompt's again
        assert prompt.cursor_location == (0, 3)


async def test_sending_a_prompt_while_scrolled_up_shows_the_bottom(tmp_path: Path) -> None:
    runtime = FakeRuntime(_views(1, exchanges=12), tmp_path)
    app = make_app(runtime)
    async with app.run_test(size=(80, 24)) as pilot:
        transcript = await _scrolled_up_panel(pilot, app)
        await pilot.press(*"next", "enter")
        await wait_until(pilot, lambda: runtime.submitted == [("s1", "next")], "submitted")
        await wait_until(pilot, lambda: transcript.scroll_y == transcript.max_scroll_y, "at the bottom")
        assert await _new_output_shows(pilot, transcript)


async def test_alt_z_zooms_the_focused_panel_and_back(tmp_path: Path) -> None:
    app = make_app(FakeRuntime(_views(3), tmp_path))
    async with app.run_test(size=(60, 20)) as pilot:
        await _started(pilot, app, 3)
        await pilot.press("alt+2")
        panel = app.panels["s2"]
        small = panel.region
        await pilot.press("alt+z")
        await pilot.pause()
        assert app.screen.maximized is panel
        assert panel.region.width == 60 and panel.region.height > small.height
        assert not any(p.region.area for p in app.panels.values() if p is not panel)
        assert app.focused is _prompt(app, "s2")
        await pilot.press("alt+3")  # the zoom follows the focus
        await pilot.pause()
        assert app.screen.maximized is app.panels["s3"] and app.focused is _prompt(app, "s3")
        await pilot.press("alt+z")
        await pilot.pause()
        assert app.screen.maximized is None
        assert all(p.region.area for p in app.panels.values())
