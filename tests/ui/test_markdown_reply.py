"""Finished replies: Markdown rendered by rich in one widget (highlighted fences, laid-out tables,
left-aligned headings), re-rendered per width, selectable, safe with any text."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.selection import Selection

from paragents.ui.widgets.markdown_reply import MarkdownReply, render_markdown
from tests.ui.feeding import feed

SOURCE = (
    "# Title\n\nSome **bold** text and `code`.\n\n"
    "```python\ndef parse(text: str) -> int:\n    return int(text.strip())\n```\n\n"
    "| file | change |\n|---|---|\n| parse.py | strip |\n\n- one\n- two\n"
)


class ReplyApp(App[None]):
    def compose(self) -> ComposeResult:
        yield MarkdownReply(SOURCE)


async def test_fence_is_highlighted_table_laid_out_heading_left() -> None:
    app = ReplyApp()
    async with app.run_test(size=(80, 40)):
        text = render_markdown(SOURCE, 60, app.console)
        lines = text.split("\n")
        plain = [line.plain for line in lines]
        assert plain[0].startswith("Title")  # left-aligned, not centred
        code = next(line for line in lines if "def parse" in line.plain)
        assert len({str(span.style) for span in code.spans}) >= 3  # pygments colours
        header = next(i for i, p in enumerate(plain) if "file" in p and "change" in p)
        assert "|" not in plain[header] and set(plain[header + 1].strip()) <= set("─━")
        assert any("parse.py" in p and "strip" in p and "|" not in p for p in plain)
        assert any(p.lstrip().startswith("•") and "one" in p for p in plain)
        assert all(len(p) <= 60 for p in plain)


async def test_widget_height_is_its_rows_and_follows_the_width() -> None:
    app = ReplyApp()
    async with app.run_test(size=(80, 40)) as pilot:
        reply = app.query_one(MarkdownReply)
        await pilot.pause()
        wide = reply.size.height
        assert wide == len(reply.rendered(reply.size.width).plain.split("\n"))
        await pilot.resize_terminal(30, 40)
        await pilot.pause()
        assert reply.size.width < 30 and reply.size.height > wide
        rows = [reply.render_line(y).text.rstrip() for y in range(reply.size.height)]
        assert rows == reply.rendered(reply.size.width).plain.split("\n")
        assert all(len(row) <= reply.size.width for row in rows)


async def test_rendered_reply_text_can_be_selected() -> None:
    app = ReplyApp()
    async with app.run_test(size=(80, 40)) as pilot:
        reply = app.query_one(MarkdownReply)
        await pilot.pause()
        selected = reply.get_selection(Selection(None, None))
        assert selected is not None and "def parse(text: str)" in selected[0]


def test_any_text_renders_without_error() -> None:
    from rich.console import Console

    console = Console(width=40)
    for source in ["", "```", "| a |\n|--", "\x00\x1b[31m red", "# " * 500, "x" * 10_000]:
        render_markdown(source, 40, console)


def test_angle_brackets_and_html_stay_visible_and_single_newlines_break_lines() -> None:
    from rich.console import Console

    source = (
        "Run git checkout <branch> to switch.\n\nA Vec<String> holds strings.\n\n"
        "<details>hidden?</details>\n\n<!-- a comment --> after comment.\n\n"
        "Line one\nLine two\n\nSee [the docs](https://example.com/x)."
    )
    plain = render_markdown(source, 70, Console(width=80)).plain
    for kept in (
        "<branch>",
        "Vec<String>",
        "<details>hidden?</details>",
        "after comment.",
        "https://example.com/x",
    ):
        assert kept in plain, kept
    lines = [line.strip() for line in plain.split("\n")]
    assert "Line one" in lines and "Line two" in lines  # not joined into "Line one Line two"


async def test_a_theme_switch_repaints_finished_and_streaming_replies_in_the_new_colours() -> None:
    """The painted rows are cached: a dark → light switch must not keep the dark ones."""
    from paragents.events import TextDelta
    from paragents.ui.widgets.live_reply import LiveReply
    from paragents.ui.widgets.session_panel import SessionPanel
    from tests.ui.panel_app import PanelApp

    app = PanelApp([{"role": "assistant", "content": SOURCE}])
    async with app.run_test(size=(80, 40)) as pilot:
        app.theme = "textual-dark"
        panel = app.query_one(SessionPanel)
        await feed(panel, TextDelta("s1", "streaming words\n"))
        panel.flush()
        await pilot.pause()
        reply, live = app.query_one(MarkdownReply), app.query_one(LiveReply)

        def background(widget: MarkdownReply | LiveReply) -> object:
            return next(s.style.bgcolor for s in widget.render_line(0) if s.style is not None)

        dark = background(reply), background(live)
        app.theme = "textual-light"
        await pilot.pause()
        light = background(reply), background(live)
        assert light[0] != dark[0] and light[1] != dark[1]
        assert light[0] == reply.rich_style.bgcolor and light[1] == live.rich_style.bgcolor


async def test_a_long_reply_not_placed_for_a_moment_still_renders_once_placed() -> None:
    """A paint while the reply has no region (width 0: Textual briefly finds none under load) neither
    caches an empty row nor asks for a rendering at width 0 (which cancelled the pending one)."""
    from paragents.ui.widgets.markdown_reply import OFF_LOOP_CHARS
    from tests.ui.conftest import wait_until

    long_source = "word " * (OFF_LOOP_CHARS // 4)

    class LongApp(App[None]):
        def compose(self) -> ComposeResult:
            yield MarkdownReply(long_source)

    app = LongApp()
    async with app.run_test(size=(80, 40)) as pilot:
        reply = app.query_one(MarkdownReply)
        await pilot.pause()
        assert reply._shown_rows(0) is not None and reply._wanted != 0  # no rendering asked at width 0
        await wait_until(pilot, lambda: not reply.pending, "the rendering")
        assert reply.render_line(0).text.strip().startswith("word")
