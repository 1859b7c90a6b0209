"""Budgets checked before each model request (:class:`BudgetMeter`) and what a breach says (:class:`Breach`).

Before a request is sent the agent asks the meter whether it may go: for each budget level that has
a cap (the session's own, the project's for today, a fan-out group's once groups exist) the meter
adds what was spent (from the store's usage rows, so other processes count for the project) and the
estimated cost of this request (the local token estimate of its prompt times the model's input
price; completion tokens cannot be known before, so a request may overshoot a little), and says
which cap it would cross. Money needs the model's prices: when a USD cap applies to a model without
prices the meter warns once and enforces only the token cap. Money is the cost stored per request at
the prices of the model that served it (``paragents.agent.spend``). Wall-clock caps count the
running time of turns (paused time excluded), stored with each finished turn so it holds across
restarts and processes, plus the running turn's; the project/day wall-clock cap sums the project's
turns started today (a turn running in another process counts once it ends). Nothing here imports
Textual.
"""

from __future__ import annotations

import datetime as dt
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

from paragents.agent.spend import Spend, priced
from paragents.limits import Budget, format_seconds, format_tokens, format_usd

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig
    from paragents.store.budgets import BudgetsRepo

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
        budgets: BudgetsRepo,
        config: Callable[[], RuntimeConfig],
        session_id: str,
        project_dir: str,
        caps: Callable[[], Mapping[str, Budget | None]],
        warn: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        group: Callable[[], str | None] = lambda: None,
    ) -> None:
        self.budgets = budgets
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
        """Seconds the running turn ran before its last pause (the clock is stopped while paused)."""
        self._since: float | None = None
        self._warned: set[tuple[str, str]] = set()
        self.agent_cost = False
        """True for a session run by an external ACP agent, which reports its own cost: money is the
        cost it reported (stored per turn), counted by a USD cap once some is stored."""

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

    def turn_seconds(self) -> float:
        """Return the wall-clock seconds the running turn has run so far (pauses excluded)."""
        extra = self.clock() - self._since if self._since is not None else 0.0
        return self.elapsed + extra

    def take_turn_seconds(self) -> float:
        """The turn ended: return its running seconds (stored with the turn) and start again at 0."""
        self.stop_clock()
        seconds, self.elapsed = self.elapsed, 0.0
        return seconds

    async def seconds(self, level: str) -> float:
        """Return the wall-clock seconds counted against ``level``: the stored running time of the
        finished turns (every process and earlier runs) plus the running turn's."""
        if level == "session":
            stored = await self.budgets.run_seconds(session_id=self.session_id)
        elif level == "project_day":
            stored = await self.budgets.run_seconds(
                project_dir=self.project_dir, since=day_start(self.wall())
            )
        elif level == "group" and (group := self.group()):
            stored = await self.budgets.run_seconds(group_id=group)
        else:
            return 0.0
        return stored + self.turn_seconds()

    # -- money and tokens -------------------------------------------------------------------------------
    async def spent(self, level: str) -> Spend:
        """Return what was spent against ``level``'s budget (money priced per request, see spend.py);
        "group" sums every sibling of the session's fan-out group."""
        if level == "session":
            rows = await self.budgets.spend_rows(session_id=self.session_id)
        elif level == "project_day":
            rows = await self.budgets.spend_rows(project_dir=self.project_dir, since=day_start(self.wall()))
        elif level == "group" and (group := self.group()):
            rows = await self.budgets.spend_rows(group_id=group)
        else:
            return Spend()
        return priced(self.config(), rows)

    def active(self) -> bool:
        """True when any level has a cap (else a request needs no estimate and no check)."""
        return any(b is not None and not b.empty for b in self.caps().values())

    async def check(self, model: str, estimate_tokens: int) -> Breach | None:
        """Return the first cap the next request (about ``estimate_tokens`` prompt tokens for
        ``model``) would cross, or None when it may be sent."""
        caps = self.caps()
        settings = self.config().model_settings(model)
        is_priced = settings.input_price_per_mtok is not None or settings.output_price_per_mtok is not None
        for level in LEVELS:
            budget = caps.get(level)
            if budget is None or budget.empty:
                continue
            name = LEVEL_NAMES[level]
            if budget.seconds is not None:
                used = await self.seconds(level)
                if used >= budget.seconds:
                    return self._breach(
                        level, "seconds", format_seconds(used), format_seconds(budget.seconds)
                    )
            if budget.usd is None and budget.tokens is None:
                continue
            spent = await self.spent(level)
            counted = is_priced or (self.agent_cost and spent.usd is not None)
            if budget.usd is not None and not counted:
                if (level, model) not in self._warned:
                    self._warned.add((level, model))
                    self.warn(self._uncounted(name, budget, model))
            elif budget.usd is not None:
                used_usd = spent.usd or 0.0
                next_usd = estimate_tokens * (settings.input_price_per_mtok or 0.0) / 1_000_000
                if used_usd + next_usd > budget.usd:
                    return self._breach(level, "usd", format_usd(used_usd), format_usd(budget.usd), next_usd)
            if budget.tokens is not None:
                used_tokens = spent.tokens
                if used_tokens + estimate_tokens > budget.tokens:
                    return self._breach(
                        level,
                        "tokens",
                        format_tokens(used_tokens),
                        format_tokens(budget.tokens),
                        estimate_tokens,
                    )
        return None

    def _uncounted(self, name: str, budget: Budget, model: str) -> str:
        """What a USD cap that cannot be counted says (once per level and model)."""
        assert budget.usd is not None
        prices = f"models.{model}.input_price_per_mtok and output_price_per_mtok"
        tokens = (
            f"its token cap ({format_tokens(budget.tokens)}) still applies"
            if budget.tokens is not None
            else None
        )
        if self.agent_cost:  # an external agent: its reported cost counts once it reports one in USD
            return (
                f"the {name} budget of {format_usd(budget.usd)} cannot be counted yet: the agent has "
                f"reported no cost in USD and {model} has no prices ({prices}); it counts once the agent "
                f"reports a cost in USD; {tokens or 'until then no cap applies'}"
            )
        return (
            f"the {name} budget of {format_usd(budget.usd)} cannot be counted: {model} has no prices "
            f"(set {prices}); {tokens or 'no cap applies until prices are set'}"
        )

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
