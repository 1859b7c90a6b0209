"""A finished assistant reply rendered as Markdown in one widget.

Rendering uses rich's Markdown (``rich.markdown.Markdown``: markdown-it parsing, CommonMark + tables;
code fences highlighted by pygments, tables laid out as rich tables, links as "text (url)"; HTML shown
as text and single newlines kept as line breaks, see :func:`_parse`),
turned into one ``rich.text.Text`` per width, so the reply is a single widget that the user can select
and copy from. Textual's own ``Markdown`` widget builds one widget per block (dozens per reply): with
eight panels finishing at once that made every layout pass cost 80-130 ms and grew memory ~3x
(docs/performance.md), so completed replies use this instead.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.text import Text
from textual.geometry import Size
from textual.widget import Widget

CODE_THEME = "monokai"
"""Pygments style of highlighted code fences."""


_MARKDOWN_CLASS: Any = None
_PARSER: Any = None


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

            def __init__(self, markup: str, **kwargs: Any) -> None:
                super().__init__("", **kwargs)
                self.markup = markup
                self.parsed = _parse(markup)

        _MARKDOWN_CLASS = ReplyMarkdown
    return _MARKDOWN_CLASS


def _parse(source: str) -> list[Any]:
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


def render_markdown(source: str, width: int, console: Any) -> Text:
    """Return ``source`` (Markdown) rendered for ``width`` cells as one ``Text`` (lines joined by
    newlines, no trailing spaces, no wrapping needed). ``console`` is a ``rich.console.Console`` (the
    app's). Never raises for any input text."""
    width = max(width, 10)
    markdown = _markdown_class()(source, code_theme=CODE_THEME, hyperlinks=False)
    options = console.options.update(width=width, height=None)
    lines = console.render_lines(markdown, options, pad=False)
    rows: list[Text] = []
    for line in lines:
        row = Text(no_wrap=True, overflow="crop", end="")
        for segment in line:
            if not segment.control:
                row.append(segment.text, segment.style)
        row.rstrip()
        rows.append(row)
    while rows and not rows[-1].plain:
        rows.pop()
    text = Text("\n", no_wrap=True, overflow="crop").join(rows)
    text.no_wrap = True
    return text


class MarkdownReply(Widget):
    """One completed reply (``source``: Markdown text), rendered once per width by
    :func:`render_markdown`; its height is its number of rendered rows."""

    DEFAULT_CSS = """
    MarkdownReply { height: auto; padding: 0 1; }
    """

    def __init__(self, source: str) -> None:
        super().__init__()
        self.source = source
        """The Markdown text shown."""
        self._cache: tuple[int, Text] | None = None

    def rendered(self, width: int) -> Text:
        """The reply rendered for ``width`` content cells (cached for the last width)."""
        if self._cache is None or self._cache[0] != width:
            try:
                shown = render_markdown(self.source, width, self.app.console)
            except Exception as exc:  # a renderer bug must not make the transcript undrawable
                shown = Text(f"(could not be drawn as Markdown: {type(exc).__name__})\n", style="dim")
                shown.append(self.source)
            self._cache = (width, shown)
        return self._cache[1]

    def get_content_width(self, container: Size, viewport: Size) -> int:
        """Fill the available width (the layout asks before knowing the height)."""
        return container.width

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        """Rows of the reply rendered for ``width`` cells."""
        return len(self.rendered(width).plain.split("\n"))

    def render(self) -> Text:
        """The rendered reply for the current content width."""
        return self.rendered(self.size.width)
