"""The overview screen (like ``top``): one row per session, and the activity log that feeds it.

Columns: number, name, state (or "waiting on X", "needs you: question"), model, current tool, queued
prompts, pending asks (approvals + conflicts), held reservations, prompt / cached / completion
tokens, spend (USD, priced per request at the model that served it, when the model has prices in
``runtime_config.json``), the % of the session's budget used, idle time. A "~" marks a figure counted
from locally estimated tokens (the server sent no usage). Under the table: the project's spend today
with the % of its per-day budget, and the notifications that could not be delivered (webhook,
command). Enter focuses the session (the screen is dismissed with its id); Esc closes. Rows refresh
every :data:`REFRESH_SECONDS`.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable, Mapping
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
from paragents.limits import Spend
from paragents.models import Usage
from paragents.ui.core.text import clean
from paragents.ui.widgets.conflict_bar import age_text
from paragents.ui.widgets.panel_title import format_tokens

if TYPE_CHECKING:
    from paragents.sessions import SessionsAPI
    from paragents.ui.widgets.session_panel import SessionPanel

REFRESH_SECONDS = 1.0
"""How often the overview re-reads the sessions (seconds)."""
COLUMNS = (
    "#",
    "session",
    "state",
    "model",
    "tool",
    "queued",
    "asks",
    "held",
    "prompt",
    "cached",
    "compl",
    "spend",
    "budget",
    "idle",
    "where",
)
LANES_REFRESH_SECONDS = 5.0
"""How often it re-reads the lanes (their ports, open or leftover)."""


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
    spend: Spend | None = None
    """Prompt / cached / completion tokens and money; None: only ``tokens`` and ``cost`` are known."""
    budget: str = ""
    """How much of the session's budget is used ("60% of $0.05 · 24% of 50k tok"), "" without a cap."""
    where: str = ""
    """Where its tool calls run: "" (here), "lane api" (a worktree here), or its lane's container/Pod
    ("container paragents-3f2a-api", "... unreachable" while it does not answer)."""

    def cells(self) -> tuple[str, ...]:
        """Return the row's display cells, in :data:`COLUMNS` order."""
        spend = self.spend
        mark = "~" if spend is not None and spend.estimated else ""
        if spend is not None:
            prompt, cached, completion = (
                format_tokens(n) for n in (spend.prompt, spend.cached, spend.completion)
            )
            money = spend.money() or "-"
        else:
            prompt, cached, completion = format_tokens(self.tokens), "-", "-"
            money = "-" if self.cost is None else f"${self.cost:.4f}"
        return (
            str(self.number),
            self.name,
            self.state,
            self.model,
            self.tool or "-",
            str(self.queued),
            str(self.asks),
            str(self.held),
            mark + prompt,
            cached,
            mark + completion,
            money,
            self.budget or "-",
            "-" if self.idle is None else age_text(self.idle),
            self.where or "-",
        )


def session_cost(config: RuntimeConfig, model: str, usage: Usage) -> float | None:
    """Return the USD cost of ``usage`` at ``model``'s prices from ``config.model_settings`` (computed
    by :func:`paragents.agent.tokens.cost_usd`), or None when no price is set (used only when the
    session's per-request spend is not known, e.g. a stand-in runtime)."""
    settings = config.model_settings(model)
    return cost_usd(usage, settings.input_price_per_mtok, settings.output_price_per_mtok)


def collect_rows(
    panels: Mapping[str, SessionPanel],
    activity: ActivityLog,
    runtime: SessionsAPI,
    seconds: Mapping[str, float] | None = None,
) -> list[OverviewRow]:
    """Return one :class:`OverviewRow` per panel of ``panels`` (by session id), in panel order.
    ``seconds``: the wall-clock seconds each session ran turns (for a wall-clock budget's %)."""
    now = activity.clock()
    config = runtime.settings.loaded.config
    rows: list[OverviewRow] = []
    for sid, panel in panels.items():
        view = panel.view
        state = view.state.value
        if view.waiting_on and state == "waiting":
            state = f"waiting on {view.waiting_on}"
        if view.question and state == "idle":
            state = "needs you: question"
        spend = view.spend if view.spend.tokens or not view.usage.total_tokens else None
        cap = runtime.budgets.caps(sid).get("session")
        budget = spend.percents(cap, (seconds or {}).get(sid, 0.0)) if spend is not None else ""
        last = activity.last.get(sid)
        rows.append(
            OverviewRow(
                number=panel.number,
                session_id=sid,
                name=view.name,
                state=state,
                model=view.model + (f" ({c.model})" if (c := panel.agent_controls) and c.model else ""),
                tool=activity.tool.get(sid, ""),
                queued=len(view.queue),
                asks=len(view.open_asks) + len(view.open_conflicts),
                held=runtime.reservations.held_count(sid),
                tokens=view.usage.total_tokens,
                cost=session_cost(config, view.model, view.usage),
                idle=None if last is None else now - last,
                spend=spend,
                budget=budget,
                where=where_text(view),
            )
        )
    return rows


