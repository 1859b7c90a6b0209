"""A finished assistant reply rendered as Markdown in one widget.

Rendering uses rich's Markdown (``rich.markdown.Markdown``: markdown-it parsing, CommonMark + tables;
code fences highlighted by pygments, tables laid out as rich tables, links as "text (url)"; HTML shown
as text and single newlines kept as line breaks, see :func:`_parse`),
turned into one ``rich.text.Text`` per width, so the reply is a single widget that the user can select
and copy from. Textual's own ``Markdown`` widget builds one widget per block (dozens per reply): with
eight panels finishing at once that made every layout pass cost 80-130 ms and grew memory ~3x
(docs/performance.md), so completed replies use this instead. The widget paints only its visible rows
(Textual's line API): once rendered, a reply of thousands of rows costs what a screenful costs.

A reply of :data:`OFF_LOOP_CHARS` characters or more (a 390 KB reply takes seconds) is rendered off
the event loop's critical path: parsed in a thread (markdown-it touches nothing shared), then rendered
by rich in steps of :data:`STEP_SECONDS` between which the loop handles keys and frames (rendering in a
thread competed with the loop for the GIL: loop stalls up to 0.3 s were measured). Its source text shows
at once, dim, under a note, until the rendering is ready.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any, ClassVar, overload

from rich.segment import Segment
from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Size
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from paragents.ui.core.text import clean

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.token import Token

CODE_THEME = "monokai"
"""Pygments style of highlighted code fences."""
OFF_LOOP_CHARS = 10_000
"""Replies this long or longer (about 50 ms of rendering and up) are rendered in steps: parsed in a
thread, then rendered on the loop :data:`STEP_SECONDS` at a time, showing their source text until the
rendering is ready."""
STEP_SECONDS = 0.01
"""A long reply renders rows for this long, then lets the loop run (keys, frames) for
:data:`STEP_PAUSE` seconds."""
STEP_PAUSE = 0.004
"""Seconds the loop gets between two rendering steps of a long reply."""
PLACEHOLDER_LINE_CHARS = 1_000
"""The placeholder shows at most this many characters of a source line (rows are cropped anyway)."""
STRIP_CACHE_ROWS = 2_000
"""Most painted rows a reply keeps (the cache is emptied past that)."""


_MARKDOWN_CLASS: Any = None
_PARSER: MarkdownIt | None = None


def _markdown_class() -> Any:
    """rich's Markdown with left-aligned headings (rich centres h1), imported on first use (rich.markdown
    pulls in markdown-it and pygments: ~45 ms that startup does not need)."""
    global _MARKDOWN_CLASS
    if _MARKDOWN_CLASS is None:
        from rich.markdown import Heading, Markdown

        class LeftHeading(Heading):
            LEVEL_ALIGN: ClassVar[dict[str, Any]] = dict.fromkeys(
                ("h1", "h2", "h3", "h4", "h5", "h6"), "left"
            )

        class ReplyMarkdown(Markdown):
            elements: ClassVar[dict[str, Any]] = {**Markdown.elements, "heading_open": LeftHeading}

            def __init__(self, markup: str, parsed: list[Any] | None = None, **kwargs: Any) -> None:
                super().__init__("", **kwargs)
                self.markup = markup
                self.parsed = _parse(markup) if parsed is None else parsed

        _MARKDOWN_CLASS = ReplyMarkdown
    return _MARKDOWN_CLASS


def _parse(source: str) -> list[Token]:
    """markdown-it tokens of ``source`` as a chat reply wants them (CommonMark + tables and
    strikethrough, as rich parses): HTML is not interpreted, so ``<branch>``, ``Vec<String>`` or
    ``<details>`` stay visible as text (rich drops HTML tokens); a single newline inside a paragraph
    is a line break (models write line-per-step text), not a space."""
    global _PARSER
    if _PARSER is None:
        from markdown_it import MarkdownIt

        _PARSER = MarkdownIt("commonmark", {"html": False}).enable("strikethrough").enable("table")
    tokens = _PARSER.parse(source)
    for token in tokens:
        for child in token.children or ():
            if child.type == "softbreak":
                child.type = "hardbreak"
    return tokens


def iter_rows(source: str, width: int, console: Any, parsed: list[Any] | None = None) -> Iterator[Text]:
    """Yield ``source`` (Markdown) rendered for ``width`` cells one row (a ``Text``: no trailing
    spaces, no wrapping needed) at a time, as rich produces them; ``parsed``: the tokens of
    :func:`_parse` when already parsed. ``console`` is a ``rich.console.Console`` (the app's)."""
    width = max(width, 10)
    markdown = _markdown_class()(source, parsed, code_theme=CODE_THEME, hyperlinks=False)
    options = console.options.update(width=width, height=None)
    # What Console.render_lines(pad=False) does, one row at a time.
    for line in Segment.split_and_crop_lines(console.render(markdown, options), width, pad=False):
        row = Text(no_wrap=True, overflow="crop", end="")
        for segment in line:
            if not segment.control:
                row.append(segment.text, segment.style)
        row.rstrip()
        yield row


def trim_rows(rows: list[Text]) -> list[Text]:
    """Drop the empty rows at the end of ``rows`` (in place) and return it."""
    while rows and not rows[-1].plain:
        rows.pop()
    return rows


def render_rows(source: str, width: int, console: Any) -> list[Text]:
    """Return ``source`` (Markdown) rendered for ``width`` cells as one ``Text`` per row
    (:func:`iter_rows`), without empty rows at the end. Never raises for any input text."""
    return trim_rows(list(iter_rows(source, width, console)))


def render_markdown(source: str, width: int, console: Any) -> Text:
    """Return ``source`` (Markdown) rendered for ``width`` cells as one ``Text`` (the rows of
    :func:`render_rows` joined by newlines)."""
    text = Text("\n", no_wrap=True, overflow="crop").join(render_rows(source, width, console))
    text.no_wrap = True
    return text


def fallback_rows(source: str, exc: Exception) -> list[Text]:
    """The reply as plain text under a note, for a rendering that failed (a renderer bug must not
    make the transcript undrawable)."""
    return [
        Text(f"(could not be drawn as Markdown: {type(exc).__name__})", style="dim"),
        *(Text(line) for line in source.split("\n")),
    ]


class PlaceholderRows(Sequence[Text]):
    """The rows shown while a long reply renders: a note, then the source text as it is (dim, cleaned),
    one row per source line. Rows are built when painted (a 400 KB reply has ~10,000 lines: building
    them all took part of the first frame)."""

    def __init__(self, source: str) -> None:
        self.lines = source.split("\n")
        size = f"{len(source) / 1000:.0f} KB" if len(source) >= 1000 else f"{len(source)} characters"
        self.note = Text(f"⋯ rendering this reply ({size}); its text meanwhile:", style="dim italic", end="")

    def __len__(self) -> int:
        return len(self.lines) + 1

    @overload
    def __getitem__(self, index: int) -> Text: ...
    @overload
    def __getitem__(self, index: slice) -> Sequence[Text]: ...
    def __getitem__(self, index: int | slice) -> Text | Sequence[Text]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(len(self)))]
        if index < 0:
            index += len(self)
        if index == 0:
            return self.note
        line = clean(self.lines[index - 1][:PLACEHOLDER_LINE_CHARS])
        return Text(line, style="dim", no_wrap=True, end="")


