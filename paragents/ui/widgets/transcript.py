"""A session's transcript: prompts, replies, thoughts, tool calls and notices, bounded in size.

Streaming design (see shared/docs/STREAMING.md §5): the in-flight reply is buffered here and shown
in a cheap :class:`LiveReply` (plain ``rich.text.Text`` rows wrapped incrementally, painted through
Textual's line API, in a height that grows in steps), repainted only when the owner calls
:meth:`Transcript.flush` (the app's ticker: 25 Hz for the focused panel, 12.5 Hz staggered for the
others). When the message completes it is replaced by one ``MarkdownReply`` rendered once. At
most ``MAX_MOUNTED`` entries are mounted; older ones stay as light records and come back through the
"show earlier" button.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import BindingType
from textual.containers import Vertical, VerticalScroll
from textual.widget import AwaitMount, Widget
from textual.widgets import Button, Collapsible, Static

from paragents.models import Message, ToolCall
from paragents.ui.core.glyphs import glyphs
from paragents.ui.core.text import plain, safe_text
from paragents.ui.widgets.live_reply import LiveReply
from paragents.ui.widgets.markdown_reply import MarkdownReply
from paragents.ui.widgets.tool_call import ToolCallBlock, ToolEntry, summarize_arguments, undrawable

MAX_MOUNTED = 200
"""Most transcript entries mounted at once; older ones are unmounted (records kept)."""
EARLIER_STEP = 50
"""How many older entries one press of "show earlier" mounts."""
RESTORE_MOUNTED = 10
"""Entries mounted when a stored conversation is loaded (restore/reopen); "show earlier" mounts more.
Kept small (five exchanges fill a panel) so startup with many persisted sessions stays fast
(docs/performance.md)."""
FOLLOW_ROWS = 2
"""Scrolling back down to within this many rows of the bottom resumes following new output."""


SHOWN_PROMPT_LINES = 40
"""A prompt or notice longer than this many lines shows its first ones and says how many more."""
SHOWN_PROMPT_CHARS = 8_000
"""... or than this many characters (a pasted 500 KB prompt wrapped to 25,000 rows of a narrow panel
took ~1 GB and stalled the app)."""


def head_of(text: str) -> tuple[str, str]:
    """``text`` cut to :data:`SHOWN_PROMPT_LINES` lines and :data:`SHOWN_PROMPT_CHARS` characters, and
    what was left out ("2,960 more lines"), "" when nothing was."""
    lines = text.split("\n")
    if len(lines) <= SHOWN_PROMPT_LINES and len(text) <= SHOWN_PROMPT_CHARS:
        return text, ""
    head = "\n".join(lines[:SHOWN_PROMPT_LINES])[:SHOWN_PROMPT_CHARS]
    left_lines = len(lines) - head.count("\n") - 1
    if left_lines > 0:
        return head, f"{left_lines:,} more line{'s' if left_lines != 1 else ''}"
    return head, f"{len(text) - len(head):,} more characters"


OPEN_STATUSES = ("pending", "asking", "running")


def live_summary(summary: str, sandboxed: bool | None = None) -> str:
    """A tool call's row text as the panel shows it while it runs: its summary, " · sandboxed" when
    it runs in the sandbox."""
    return summary + (" · sandboxed" if sandboxed else "")


"""Tool-call statuses of a call that has not finished (its row may still change)."""


@dataclass(eq=False)
class TextEntry:
    """A user prompt (``kind`` "user") or notice (``kind`` "info"/"warning"/"error"); ``sent`` False
    for a prompt kept but never sent (too big for the context window)."""

    kind: str
    text: str
    widget: Any = field(default=None, repr=False)
    sent: bool = True


@dataclass(eq=False)
class AssistantEntry:
    """A completed assistant message: ``content`` (Markdown) and optional ``reasoning``."""

    content: str
    reasoning: str = ""
    widget: Any = field(default=None, repr=False)


Entry = TextEntry | AssistantEntry | ToolEntry

NOTICE_STYLES = {"user": "bold", "info": "dim", "warning": "yellow", "error": "bold red"}


class UserPrompt(Static):
    """A user prompt line (plain text, never markup)."""

    DEFAULT_CSS = """
    UserPrompt { height: auto; margin: 1 0 1 0; padding: 0 1; background: $boost; }
    """


class NoticeLine(Static):
    """A notice (info/warning/error) in the transcript."""

    DEFAULT_CSS = """
    NoticeLine { height: auto; margin: 0 0 1 0; padding: 0 1; }
    """


class AssistantBlock(Vertical):
    """A completed assistant reply: a collapsed thought block (if any) and the answer rendered as
    Markdown (:class:`~paragents.ui.widgets.markdown_reply.MarkdownReply`)."""

    DEFAULT_CSS = """
    AssistantBlock { height: auto; margin: 0 0 1 0; }
    AssistantBlock Collapsible { padding: 0; margin: 0; border: none; }
    AssistantBlock .thought { color: $text-muted; text-style: italic; }
    AssistantBlock MarkdownReply { margin: 0; padding: 0 1; }
    """

    def __init__(self, entry: AssistantEntry) -> None:
        super().__init__()
        self.entry = entry
        entry.widget = self

    def compose(self) -> ComposeResult:
        if self.entry.reasoning.strip():
            words = len(self.entry.reasoning.split())
            g = glyphs()
            yield Collapsible(
                Static(safe_text(self.entry.reasoning), classes="thought"),
                title=plain(f"Thought ({words} words)"),  # type: ignore[arg-type]  # never markup
                collapsed=True,
                collapsed_symbol=g.collapsed,
                expanded_symbol=g.expanded,
            )
        if self.entry.content.strip():
            yield MarkdownReply(self.entry.content)  # it cleans the text (a long one off the loop)


class Transcript(VerticalScroll):
    """Scrollable transcript of one session. Methods are called by its :class:`SessionPanel`."""

    DEFAULT_CSS = """
    Transcript { height: 1fr; padding: 0 1 0 0; }
    Transcript > #earlier { width: 100%; height: 1; min-width: 0; border: none; margin: 0; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, can_focus=True)
        self.records: list[Entry] = []
        """Every entry of the session shown so far (mounted or not), oldest first."""
        self.first_mounted = 0
        """Index in ``records`` of the oldest mounted entry."""
        self.live: LiveReply | None = None
        """The in-flight reply widget, or None."""
        self._text_parts: list[str] = []
        self._reason_parts: list[str] = []
        self._dirty = False
        self._tools: dict[str, ToolEntry] = {}
        self._loading = False
        self._restore_pending = False

    def on_mount(self) -> None:
        self.anchor()

    # --- following the bottom ------------------------------------------------------------------
    @property
    def following(self) -> bool:
        """True while the view sticks to the bottom as output arrives (Textual's anchor, not released
        by a scroll up)."""
        return self.is_anchored and not self._anchor_released

    def follow(self) -> None:
        """Jump to the bottom and follow new output again (End, a sent prompt)."""
        self.anchor()

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        """Resume following when a scroll *down* (wheel, PageDown, scrollbar) ends within
        :data:`FOLLOW_ROWS` rows of the bottom; Textual itself only resumes at the very last row."""
        super().watch_scroll_y(old_value, new_value)
        if new_value > old_value and not self.following and new_value >= self.max_scroll_y - FOLLOW_ROWS:
            self.follow()

    @property
    def dirty(self) -> bool:
        """True when streamed text arrived since the last :meth:`flush`."""
        return self._dirty

    @property
    def streamed_text(self) -> str:
        """The in-flight reply text received so far ("" when none)."""
        return "".join(self._text_parts)

    async def reset(self) -> None:
        """Forget every entry and unmount everything (a new conversation)."""
        self._drop_live()
        self.records.clear()
        self._tools.clear()
        self.first_mounted = 0
        await self.remove_children()

    # --- streaming -----------------------------------------------------------------------------
    def append_text(self, delta: str) -> None:
        """Buffer a piece of answer text (shown at the next :meth:`flush`)."""
        self._text_parts.append(delta)
        self._dirty = True

    def append_reasoning(self, delta: str) -> None:
        """Buffer a piece of reasoning text (shown at the next :meth:`flush`)."""
        self._reason_parts.append(delta)
        self._dirty = True

    def flush(self) -> bool:
        """Show buffered streamed text; return True when something was repainted."""
        if not self._dirty:
            return False
        self._dirty = False
        if self.live is None:
            self.live = LiveReply()
            self._mount_widget(self.live)
        self.live.show("".join(self._text_parts), "".join(self._reason_parts))
        return True

    def _drop_live(self) -> tuple[str, str]:
        text, reasoning = "".join(self._text_parts), "".join(self._reason_parts)
        self._text_parts.clear()
        self._reason_parts.clear()
        self._dirty = False
        if self.live is not None:
            self.live.remove()
            self.live = None
        return text, reasoning

    def end_stream(self) -> None:
        """Turn ended without a final message (cancel/failure): keep what streamed as a finished reply."""
        text, reasoning = self._drop_live()
        if text.strip() or reasoning.strip():
            self._add(AssistantEntry(text + "\n\n*(interrupted)*", reasoning))

    # --- entries -------------------------------------------------------------------------------
    def add_user(self, text: str, *, sent: bool = True) -> None:
        """Append a user prompt (``sent`` False: kept, never sent to the model)."""
        self._drop_live()
        self._add(TextEntry("user", text, sent=sent))

    def add_notice(self, text: str, level: str = "info") -> None:
        """Append a notice; ``level`` is info, warning or error."""
        self._add(TextEntry(level, text))

    def add_message(self, message: Message) -> None:
        """Append a completed message (OpenAI shape): assistant replies replace the live view and
        announce their tool calls; tool results fill the matching tool block; user messages show
        as prompts. Unknown roles are ignored."""
        role = message.get("role")
        if role == "assistant":
            streamed, streamed_reasoning = self._drop_live()
            content = message.get("content") or ""
            reasoning = message.get("reasoning_content") or streamed_reasoning
            if not content and streamed and not message.get("tool_calls"):
                content = streamed
            if content.strip() or reasoning.strip():
                self._add(AssistantEntry(content, reasoning))
            shown = message.get("tool_rows") or {}  # how each call was shown live (restored)
            for raw in message.get("tool_calls") or []:
                try:
                    call = ToolCall.from_openai(raw)
                except (KeyError, TypeError):
                    continue
                row = shown.get(call.id) if isinstance(shown, dict) else None
                self._tool_entry(call, live_summary(*row) if row else summarize_arguments(call.arguments))
        elif role == "tool":
            entry = self._tools.get(str(message.get("tool_call_id")))
            if entry is not None and entry.status in OPEN_STATUSES:
                entry.output = str(message.get("content") or "")
                entry.status = str(message.get("outcome") or "ok")  # stored outcome (restored)
                self._refresh_tool(entry)
        elif role == "user":
            self.add_user(str(message.get("content") or ""), sent=not message.get("incomplete"))

    def load_history(
        self, messages: list[Message], *, mount: bool = True, notes: Sequence[tuple[int, str, str]] = ()
    ) -> None:
        """Show a stored conversation (e.g. after restore): every message becomes a light record, and
        only the newest :data:`RESTORE_MOUNTED` entries are mounted (older ones via "show earlier").
        ``notes`` ``(n, text, level)`` are notices shown after the first ``n`` messages (how past
        turns ended).

        ``mount``: mount them right after the next refresh (the panel's frame comes first); with False
        they wait for :meth:`mount_restored` (the app fills restored panels one per frame)."""
        self._loading = True
        pending = sorted(notes)
        try:
            for index, message in enumerate(messages):
                while pending and pending[0][0] <= index:
                    self.add_notice(*pending.pop(0)[1:])
                self.add_message(message)
            for _n, text, level in pending:
                self.add_notice(text, level)
        finally:
            self._loading = False
        self.first_mounted = max(len(self.records) - min(RESTORE_MOUNTED, MAX_MOUNTED), self.first_mounted)
        self._restore_pending = True
        if mount:
            self.call_after_refresh(self.mount_restored)

    @property
    def restore_pending(self) -> bool:
        """True while loaded history waits for :meth:`mount_restored`."""
        return self._restore_pending

    def mount_restored(self) -> AwaitMount | None:
        """Mount the loaded history's newest entries (once); returns the mount to await, or None."""
        if not self._restore_pending:
            return None
        self._restore_pending = False
        if not self.is_attached:  # the panel was closed or the app quit meanwhile
            return None
        pending = self.records[self.first_mounted :]
        later = next((e.widget for e in pending if e.widget is not None and e.widget.parent is self), None)
        widgets = [self._make_widget(e) for e in pending if e.widget is None]
        before = later or (self.live if self.live is not None and self.live.parent is self else None)
        mounted = None
        if widgets:
            mounted = (
                self.mount_all(widgets, before=before) if before is not None else self.mount_all(widgets)
            )
        self._update_earlier_button()
        return mounted

    def _tool_entry(self, call: ToolCall, summary: str) -> ToolEntry:
        """The row of ``call``: the open row with its id, or a new one. A finished row is never
        rewritten: some OpenAI-compatible servers reuse tool-call ids across turns (``call_0`` every
        turn), and a later call with the same id must not overwrite an earlier turn's result."""
        entry = self._tools.get(call.id)
        if entry is None or entry.status not in OPEN_STATUSES:
            entry = ToolEntry(call.id, call.name, summary)
            self._tools[call.id] = entry
            self._add(entry)
        return entry

    def tool_status(self, call: ToolCall, status: str, summary: str | None = None) -> None:
        """Set a tool call's status (asking/running) and, when given, its argument ``summary``."""
        entry = self._tool_entry(call, summary or summarize_arguments(call.arguments))
        entry.status = status
        if summary:
            entry.summary = summary
        self._refresh_tool(entry)

    def tool_finished(self, call: ToolCall, status: str, output: str, diff: str | None) -> None:
        """Record a finished tool call: ``status`` ok/error/denied/cancelled/skipped, its output and diff."""
        entry = self._tool_entry(call, summarize_arguments(call.arguments))
        entry.status, entry.output, entry.diff = status, output, diff
        self._refresh_tool(entry)

    def _refresh_tool(self, entry: ToolEntry) -> None:
        if entry.widget is not None and entry.widget.is_mounted:
            entry.widget.refresh_entry()

    # --- mounting & bounding -------------------------------------------------------------------
    def _make_widget(self, entry: Entry) -> Widget:
        """The widget of ``entry``; should building it fail (a bug), the entry's text as plain text
        with a note instead, so a stored conversation never keeps the app from starting."""
        try:
            return self._build_widget(entry)
        except Exception as exc:
            source = entry.content if isinstance(entry, AssistantEntry) else getattr(entry, "text", "")
            if isinstance(entry, ToolEntry):
                source = f"{entry.name} {entry.summary}\n{entry.output}"
            widget = undrawable(source, exc)
            entry.widget = widget
            return widget

    def _build_widget(self, entry: Entry) -> Widget:
        if isinstance(entry, ToolEntry):
            return ToolCallBlock(entry)
        if isinstance(entry, AssistantEntry):
            return AssistantBlock(entry)
        style = NOTICE_STYLES.get(entry.kind, "")
        shown, more = head_of(entry.text)
        if entry.kind == "user":
            text = Text(f"{glyphs().prompt} ", style="bold")
            text.append_text(safe_text(shown))
            widget: Static = UserPrompt(text)
        else:
            text = safe_text(shown, style)
            widget = NoticeLine(text)
        unsent = entry.kind == "user" and not entry.sent
        if more:
            sent = " (the whole prompt was sent)" if entry.kind == "user" and not unsent else ""
            text.append(f"\n{glyphs().ellipsis} {more}{sent}", style="dim italic")
        if unsent:
            text.append("\n(not sent: too big for the context window)", style="dim italic")
        entry.widget = widget
        return widget

    def _add(self, entry: Entry) -> None:
        self.records.append(entry)
        if self._loading:
            return
        widget = self._make_widget(entry)
        self._mount_widget(widget, before=self.live)
        self._trim()

    def _mount_widget(self, widget: Widget, before: Widget | None = None) -> None:
        if before is not None and before.parent is self:
            self.mount(widget, before=before)
        else:
            self.mount(widget)

    @property
    def mounted_count(self) -> int:
        """Number of entries currently mounted."""
        return len(self.records) - self.first_mounted

    def _trim(self) -> None:
        excess = self.mounted_count - MAX_MOUNTED
        if excess <= 0:
            return
        for entry in self.records[self.first_mounted : self.first_mounted + excess]:
            if entry.widget is not None:
                entry.widget.remove()
                entry.widget = None
        self.first_mounted += excess
        self._update_earlier_button()

    def _update_earlier_button(self) -> None:
        buttons = self.query("#earlier")
        if self.first_mounted == 0:
            buttons.remove()
            return
        label = plain(f"{glyphs().earlier} show earlier ({self.first_mounted} hidden)")
        if buttons:
            buttons.first(Button).label = label
        else:
            self.mount(Button(label, id="earlier", compact=True), before=0)

    def show_earlier(self, count: int = EARLIER_STEP) -> None:
        """Mount up to ``count`` older entries above the oldest mounted one."""
        start = max(self.first_mounted - count, 0)
        widgets = [self._make_widget(entry) for entry in self.records[start : self.first_mounted]]
        self.first_mounted = start
        following = start + len(widgets)
        anchor_widget = self.records[following].widget if following < len(self.records) else None
        if widgets:
            if anchor_widget is not None and anchor_widget.parent is self:
                self.mount_all(widgets, before=anchor_widget)
            else:
                self.mount_all(widgets)
        self._update_earlier_button()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "earlier":
            event.stop()
            self.release_anchor()
            self.show_earlier()


