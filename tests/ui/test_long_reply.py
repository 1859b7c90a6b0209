"""A long stored reply (tens of KB of Markdown) opens without stalling the app: its source text shows at
once as a placeholder, the Markdown is rendered once (at the final width) in steps, and keys typed
meanwhile reach the prompt box."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from paragents.ui.app import make_app
from paragents.ui.core import text
from paragents.ui.widgets import markdown_reply
from paragents.ui.widgets.markdown_reply import OFF_LOOP_CHARS, MarkdownReply
from tests.patience import HANG_GUARD_S
from tests.ui.conftest import SIZE, wait_until
from tests.ui.fake_runtime import FakeRuntime, make_view


def long_reply(chars: int) -> str:
    """Markdown of at least ``chars`` characters: headings, prose, code fences and tables."""
    parts: list[str] = []
    size, i = 0, 0
    while size < chars:
        block = (
            f"## Step {i}\n\nSome **prose** about `func_{i}`.\n\n"
            f"```python\ndef f_{i}(x: int) -> int:\n    return x * {i}\n```\n\n"
            f"| a | b |\n|---|---|\n| {i} | `{i * 2}` |\n\n"
        )
        parts.append(block)
        size += len(block)
        i += 1
    return "".join(parts)


async def test_long_reply_shows_its_text_at_once_and_is_rendered_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = long_reply(4 * OFF_LOOP_CHARS)
    view = make_view("s1", "big")
    view.messages = [{"role": "user", "content": "explain"}, {"role": "assistant", "content": source}]
    gate = threading.Event()
    parse, iter_rows = markdown_reply._parse, markdown_reply.iter_rows
    widths: list[int] = []

    def held_parse(text: str) -> list[Any]:
        if len(text) >= OFF_LOOP_CHARS:
            assert gate.wait(HANG_GUARD_S), "the test never released the parse"
        return parse(text)

    def counted_rows(text: str, width: int, *args: Any) -> Any:
        if len(text) >= OFF_LOOP_CHARS:
            widths.append(width)
        return iter_rows(text, width, *args)

    monkeypatch.setattr(markdown_reply, "_parse", held_parse)
    monkeypatch.setattr(markdown_reply, "iter_rows", counted_rows)
    app = make_app(FakeRuntime([view], tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(app.query(MarkdownReply)), "the reply mounted")
        reply = app.query_one(MarkdownReply)
        transcript = app.panels["s1"].transcript
        # Laid out: the transcript counts it and the reply has its place. The transcript's size alone
        # was not enough: under load Textual can briefly find no region for the reply (size 0), and
        # a row painted then is empty (the flaky `render_line(0)` of issue 30).
        await wait_until(
            pilot, lambda: transcript.max_scroll_y > 0 and reply.size.width > 0, "the placeholder laid out"
        )
        # The placeholder: a note on top, the source text below, as tall as the source.
        assert reply.pending
        assert "rendering this reply" in reply.render_line(0).text
        assert "Step 0" in reply.render_line(1).text
        assert reply.size.height > source.count("\n")
        # Keys typed meanwhile reach the prompt box.
        await pilot.press(*"hi")
        assert app.panels["s1"].prompt_box.input.value == "hi"
        gate.set()
        await wait_until(pilot, lambda: not reply.pending, "the rendered reply")
        await pilot.pause()
        assert widths == [reply.size.width]  # once, at the width it is shown at
        rows = [reply.render_line(y).text for y in range(reply.size.height)]
        assert rows[0].startswith("Step 0")  # heading, no "##": rendered Markdown
        assert not any("```" in row for row in rows)
        assert transcript.scroll_y == transcript.max_scroll_y  # still following the bottom


async def test_a_huge_stored_reply_costs_its_first_frame_what_a_short_one_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening a ~400 KB stored reply does no work in proportion to its size on the event loop before
    it shows: its text is cleaned in the rendering's thread, and its placeholder builds only the rows
    painted (building them all, and cleaning the whole text, were part of the first frame)."""
    from paragents.ui.widgets.markdown_reply import PlaceholderRows

    source = long_reply(400_000)
    view = make_view("s1", "big")
    view.messages = [{"role": "user", "content": "explain"}, {"role": "assistant", "content": source}]
    gate = threading.Event()
    parse, clean = markdown_reply._parse, text.clean  # markdown_reply imported text.clean
    on_loop: list[int] = []
    built: set[int] = set()

    def held_parse(text: str) -> list[Any]:
        assert gate.wait(HANG_GUARD_S), "the test never released the parse"
        return parse(text)

    def watched_clean(text: str) -> str:
        if len(text) >= OFF_LOOP_CHARS and threading.current_thread() is threading.main_thread():
            on_loop.append(len(text))
        return clean(text)

    row = PlaceholderRows.__getitem__

    def counted(self: PlaceholderRows, index: Any) -> Any:
        if isinstance(index, int):
            built.add(index)
        return row(self, index)

    monkeypatch.setattr(markdown_reply, "_parse", held_parse)
    monkeypatch.setattr(markdown_reply, "clean", watched_clean)
    monkeypatch.setattr(PlaceholderRows, "__getitem__", counted)
    app = make_app(FakeRuntime([view], tmp_path))
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: bool(app.query(MarkdownReply)), "the reply mounted")
        reply = app.query_one(MarkdownReply)
        transcript = app.panels["s1"].transcript
        await wait_until(
            pilot, lambda: transcript.max_scroll_y > 0 and reply.size.width > 0, "the placeholder laid out"
        )
        await pilot.pause()
        assert reply.pending and reply.size.height > source.count("\n")
        assert on_loop == []  # the 400 KB text was not cleaned on the event loop
        assert 0 < len(built) <= 3 * transcript.size.height  # only rows painted were built
        await wait_until(pilot, lambda: reply._cleaned, "the text cleaned before it is parsed")
        assert on_loop == []  # in the rendering's thread
        gate.set()