class MarkdownReply(Widget):
    """One completed reply (``source``: Markdown text), rendered once per width by
    :func:`render_rows`; its height is its number of rendered rows. A long reply (see
    :data:`OFF_LOOP_CHARS`) shows :class:`PlaceholderRows` until its rendering, made in steps, is
    ready; after a resize it keeps showing the previous rendering until the new one is ready.

    ``source`` may hold escape sequences and control characters (a model's text): a short reply is
    cleaned (:func:`~paragents.ui.core.text.clean`) at once, a long one in the rendering's thread (its
    placeholder cleans the rows it paints), so opening it costs what opening a short one does."""

    DEFAULT_CSS = """
    MarkdownReply { height: auto; padding: 0 1; }
    """

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = clean(source) if len(source) < OFF_LOOP_CHARS else source
        """The Markdown text shown (a long one is cleaned when its rendering starts)."""
        self._cleaned = len(source) < OFF_LOOP_CHARS
        self._rows: list[Text] | None = None
        self._rows_width = 0
        self._placeholder: PlaceholderRows | None = None
        self._strips: dict[int, Strip] = {}
        self._strips_width = 0
        self._wanted = 0
        self._rendering = 0
        self._start_due = False
        self._parsed: list[Any] | None = None

    @property
    def pending(self) -> bool:
        """True while the placeholder shows (a long reply's first rendering is not ready yet)."""
        return self._rows is None

    def rendered(self, width: int) -> Text:
        """The reply rendered for ``width`` content cells (rendered now unless already done)."""
        return Text("\n", no_wrap=True, overflow="crop").join(self._rows_now(width))

    def _rows_now(self, width: int) -> list[Text]:
        if not self._cleaned:
            self.source, self._cleaned = clean(self.source), True
        if self._rows is None or self._rows_width != width:
            try:
                rows = render_rows(self.source, width, self.app.console)
            except Exception as exc:  # a renderer bug must not make the transcript undrawable
                rows = fallback_rows(self.source, exc)
            self._set_rows(width, rows)
        assert self._rows is not None
        return self._rows

    def _set_rows(self, width: int, rows: list[Text]) -> None:
        self._rows, self._rows_width = rows, width
        self._placeholder = None
        self._strips.clear()

    def _shown_rows(self, width: int) -> Sequence[Text]:
        """The rows to show at ``width``: rendered now (short reply), ready, or the placeholder /
        the previous width's rows while they render in steps (long reply)."""
        if self._rows is not None and self._rows_width == width:
            return self._rows
        if len(self.source) < OFF_LOOP_CHARS:
            return self._rows_now(width)
        if width > 0:  # 0: not placed (Textual briefly finds no region for it): nothing to render for
            self._want(width)
        if self._rows is not None:
            return self._rows
        if self._placeholder is None:
            self._placeholder = PlaceholderRows(self.source)
        return self._placeholder

    def _want(self, width: int) -> None:
        """Ask for a rendering at ``width`` in steps; it starts after the next refresh with the
        width wanted then, so a layout that settles in two passes (a scrollbar appearing) renders
        once."""
        self._wanted = width
        if self._rendering == width or self._start_due:
            return
        self._start_due = True
        self.call_after_refresh(self._start)

    def _start(self) -> None:
        self._start_due = False
        if not self.is_attached:
            return
        width = self._wanted
        if self._rendering == width or (self._rows is not None and self._rows_width == width):
            return
        self._rendering = width
        # A failed rendering (never seen: rich renders any text) keeps the placeholder, not a crash.
        self.run_worker(self._render_in_steps(width), group="render", exclusive=True, exit_on_error=False)

    async def _render_in_steps(self, width: int) -> None:
        if not self._cleaned:
            self.source = await asyncio.to_thread(clean, self.source)
            self._cleaned = True
        if self._parsed is None:
            self._parsed = await asyncio.to_thread(_parse, self.source)
        rows: list[Text] = []
        step_end = time.perf_counter() + STEP_SECONDS
        for row in iter_rows(self.source, width, self.app.console, self._parsed):
            rows.append(row)
            if time.perf_counter() >= step_end:
                await asyncio.sleep(STEP_PAUSE)
                if self._rendering != width:
                    return  # a newer width was asked for meanwhile
                step_end = time.perf_counter() + STEP_SECONDS
        if self._rendering != width:
            return
        self._rendering = 0
        self._parsed = None
        self._set_rows(width, trim_rows(rows))
        self.refresh(layout=True)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """Fill the available width (the layout asks before knowing the height)."""
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """Rows of the reply rendered for ``width`` cells (of the placeholder while it renders)."""
        return len(self._shown_rows(width))

    def render_line(self, y: int) -> Strip:
        """Row ``y`` of the reply (painted once, then cached), with the text selection shown."""
        width = self.size.width
        if width <= 0:  # not placed right now: paint nothing, cache nothing, ask for no rendering
            return Strip.blank(0)
        rows = self._shown_rows(width)
        if self._strips_width != width:
            self._strips.clear()
            self._strips_width = width
        style = self.rich_style
        if y >= len(rows):
            return Strip.blank(width, style)
        selection = self.text_selection
        strip = self._strips.get(y) if selection is None else None
        if strip is None:
            row = rows[y].copy()
            row.stylize_before(style)
            if selection is not None and (span := selection.get_span(y)) is not None:
                start, end = span
                row.stylize(
                    self.screen.get_component_rich_style("screen--selection"),
                    start,
                    len(row) if end == -1 else end,
                )
            strip = Strip(row.render(self.app.console), row.cell_len)
            strip = strip.crop_extend(0, width, style).apply_offsets(0, y)
            if selection is None:
                if len(self._strips) >= STRIP_CACHE_ROWS:
                    self._strips.clear()
                self._strips[y] = strip
        return strip

    def notify_style_update(self) -> None:
        """The theme or styles changed: paint the rows again with the new colours."""
        super().notify_style_update()
        self._strips.clear()

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected part of the reply's rendered text."""
        rows = self._shown_rows(self.size.width)
        return selection.extract("\n".join(row.plain for row in rows)), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        """Repaint with the new selection."""
        self._strips.clear()
        self.refresh()


class Demo(App[None]):
    """A completed reply: headings, a list, code, a table and inline markup-like text kept literal."""

    SOURCE = """## The fix

The bug is in `parse()`; I changed **two** lines:

- strip whitespace first
- keep `[bold]` as typed text

```python
def parse(text: str) -> int:
    return int(text.strip())
```

| file | change |
|------|--------|
| src/parse.py | strip whitespace |
"""

    def compose(self) -> ComposeResult:
        yield MarkdownReply(self.SOURCE)


if __name__ == "__main__":
    Demo().run()