class Demo(App[None]):
    """A transcript: a user prompt (markup and escape codes kept literal), a reply with reasoning and a
    tool call, its result, a notice; space streams a token, f finishes the streamed reply."""

    BINDINGS: ClassVar[list[BindingType]] = [
        ("space", "stream", "stream a token"),
        ("f", "finish", "finish reply"),
    ]

    def compose(self) -> ComposeResult:
        yield Transcript()

    def on_mount(self) -> None:
        t = self.query_one(Transcript)
        t.add_user("Please fix the failing test in [bold]tests/test_x.py[/bold] \x1b[31m(red)\x1b[0m")
        call = ToolCall("c1", "read_file", '{"path": "tests/test_x.py"}')
        t.add_message(
            {
                "role": "assistant",
                "content": "Let me look.\n\n```python\nprint('hi')\n```",
                "reasoning_content": "The user wants a fix.",
                "tool_calls": [call.to_openai()],
            }
        )
        t.tool_finished(call, "ok", "def test(): ...", None)
        t.add_notice("Retrying in 2 s (HTTP 503)", "warning")

    def action_stream(self) -> None:
        t = self.query_one(Transcript)
        t.append_text("streaming **words** ")
        t.flush()

    def action_finish(self) -> None:
        t = self.query_one(Transcript)
        t.add_message({"role": "assistant", "content": t.streamed_text})


if __name__ == "__main__":
    Demo().run()
