"""Budget commands of the session layer (:class:`BudgetCommands`): the caps in force per session,
``/budget`` (set or raise a cap), and the answers to a budget or loop-guard pause.

How a pause resumes: the turn is held in place, before the request it did not send (its queue holds
behind it because a session runs one turn at a time); raising the cap re-checks and sends the held
request when it fits, "one more" sends it once without checking, "stop" ends the turn (``error_kind``
"budget" or "loop"). Nothing is re-queued and nothing is lost.

Where caps live: the session's own cap (``/budget session``) is session state (a ``BudgetChanged``
event) stored with the session, so it survives a restart; the project's per-day cap set with
``/budget project`` is stored in the store for the project (not written to ``runtime_config.json``:
no file is rewritten behind the user's back), read when a runtime opens the project, and overrides
the config's ``budgets.project_day``; ``/budget session off`` / ``/budget project off`` forget them.
Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from paragents import events as ev
from paragents.agent.budget import BudgetMeter, day_start
from paragents.agent.spend import priced
from paragents.limits import Budget, BudgetError, Spend, parse_budget
from paragents.models import SessionState
from paragents.sessions.view import SessionError, SessionView

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig
    from paragents.store.budgets import BudgetsRepo
    from paragents.store.session_events import SessionEventsRepo


class _Store(Protocol):
    """The store's tables the budgets use (``paragents.store.Store`` is one)."""

    @property
    def budgets(self) -> BudgetsRepo: ...
    @property
    def events(self) -> SessionEventsRepo: ...


class _Core(Protocol):
    """What the budget commands use of ``SessionsCore`` (a protocol, so the modules form no cycle)."""

    project_dir: Path
    sessions: dict[str, SessionView]

    @property
    def store(self) -> _Store: ...

    @property
    def config(self) -> RuntimeConfig: ...
    def emit(self, event: ev.Event) -> None: ...
    def view(self, sid: str) -> SessionView: ...
    def writable(self, sid: str) -> SessionView: ...


class Budgets(Protocol):
    """Budgets as clients use them (``runtime.budgets``): set or raise a cap, answer a budget or
    loop-guard pause, the caps in force and what was spent."""

    def set_budget(self, sid: str, level: str, text: str) -> Budget: ...
    def join_group(self, sid: str, group_id: str) -> None: ...
    def allow_one_more(self, sid: str) -> bool: ...
    def stop_paused(self, sid: str) -> bool: ...
    def answer_pause(self, pause_id: str, action: str, value: str, answered_by: str) -> PauseAnswer: ...
    def caps(self, sid: str) -> dict[str, Budget | None]: ...
    def project_cap(self) -> Budget | None: ...
    async def today(self, now: float) -> tuple[Spend, float]: ...
    async def session_seconds(self, sid: str) -> float: ...


BUDGET_LEVELS = ("session", "project", "group")
"""Levels ``/budget`` accepts ("project" is the per-day project cap)."""
PAUSE_ANSWERS = ("raise", "one_more", "stop")
"""Answers to a pause: raise the cap to a value, allow one more request (the loop guard: go on), stop."""


@dataclass(frozen=True, slots=True)
class PauseAnswer:
    """What :meth:`BudgetCommands.answer_pause` did. ``status``: accepted; already_answered (the pause
    was answered first: ``message`` names that answer); unknown (no such pause waits here: it ended,
    or it is another process's); invalid (an answer this pause does not offer)."""

    status: Literal["accepted", "already_answered", "unknown", "invalid"]
    message: str
    session_id: str = ""

    @property
    def accepted(self) -> bool:
        """True when this answer was the one taken."""
        return self.status == "accepted"