def where_text(view: object) -> str:
    """The "where" cell of a session: its lane, and for a lane in a container or Pod, that place and
    whether it answers (docs/remote.md)."""
    lane = getattr(view, "lane", None)
    if not lane:
        return ""
    place = getattr(view, "lane_where", None)
    if not place:
        return f"lane {lane}"
    place = str(place).split(" (", 1)[0]  # "container paragents-3f2a-api" without the engine address
    return place + (" · unreachable" if getattr(view, "lane_state", "ready") == "unreachable" else "")


class OverviewScreen(Screen[str | None]):
    """Table of :class:`OverviewRow` from ``rows()``; dismissed with the chosen session id (Enter) or None."""

    DEFAULT_CSS = """
    OverviewScreen > #overview-title { height: 1; padding: 0 1; background: $accent 30%; text-style: bold; }
    OverviewScreen > DataTable { height: 1fr; }
    OverviewScreen > #overview-notes { height: auto; max-height: 6; padding: 0 1; color: $warning; }
    OverviewScreen > #overview-lanes {
        height: auto; max-height: 40%; padding: 0 1; border-top: solid $accent;
    }
    OverviewScreen > #overview-mcp { height: auto; max-height: 8; padding: 0 1; color: $text-muted; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("enter", "choose", "Focus session", priority=True),
    ]

    def __init__(
        self,
        rows: Callable[[], list[OverviewRow]],
        notes: Callable[[], list[str]] | None = None,
        lanes: Callable[[], Awaitable[list[str]]] | None = None,
        mcp: Callable[[], list[str]] | None = None,
    ) -> None:
        super().__init__()
        self.rows = rows
        self.notes = notes
        """Lines under the table: the project's spend today, failed notifications (plain text)."""
        self.lanes = lanes
        """Returns the lane lines (name, ports, holder or "leftover"), shown under the table."""
        self.mcp = mcp
        """Lines of the MCP section (one per server process), or None for no section."""
        self._ids: list[str] = []

    def compose(self) -> ComposeResult:
        yield Static("Sessions overview  (Enter focuses a session, Esc closes)", id="overview-title")
        table: DataTable[str] = DataTable(cursor_type="row", zebra_stripes=True)
        table.add_columns(*COLUMNS)
        yield table
        yield Static("", id="overview-notes")
        lanes = Static("", id="overview-lanes")
        lanes.display = False
        yield lanes
        if self.mcp is not None:
            yield Static("", id="overview-mcp", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        self.reload()
        self.query_one(DataTable).focus()
        self.set_interval(REFRESH_SECONDS, self.reload)
        if self.lanes is not None:
            self.run_worker(self.reload_lanes(), group="lanes", exclusive=True)
            self.set_interval(LANES_REFRESH_SECONDS, self._lanes_tick)

    def _lanes_tick(self) -> None:
        self.run_worker(self.reload_lanes(), group="lanes", exclusive=True)

    async def reload_lanes(self) -> None:
        """Re-read the lanes (plain text: lane names and paths are untrusted)."""
        if self.lanes is None:
            return
        lines = await self.lanes()
        widget = self.query_one("#overview-lanes", Static)
        widget.update(Text("\n".join(["Lanes", *(clean(line) for line in lines)])))
        widget.display = bool(lines)

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
        lines = self.notes() if self.notes is not None else []
        notes = self.query_one("#overview-notes", Static)
        notes.update(Text("\n".join(clean(line) for line in lines)))
        notes.display = bool(lines)
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
    """The overview: a running session with a tool, a reservation and a budget, one waiting on it
    (estimated tokens), one asking a question; the project's spend today and a failed webhook."""

    def on_mount(self) -> None:
        tool = "run_command pytest -q"
        api = Spend(3000, 1200, 400, 0.0123, False)
        web = Spend(1000, 0, 200, None, True)
        rows = [
            OverviewRow(
                1, "s1", "api", "running", "gpt-4o", tool, 0, 0, 1, 3400, None, 2, api, "25% of $0.05"
            ),
            OverviewRow(2, "s2", "web", "waiting on api", "qwen2.5-coder", "", 1, 1, 0, 1200, None, 95, web),
            OverviewRow(3, "s3", "docs", "needs you: question", "llama3", "", 0, 0, 0, 0, None, None),
        ]
        notes = [
            "project today $0.0123 (12% of $0.10)",
            "1 notification not delivered:",
            "  webhook http://127.0.0.1:9/hook failed: HTTP 500",
        ]
        self.push_screen(OverviewScreen(lambda: rows, lambda: notes))


if __name__ == "__main__":
    Demo().run()
