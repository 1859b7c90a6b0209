"""The overview screen (like ``top``): one row per session, and the activity log that feeds it.

Columns: number, name, state (or "waiting on X"), model, current tool, queued prompts, pending asks
(approvals + conflicts), held reservations, tokens, cost (USD, when the model has prices in
``runtime_config.json``), idle time. Enter focuses the session (the screen is dismissed with its id);
Esc closes. Rows refresh every :data:`REFRESH_SECONDS`.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from paragents.agent.tokens import cost_usd
from paragents.config import RuntimeConfig
from paragents.events import (
    ConflictDetected,
    ConflictResolved,
    Event,
    PermissionRequested,
    PermissionResolved,
    ToolCallFinished,
    ToolCallStarted,
    TurnFinished,
)
from paragents.models import Usage
from paragents.ui.text import clean
from paragents.ui.widgets.conflict_bar import age_text

if TYPE_CHECKING:
    from paragents.sessions import SessionsAPI
    from paragents.ui.widgets.session_panel import SessionPanel

REFRESH_SECONDS = 1.0
"""How often the overview re-reads the sessions (seconds)."""
COLUMNS = ("#", "session", "state", "model", "tool", "queued", "asks", "held", "tokens", "cost", "idle")


class ActivityLog:
    """What the app saw per session: last event time, the tool running now, and when each ask or
    conflict arrived (for the inbox's oldest-first order). ``clock`` returns Unix seconds."""

    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self.clock = clock
        self.last: dict[str, float] = {}
        """Session id -> time of its last event."""
        self.tool: dict[str, str] = {}
        """Session id -> summary of the tool call running now."""
        self.asked: dict[str, float] = {}
        """Request/conflict id -> when it arrived."""

    def observe(self, event: Event) -> None:
        """Update the log for one core event."""
        now = self.clock()
        sid = event.session_id
        self.last[sid] = now
        if isinstance(event, ToolCallStarted):
            self.tool[sid] = event.summary
        elif isinstance(event, ToolCallFinished | TurnFinished):
            self.tool.pop(sid, None)
        elif isinstance(event, PermissionRequested):
            self.asked.setdefault(event.request_id, now)
        elif isinstance(event, ConflictDetected):
            self.asked.setdefault(event.conflict_id, now)
        elif isinstance(event, PermissionResolved):
            self.asked.pop(event.request_id, None)
        elif isinstance(event, ConflictResolved):
            self.asked.pop(event.conflict_id, None)


@dataclass(frozen=True)
class OverviewRow:
    """One session's line. ``tokens`` in tokens; ``cost`` in USD or None (no prices); ``idle`` seconds
    since its last event or None (never active in this run)."""

    number: int
    session_id: str
    name: str
    state: str
    model: str
    tool: str
    queued: int
    asks: int
    held: int
    tokens: int
    cost: float | None
    idle: float | None

    def cells(self) -> tuple[str, ...]:
        """Return the row's display cells, in :data:`COLUMNS` order."""
        from paragents.ui.widgets.session_panel import format_tokens

        return (
            str(self.number),
            self.name,
            self.state,
            self.model,
            self.tool or "-",
            str(self.queued),
            str(self.asks),
            str(self.held),
            format_tokens(self.tokens),
            "-" if self.cost is None else f"${self.cost:.4f}",
            "-" if self.idle is None else age_text(self.idle),
        )


def session_cost(config: RuntimeConfig, model: str, usage: Usage) -> float | None:
    """Return the USD cost of ``usage`` at ``model``'s prices from ``config.model_settings`` (computed
    by :func:`paragents.agent.tokens.cost_usd`), or None when no price is set."""
    settings = config.model_settings(model)
    return cost_usd(usage, settings.input_price_per_mtok, settings.output_price_per_mtok)


def collect_rows(
    panels: Mapping[str, SessionPanel], activity: ActivityLog, runtime: SessionsAPI
) -> list[OverviewRow]:
    """Return one :class:`OverviewRow` per panel of ``panels`` (by session id), in panel order."""
    now = activity.clock()
    conflicts = runtime.conflicts
    config = runtime.loaded.config
    rows: list[OverviewRow] = []
    for sid, panel in panels.items():
        state = panel.state.value
        if panel.waiting_on and state == "waiting":
            state = f"waiting on {panel.waiting_on}"
        last = activity.last.get(sid)
        rows.append(
            OverviewRow(
                number=panel.number,
                session_id=sid,
                name=panel.name_,
                state=state,
                model=panel.model,
                tool=activity.tool.get(sid, ""),
                queued=len(panel.queue),
                asks=sum(not e.reply.done() for e in panel.pending.values())
                + sum(not e.reply.done() for e in panel.conflicts.values()),
                held=len(conflicts.held(sid)) if conflicts is not None else 0,
                tokens=panel.usage.total_tokens,
                cost=session_cost(config, panel.model, panel.usage),
                idle=None if last is None else now - last,
            )
        )
    return rows


class OverviewScreen(Screen[str | None]):
    """Table of :class:`OverviewRow` from ``rows()``; dismissed with the chosen session id (Enter) or None."""

    DEFAULT_CSS = """
    OverviewScreen > #overview-title { height: 1; padding: 0 1; background: $accent 30%; text-style: bold; }
    OverviewScreen > DataTable { height: 1fr; }
    OverviewScreen > #overview-mcp { height: auto; max-height: 8; padding: 0 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("enter", "choose", "Focus session", priority=True),
    ]

    def __init__(
        self, rows: Callable[[], list[OverviewRow]], mcp: Callable[[], list[str]] | None = None
    ) -> None:
        super().__init__()
        self.rows = rows
        self.mcp = mcp
        """Lines of the MCP section (one per server process), or None for no section."""
        self._ids: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("Sessions overview  (Enter focuses a session, Esc closes)", id="overview-title")
        table: DataTable[str] = DataTable(cursor_type="row", zebra_stripes=True)
        table.add_columns(*COLUMNS)
        yield table
        if self.mcp is not None:
            yield Static("", id="overview-mcp", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.reload()
        self.query_one(DataTable).focus()
        self.set_interval(REFRESH_SECONDS, self.reload)

    def reload(self) -> None:
        """Re-read the rows, keeping the cursor on the same session."""
        table = self.query_one(DataTable)
        keep = self._ids[table.cursor_row] if self._ids and 0 <= table.cursor_row < len(self._ids) else None
        rows = self.rows()
        table.clear()
        for row in rows:
            table.add_row(*(Text(clean(cell)) for cell in row.cells()), key=row.session_id)
        self._ids = [r.session_id for r in rows]
        if keep in self._ids:
            table.move_cursor(row=self._ids.index(keep))
        if self.mcp is not None:
            lines = self.mcp()
            section = self.query_one("#overview-mcp", Static)
            section.display = bool(lines)
            section.update(Text(clean("\n".join(lines))))

    def action_choose(self) -> None:
        """Dismiss with the highlighted session's id."""
        table = self.query_one(DataTable)
        if self._ids and 0 <= table.cursor_row < len(self._ids):
            self.dismiss(self._ids[table.cursor_row])

    def action_close(self) -> None:
        """Close without choosing."""
        self.dismiss(None)


class Demo(App[None]):
    """The overview: a running session with a tool and a reservation, one waiting on it, one idle."""

    def on_mount(self) -> None:
        tool = "run_command pytest -q"
        rows = [
            OverviewRow(1, "s1", "api", "running", "qwen2.5-coder", tool, 0, 0, 1, 3400, 0.0123, 2),
            OverviewRow(2, "s2", "web", "waiting on api", "qwen2.5-coder", "", 1, 1, 0, 1200, None, 95),
            OverviewRow(3, "s3", "docs", "idle", "llama3", "", 0, 0, 0, 0, None, None),
        ]
        self.push_screen(OverviewScreen(lambda: rows))


if __name__ == "__main__":
    Demo().run()