class BudgetCommands:
    """Budgets of one runtime (the :class:`Budgets` facet): the caps per session, ``/budget`` and the
    pause answers."""

    def __init__(self, core: _Core) -> None:
        self.core = core
        self.project_day: Budget | None = None
        """The per-day project cap set with ``/budget project`` (None: the config's)."""
        self.meters: dict[str, BudgetMeter] = {}
        """The budget meter of each session's agent (the running turn's seconds)."""
        self._project_loaded = False
        self._writes: set[asyncio.Task[Any]] = set()
        self.groups: dict[str, str] = {}
        """Fan-out group of each sibling session (session id -> group id), set by :meth:`join_group`."""
        self.group_caps: dict[str, Budget] = {}
        """Group caps set with ``/budget group`` (group id -> cap; else the config's ``budgets.group``)."""
        self.answered: dict[str, str] = {}
        """Pause id -> its first answer, as :meth:`answer_pause` refusals name it ("stop by user")."""

    # -- stored budgets and figures ---------------------------------------------------------------------
    async def load(self, view: SessionView) -> None:
        """When a session is loaded: read the stored project cap (once), the session's stored cap and
        its spend so far (priced per request, from the store)."""
        core = self.core
        if not self._project_loaded:
            self._project_loaded = True
            stored = await core.store.budgets.get_project_budget(core.project_dir)
            if stored and self.project_day is None:
                self.project_day = Budget.model_validate(stored)
        own = await core.store.budgets.get_session_budget(view.id)
        if own and view.budget is None:
            core.emit(ev.BudgetChanged(view.id, Budget.model_validate(own)))
        spend = priced(core.config, await core.store.budgets.spend_rows(session_id=view.id))
        core.emit(ev.UsageUpdated(view.id, view.usage, view.context_tokens, view.context_window, spend))

    async def session_seconds(self, sid: str) -> float:
        """Return the wall-clock seconds session ``sid`` ran turns (stored turns + the running one)."""
        meter = self.meters.get(sid)
        if meter is not None:
            return await meter.seconds("session")
        return await self.core.store.budgets.run_seconds(session_id=sid)

    async def today(self, now: float) -> tuple[Spend, float]:
        """Return what the project spent today (every process) and the seconds its turns ran."""
        core = self.core
        since = day_start(now)
        rows = await core.store.budgets.spend_rows(project_dir=core.project_dir, since=since)
        seconds = await core.store.budgets.run_seconds(project_dir=core.project_dir, since=since)
        seconds += sum(m.turn_seconds() for m in self.meters.values())
        return priced(core.config, rows), seconds

    def _save(self, work: Any) -> None:
        """Write a changed cap to the store in the background (a command never waits on the disk)."""
        task = asyncio.get_running_loop().create_task(work)
        self._writes.add(task)
        task.add_done_callback(self._saved)

    def _saved(self, task: asyncio.Task[Any]) -> None:
        self._writes.discard(task)
        if not task.cancelled() and task.exception() is not None:
            text = f"the budget could not be saved (it holds until exit): {task.exception()}"
            for sid in list(self.core.sessions)[:1]:
                self.core.emit(ev.Notice(sid, text, "warning"))

    async def saved(self) -> None:
        """Wait until the changed caps are written (tests, shutdown)."""
        while self._writes:
            await asyncio.gather(*list(self._writes), return_exceptions=True)

    def join_group(self, sid: str, group_id: str) -> None:
        """Count session ``sid`` in fan-out group ``group_id``'s budget (``budgets.group``)."""
        self.groups[sid] = group_id

    def caps(self, sid: str) -> dict[str, Budget | None]:
        """Return the caps in force for session ``sid`` per level."""
        cfg = self.core.config.budgets
        view = self.core.sessions.get(sid)
        own = view.budget if view is not None else None
        session = cfg.session.merged(own) if (cfg.session and own) else (own or cfg.session)
        day = self.project_day if self.project_day is not None else cfg.project_day
        gid = self.groups.get(sid)
        group = (self.group_caps.get(gid) or cfg.group) if gid is not None else None
        return {"session": session, "project_day": day, "group": group}

    def project_cap(self) -> Budget | None:
        """Return the project's per-day cap in force (``/budget project``, else the config's)."""
        return self.project_day if self.project_day is not None else self.core.config.budgets.project_day

    def meter(self, sid: str) -> BudgetMeter:
        """Return the budget meter for session ``sid``'s agent."""
        core = self.core
        meter = BudgetMeter(
            budgets=core.store.budgets,
            config=lambda: core.config,
            session_id=sid,
            project_dir=str(core.project_dir),
            caps=lambda: self.caps(sid),
            warn=lambda text: core.emit(ev.Notice(sid, text, "warning")),
            group=lambda: self.groups.get(sid),
        )
        self.meters[sid] = meter
        return meter

    def set_budget(self, sid: str, level: str, text: str) -> Budget:
        """Set (or raise) the ``level`` cap ("session", "project", "group": the session's fan-out group) to
        ``text`` (e.g. ``"5usd"``) and let a paused session re-check; return the caps now in force.
        Raises SessionError with a readable message for a bad level or budget, or for a session cap
        of a session another process holds (read-only here)."""
        view = self.core.writable(sid) if level == "session" else self.core.view(sid)
        if level not in BUDGET_LEVELS:
            raise SessionError(f"unknown budget level {level!r}: use session, project or group")
        gid = self.groups.get(sid)
        if level == "group" and gid is None:
            raise SessionError("this session is not in a fan-out group, so a group budget cannot be set")
        store = self.core.store
        if text.strip().lower() in ("off", "clear", "none"):
            if level == "session":
                self.core.emit(ev.BudgetChanged(sid, None))
                self._save(store.budgets.set_session_budget(sid, None))
            elif level == "group" and gid is not None:
                self.group_caps.pop(gid, None)
                return self.caps(sid)["group"] or Budget()
            else:
                self.project_day = None
                self._save(store.budgets.set_project_budget(self.core.project_dir, None))
            return self.caps(sid)["session" if level == "session" else "project_day"] or Budget()
        try:
            budget = parse_budget(text)
        except BudgetError as exc:
            raise SessionError(str(exc)) from None
        if level == "session":
            base = view.budget or Budget()
            own = base.merged(budget)
            self.core.emit(ev.BudgetChanged(sid, own))
            self._save(store.budgets.set_session_budget(sid, own.model_dump(exclude_none=True)))
            now = self.caps(sid)["session"]
        elif level == "group" and gid is not None:
            self.group_caps[gid] = (
                self.group_caps.get(gid) or self.core.config.budgets.group or Budget()
            ).merged(budget)
            now = self.group_caps[gid]
        else:
            self.project_day = (self.project_day or self.core.config.budgets.project_day or Budget()).merged(
                budget
            )
            self._save(
                store.budgets.set_project_budget(
                    self.core.project_dir, self.project_day.model_dump(exclude_none=True)
                )
            )
            now = self.project_day
        for other in self.core.sessions.values():  # a project cap may free every paused session
            pause = other.budget_pause
            if pause is None or pause.level == "loop":  # a raised cap does not answer the loop guard
                continue
            if (
                other.id == sid
                or level == "project"
                or (level == "group" and self.groups.get(other.id) == gid)
            ):
                self._answer(other.id, "retry")
        return now or budget

    def allow_one_more(self, sid: str) -> bool:
        """Let a paused session send its held request once; False when it is not paused."""
        return self._answer(sid, "one_more")

    def stop_paused(self, sid: str) -> bool:
        """End a paused session's turn; False when it is not paused."""
        return self._answer(sid, "stop")

    def answer_pause(self, pause_id: str, action: str, value: str, answered_by: str) -> PauseAnswer:
        """Answer the pause ``pause_id`` once with ``action`` (``raise`` to ``value``, ``one_more``,
        ``stop``; a loop-guard pause takes one_more and stop) on behalf of ``answered_by`` (``user``:
        the terminal's bar; ``web:...``: ``paragents serve``), and record who answered (a
        ``budget_answer`` event of the session). A later pause of the same session is another id, so a
        late answer never answers it. Raises SessionError for a cap that does not parse."""
        first = self.answered.get(pause_id)
        if first is not None:
            return PauseAnswer("already_answered", f"pause {pause_id} was already answered: {first}")
        found = next(
            (
                v
                for v in self.core.sessions.values()
                if v.budget_pause and v.budget_pause.pause_id == pause_id
            ),
            None,
        )
        pause = found.budget_pause if found is not None else None
        if found is None or pause is None:
            return PauseAnswer("unknown", f"no pause {pause_id} waits here")
        if pause.reply.done() or found.state is not SessionState.BUDGET:
            return PauseAnswer("already_answered", f"pause {pause_id} was already answered or ended")
        offered = ("one_more", "stop") if pause.level == "loop" else PAUSE_ANSWERS
        if action not in offered:
            return PauseAnswer("invalid", f"this pause takes {', '.join(offered)}, not {action}")
        sid = found.id
        if action == "raise":
            if not value.strip():
                raise SessionError("raise needs the new cap, e.g. 5usd or 500k")
            level = "project" if pause.level == "project_day" else pause.level
            self.set_budget(sid, level if level in BUDGET_LEVELS else "session", value)
        else:
            self._answer(sid, "one_more" if action == "one_more" else "stop")
        said = f"{action} {value}".strip() if action == "raise" else action
        self.answered[pause_id] = f"{said} by {answered_by}"
        data = {"pause_id": pause_id, "level": pause.level, "kind": pause.kind, "answer": action}
        self._save(self._record(sid, {**data, "value": value or None, "by": answered_by}))
        return PauseAnswer("accepted", f"{said} by {answered_by}", sid)

    async def _record(self, sid: str, data: dict[str, Any]) -> None:
        """Record a pause's answer (a ``budget_answer`` event); the audit trail never breaks a turn."""
        with contextlib.suppress(Exception):
            await self.core.store.events.record(sid, "budget_answer", data)

    def _answer(self, sid: str, answer: ev.BudgetAnswer) -> bool:
        view = self.core.sessions.get(sid)
        pause = view.budget_pause if view is not None else None
        if view is None or pause is None or view.state is not SessionState.BUDGET or pause.reply.done():
            return False
        pause.reply.set_result(answer)
        return True
