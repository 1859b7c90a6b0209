"""Budgets checked before each model request (:class:`BudgetMeter`) and what a breach says (:class:`Breach`).

Before a request is sent the agent asks the meter whether it may go: for each budget level that has
a cap (the session's own, the project's for today, a fan-out group's once groups exist) the meter
adds what was spent (from the store's usage rows, so other processes count for the project) and the
estimated cost of this request (the local token estimate of its prompt times the model's input
price; completion tokens cannot be known before, so a request may overshoot a little), and says
which cap it would cross. Money needs the model's prices: when a USD cap applies to a model without
prices the meter warns once and enforces only the token cap. Wall-clock caps count the time this
process spent running the session's turns (paused time excluded). Nothing here imports Textual.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paragents.agent.tokens import cost_usd
from paragents.limits import Budget, format_seconds, format_tokens, format_usd
from paragents.models import Usage

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig
    from paragents.store import Store

LEVELS = ("session", "group", "project_day")
"""Budget levels in the order they are checked; "group" sums every sibling of the session's fan-out group."""
LEVEL_NAMES = {"session": "session", "group": "group", "project_day": "project today", "loop": "loop guard"}


@dataclass(frozen=True, slots=True)
class Breach:
    """Why a request may not be sent: ``level`` (session/group/project_day/loop), ``kind`` (usd,
    tokens, seconds, identical_calls, idle_requests), what was ``spent`` and the ``cap`` (as shown),
    and one readable ``reason``."""

    level: str
    kind: str
    spent: str
    cap: str
    reason: str


def day_start(now: float) -> float:
    """Return the epoch seconds of the local midnight that began the day of ``now``."""
    local = dt.datetime.fromtimestamp(now).astimezone()
    return local.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()


class BudgetMeter:
    """Checks one session's budgets before each request (see module docstring).

    ``caps()`` returns the caps in force per level (None: no cap); ``warn(text)`` shows a notice."""

    def __init__(
        self,
        *,
        store: Store,
        config: Callable[[], RuntimeConfig],
        session_id: str,
        project_dir: str,
        caps: Callable[[], Mapping[str, Budget | None]],
        warn: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        group: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.store = store
        self.config = config
        self.session_id = session_id
        self.project_dir = project_dir
        self.caps = caps
        self.warn = warn
        self.clock = clock
        self.wall = wall
        self.group = group
        """Returns the id of the session's fan-out group (None: not in one)."""
        self.elapsed = 0.0
        """Seconds this process spent running the session's turns (not counting pauses)."""
        self._since: float | None = None
        self._warned: set[tuple[str, str]] = set()

    # -- wall clock -----------------------------------------------------------------------------------
    def start_clock(self) -> None:
        """A turn runs (again): count wall-clock time from now."""
        if self._since is None:
            self._since = self.clock()

    def stop_clock(self) -> None:
        """The turn ended or paused: stop counting."""
        if self._since is not None:
            self.elapsed += self.clock() - self._since
            self._since = None

    def running_seconds(self) -> float:
        """Return the wall-clock seconds counted so far."""
        extra = self.clock() - self._since if self._since is not None else 0.0
        return self.elapsed + extra

    # -- money and tokens -------------------------------------------------------------------------------
    def _usd(self, spent: Mapping[str, Usage]) -> float:
        cfg = self.config()
        total = 0.0
        for model, usage in spent.items():
            settings = cfg.model_settings(model)
            total += cost_usd(usage, settings.input_price_per_mtok, settings.output_price_per_mtok) or 0.0
        return total

    async def spent(self, level: str) -> dict[str, Usage]:
        """Return the usage counted against ``level``'s budget, per model."""
        if level == "session":
            return await self.store.usage_by_model(session_id=self.session_id)
        if level == "project_day":
            return await self.store.usage_by_model(project_dir=self.project_dir, since=day_start(self.wall()))
        group = self.group() if level == "group" else None
        return await self.store.group_usage_by_model(group) if group else {}

    def active(self) -> bool:
        """True when any level has a cap (else a request needs no estimate and no check)."""
        return any(b is not None and not b.empty for b in self.caps().values())

    async def check(self, model: str, estimate_tokens: int) -> Breach | None:
        """Return the first cap the next request (about ``estimate_tokens`` prompt tokens for
        ``model``) would cross, or None when it may be sent."""
        caps = self.caps()
        settings = self.config().model_settings(model)
        priced = settings.input_price_per_mtok is not None or settings.output_price_per_mtok is not None
        for level in LEVELS:
            budget = caps.get(level)
            if budget is None or budget.empty:
                continue
            name = LEVEL_NAMES[level]
            if budget.seconds is not None and level == "session":
                used = self.running_seconds()
                if used >= budget.seconds:
                    return self._breach(
                        level, "seconds", format_seconds(used), format_seconds(budget.seconds)
                    )
            if budget.usd is None and budget.tokens is None:
                continue
            spent = await self.spent(level)
            if budget.usd is not None and not priced:
                if (level, model) not in self._warned:
                    self._warned.add((level, model))
                    self.warn(
                        f"the {name} budget of {format_usd(budget.usd)} cannot be counted: {model} has no "
                        f"prices (set models.{model}.input_price_per_mtok and output_price_per_mtok); "
                        + (
                            f"its token cap ({format_tokens(budget.tokens)}) still applies"
                            if budget.tokens is not None
                            else "no cap applies until prices are set"
                        )
                    )
            elif budget.usd is not None:
                used_usd = self._usd(spent)
                next_usd = estimate_tokens * (settings.input_price_per_mtok or 0.0) / 1_000_000
                if used_usd + next_usd > budget.usd:
                    return self._breach(level, "usd", format_usd(used_usd), format_usd(budget.usd), next_usd)
            if budget.tokens is not None:
                used_tokens = sum(
                    u.total_tokens or u.prompt_tokens + u.completion_tokens for u in spent.values()
                )
                if used_tokens + estimate_tokens > budget.tokens:
                    return self._breach(
                        level,
                        "tokens",
                        format_tokens(used_tokens),
                        format_tokens(budget.tokens),
                        estimate_tokens,
                    )
        return None

    def _breach(
        self, level: str, kind: str, spent: str, cap: str, next_cost: float | int | None = None
    ) -> Breach:
        name = LEVEL_NAMES[level]
        reason = f"{name} budget: spent {spent} of {cap}"
        if next_cost:
            shown = (
                format_usd(float(next_cost)) if kind == "usd" else f"{format_tokens(int(next_cost))} tokens"
            )
            reason += f"; the next request (about {shown}, estimated) would cross it"
        return Breach(level, kind, spent, cap, reason)
