"""The reply being streamed, shown as plain text rows until it completes (then the transcript shows it
as Markdown): every row kept, wrapped incrementally, painted through Textual's line API. See
:class:`LiveReply` and shared/docs/STREAMING.md section 5."""

from __future__ import annotations

from rich._wrap import divide_line  # the row breaks Text.wrap uses (rich has no public API for them)
from rich.text import Text
from textual import events
from textual.selection import Selection
from textual.strip import Strip
from textual.widget import Widget

from paragents.ui.core.text import clean, tail

LIVE_TAIL_CHARS = 4_000
"""An open last line of the in-flight reply longer than this is cut at its row boundaries (all but its
last two rows no longer change), so a reply without newlines is not wrapped whole at every flush."""
LIVE_STRIP_CACHE = 2_000
"""Most painted rows of the in-flight reply kept (the cache is emptied past that)."""
LIVE_GROW_ROWS = 4
"""The in-flight reply's height grows in steps of a third of the transcript height, at least this many
rows (each step is one screen-wide layout pass)."""
LIVE_REASONING_CHARS = 600
"""Characters of in-flight reasoning shown while it streams."""


class LiveReply(Widget):
    """The reply being streamed, shown as plain text rows; replaced by Markdown when it completes.

    Every row of the reply is kept, so a reader can scroll back inside it while it streams, and rows
    never move once shown: new text only changes the last rows and adds rows below them. Wrapping is
    incremental: complete lines are wrapped once (per width), only the open last line is wrapped again
    at each flush (a very long one is cut at row boundaries as it grows); only the rows on screen are
    painted (Textual's line API). After a width change every row is wrapped again at once, paused
    stream or not. The height grows in steps of a third of the transcript height (at least
    :data:`LIVE_GROW_ROWS` rows): one screen-wide layout pass per step, not per row."""

    DEFAULT_CSS = """
    LiveReply { height: auto; padding: 0 1; margin: 0 0 1 0; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._height = 0
        self._width = 0
        self._content = ""
        self._reasoning = ""
        self._head: list[Text] = []
        """Rows of the reasoning shown above the reply (its tail), and a blank row before the reply."""
        self._rows: list[Text] = []
        """Rows of the reply's text that no longer change (up to ``_done``)."""
        self._done = 0
        """Characters of the reply's (raw) text wrapped into ``_rows``."""
        self._tail: list[Text] = []
        """Rows of the reply's last, still open, line."""
        self._strips: dict[int, Strip] = {}
        """Painted rows of ``_rows`` (they do not change until the width or the theme does)."""

    @property
    def row_count(self) -> int:
        """How many rows the reply (and its reasoning) takes at the current width."""
        return len(self._head) + len(self._rows) + len(self._tail)

    def rows_text(self) -> str:
        """Every row, as plain text (tests, selection)."""
        return "\n".join(row.plain for row in (*self._head, *self._rows, *self._tail))

    def _step(self) -> int:
        """The height step: a third of the transcript height, at least :data:`LIVE_GROW_ROWS` rows."""
        parent = self.parent
        height = parent.size.height if isinstance(parent, Widget) else 0
        return max(height // 3, LIVE_GROW_ROWS)

    def show(self, content: str, reasoning: str) -> None:
        """Show ``content`` (and a short tail of ``reasoning``) without Markdown parsing: wraps only
        what is new, asks for a layout pass only when the height step changes (else a repaint)."""
        width = max(self.size.width or self.parent_width(), 10)
        if width != self._width or not content.startswith(self._content[: self._done]):
            self._reset(width)
        self._content = content
        if reasoning != self._reasoning:
            self._reasoning = reasoning
            self._head = self._wrap_head(width)
        self._wrap_new(width)
        self._resize()
        self.refresh()

    def _reset(self, width: int) -> None:
        self._width = width
        self._rows, self._tail, self._done = [], [], 0
        self._strips.clear()
        self._head = self._wrap_head(width)

    def _wrap(self, text: str, width: int) -> list[Text]:
        return list(Text(text).wrap(self.app.console, width, overflow="fold"))

    def _wrap_head(self, width: int) -> list[Text]:
        if not self._reasoning:
            return []
        shown, _ = tail(self._reasoning, LIVE_REASONING_CHARS)
        text = Text("thinking… ", style="bold dim")
        text.append(clean(shown), style="dim italic")
        rows = list(text.wrap(self.app.console, width, overflow="fold"))
        return [*rows, Text("")] if self._content else rows

    def _wrap_new(self, width: int) -> None:
        """Wrap the complete lines that arrived since the last call into ``_rows``, then the open
        last line into ``_tail`` (a long one: its rows but the last two move to ``_rows``)."""
        content = self._content
        if self._reasoning and self._content and (not self._head or self._head[-1].plain):
            self._head = self._wrap_head(width)  # the blank row between reasoning and reply
        end = content.rfind("\n") + 1
        if end > self._done:
            self._rows.extend(self._wrap(clean(content[self._done : end - 1]), width))
            self._done = end
        open_line = content[self._done :]
        if len(open_line) > LIVE_TAIL_CHARS and clean(open_line) == open_line:
            breaks = divide_line(open_line, width, fold=True)
            if len(breaks) > 2:
                cut = breaks[-2]
                self._rows.extend(self._wrap(open_line[:cut], width))
                self._done += cut
                open_line = open_line[cut:]
        self._tail = self._wrap(clean(open_line), width) if open_line else []

    def _resize(self) -> None:
        step = self._step()
        height = -(-max(self.row_count, 1) // step) * step
        if height != self._height:
            self._height = height
            self.styles.height = height

    def on_resize(self, event: events.Resize) -> None:
        """A new width: wrap every row again now (a paused stream must not keep the old wrapping)."""
        width = max(self.size.width, 10)  # the content width (the event's size includes the padding)
        if width != self._width and (self._content or self._reasoning):
            self._reset(width)
            self._wrap_new(width)
            self._resize()
            self.refresh()

    def notify_style_update(self) -> None:
        """The theme or styles changed: paint the rows again with the new colours."""
        super().notify_style_update()
        self._strips.clear()

    def render_line(self, y: int) -> Strip:
        """Row ``y`` of the reply (rows that no longer change are painted once, then cached)."""
        width = self.size.width
        style = self.rich_style
        head, rows = self._head, self._rows
        index = y - len(head)
        if y < len(head):
            row: Text | None = head[y]
        elif index < len(rows):
            strip = self._strips.get(index)
            if strip is not None and strip.cell_length == width:
                return strip
            row = rows[index]
        else:
            at = index - len(rows)
            row = self._tail[at] if at < len(self._tail) else None
        if row is None:
            return Strip.blank(width, style)
        line = row.copy()
        line.stylize_before(style)
        strip = Strip(line.render(self.app.console), line.cell_len).crop_extend(0, width, style)
        if 0 <= index < len(rows) and y >= len(head):
            if len(self._strips) >= LIVE_STRIP_CACHE:
                self._strips.clear()
            self._strips[index] = strip
        return strip

    def get_selection(self, selection: Selection) -> tuple[str, str] | None:
        """The selected part of the rows shown."""
        return selection.extract(self.rows_text()), "\n"

    def selection_updated(self, selection: Selection | None) -> None:
        """Repaint with the new selection."""
        self._strips.clear()
        self.refresh()

    def parent_width(self) -> int:
        """This widget's content width in cells before its first layout (the transcript's width less
        its right padding and this widget's side padding); 0 when not mounted."""
        parent = self.parent
        return parent.size.width - 3 if isinstance(parent, Widget) else 0
