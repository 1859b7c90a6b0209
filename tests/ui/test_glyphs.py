"""The UI's symbols are one cell wide everywhere (or ASCII with ascii_glyphs), and model text cannot
move a panel's border: rich and per-code-point terminals (tmux) agree on the width of what is shown."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
import wcwidth
from rich.cells import cell_len
from wcwidth.bisearch import bisearch
from wcwidth.grapheme import _is_extended_pictographic
from wcwidth.table_ambiguous import AMBIGUOUS_EASTASIAN
from wcwidth.table_vs16 import VS16_NARROW_TO_WIDE

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse
from paragents.ui.app import make_app
from paragents.ui.core import glyphs as glyphs_module
from paragents.ui.core.glyphs import ASCII, UNICODE, Glyphs
from paragents.ui.core.text import clean
from tests.ui.conftest import wait_until
from tests.ui.helpers import replies, started

AMBIGUOUS = list(AMBIGUOUS_EASTASIAN.values())[-1]
EMOJI_CAPABLE = list(VS16_NARROW_TO_WIDE.values())[-1]
EMOJI_TEXT = (
    "family 👨‍👩‍👧 flag 🇫🇷 warn ⚠️ thumbs 👍🏽 heart ❤️ keycap 1️⃣ tag 🏴󠁧󠁢󠁳󠁣󠁴󠁿 bidi \u202eabc\u202c shy a\u00adb end"
)
"""Emoji the issue saw shift a border in tmux (VS16, flags, ZWJ sequences, modifiers), and other
format characters."""


@pytest.fixture(autouse=True)
def unicode_glyphs() -> Iterator[None]:
    yield
    glyphs_module.use_ascii(False)


def all_glyphs(g: Glyphs) -> list[str]:
    fields = [
        g.warn,
        g.stop,
        g.sep,
        g.pointer,
        g.collapsed,
        g.expanded,
        g.earlier,
        g.icon,
        g.queued,
        g.remove,
    ]
    return [*fields, *g.status.values()]


def per_code_point(text: str) -> int:
    """The width a terminal that adds up code points (tmux, glibc's wcwidth) gives ``text``."""
    return sum(max(wcwidth.wcwidth(ch), 0) for ch in text)


def test_unicode_glyphs_are_one_cell_in_every_terminal() -> None:
    for glyph in all_glyphs(UNICODE):
        for ch in glyph:
            code = ord(ch)
            assert wcwidth.wcwidth(ch) == 1 and cell_len(ch) == 1, glyph
            assert not bisearch(code, AMBIGUOUS), f"{glyph!r} is East-Asian-ambiguous"
            assert not bisearch(code, EMOJI_CAPABLE), f"{glyph!r} can be drawn as an emoji"
            assert not _is_extended_pictographic(code), f"{glyph!r} is pictographic"


def test_ascii_glyphs_are_ascii() -> None:
    assert all(glyph.isascii() and glyph.isprintable() for glyph in all_glyphs(ASCII))
    assert ASCII.ellipsis == "..."


def test_clean_leaves_text_whose_width_rich_and_terminals_agree_on() -> None:
    assert cell_len(EMOJI_TEXT) != per_code_point(EMOJI_TEXT)  # the problem
    shown = clean(EMOJI_TEXT)
    assert cell_len(shown) == per_code_point(shown)
    assert "[FR]" in shown and "👨👩👧" in shown and "⚠ thumbs 👍 heart ❤" in shown and "abc" in shown
    for text in ("宽字符 ok", "é e\u0301 naïve", "plain ascii [b]x[/b]", "→ … · ○"):
        assert clean(text) == text  # text without such sequences is left alone


async def test_emoji_in_a_reply_keeps_the_panel_border_in_line(
    make_runtime: Any, replay: ReplayServer
) -> None:
    replay.add(ScriptedResponse.from_message(EMOJI_TEXT), session="s1")
    app = make_app(await make_runtime())
    async with app.run_test(size=(100, 30)) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"hi", "enter")
        await wait_until(pilot, lambda: bool(replies(panel)), "the reply")
        await pilot.pause()
        rows = [strip.text for strip in app.screen._compositor.render_strips()]
        assert any("flag [FR]" in row for row in rows)
        for row in rows:
            assert per_code_point(row) == 100, row
        await app.shutdown_runtime()


async def test_ascii_glyphs_setting_draws_the_chrome_in_ascii(
    make_runtime: Any, replay: ReplayServer
) -> None:
    runtime = await make_runtime()
    (runtime.project_dir / "runtime_config.json").write_text(json.dumps({"ascii_glyphs": True}))
    await runtime.shutdown()
    runtime = await make_runtime()
    assert runtime.config.ascii_glyphs is True
    replay.add(
        ScriptedResponse.from_message(
            None, tool_calls=[{"id": "c1", "name": "list_dir", "arguments": json.dumps({"path": "."})}]
        ),
        session="s1",
    )
    replay.add(ScriptedResponse.from_message("done"), session="s1")
    app = make_app(runtime)
    async with app.run_test(size=(100, 30)) as pilot:
        (panel,) = await started(pilot, app)
        await pilot.press(*"hi", "enter")
        await wait_until(pilot, lambda: replies(panel) == ["done"], "the reply")
        await pilot.pause()
        screen = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert " | m | idle | " in panel.title_text().plain
        assert "+ list_dir" in screen and "> result:" in screen
        assert not any(glyph in screen for glyph in all_glyphs(UNICODE) if not glyph.isascii())
        await app.shutdown_runtime()


def test_the_approval_bars_will_fail_line_uses_the_glyph_set_not_the_emoji_prone_warning_sign() -> None:
    from rich.text import Text

    from paragents.models import CallPreview
    from paragents.ui.core.glyphs import glyphs
    from paragents.ui.widgets.approval_bar import preview_body

    for preview in (
        CallPreview("command", "make", "", "/p", problem="no such directory"),
        CallPreview("diff", "--- a\n+++ b\n", "", "", problem="the file changed"),
    ):
        body: Any = preview_body(preview)
        text = body.plain if isinstance(body, Text) else str(list(body.renderables)[-1])
        assert "\u26a0" not in text and glyphs().warn in text
