"""What clients may use of the session layer: :class:`SessionsAPI`, the protocol the TUI, ``paragents
run``, the API server, fan-out, the eval, the replay and the demo depend on. It keeps the few
session-wide members (the views, the config, the event path, submit/cancel/wait, shutdown) and hands
out everything else as typed **facets**, each a small Protocol defined next to its implementation:

=================  =====================================================  ==========================
facet              what                                                   implementation
=================  =====================================================  ==========================
``lifecycle``      new, agent, reopen, attach, close, clear, fork, takeover  sessions/lifecycle.py
``opening``        restore the sessions open last time (two phases)       sessions/opening.py
``controls``       rename, model, mode, sandbox, an agent's /mode /model  sessions/controls.py
``prompts``        queued prompts (edit, remove, release, hold), drafts   sessions/prompts.py
``lanes``          /lane, the Lanes screen, predicted conflicts, places   sessions/lane_commands.py
``budgets``        caps, /budget, answers to a budget or loop-guard pause sessions/budgets.py
``approvals``      answer and list asks, permission rules                 sessions/approvals.py
``memory``         notes, /memory, /compact, decisions                    sessions/memory.py
``mcp``            /mcp, restart, MCP prompts                             sessions/mcp.py
``settings``       the loaded config, /show-config, /reload               sessions/settings.py
``reservations``   held reservations, a split's reserved paths            sessions/reservations.py
=================  =====================================================  ==========================

The internals (store, chat client, policy, conflict checker, scheduler, agents, observers list, emit)
are not here: a client that needs the store or the chat client gets it from the composition root
(:func:`paragents.sessions.factory.open_sessions`). ``paragents.sessions.runtime.Runtime`` satisfies
this protocol (mypy checks it there). Nothing here imports Textual."""

from __future__ import annotations

from pathlib import Path
from typing import Literal, Protocol

from paragents import events as ev
from paragents.config import RuntimeConfig
from paragents.sessions.approvals import Approvals
from paragents.sessions.budgets import Budgets
from paragents.sessions.controls import Controls
from paragents.sessions.lane_commands import Lanes
from paragents.sessions.lifecycle import Lifecycle
from paragents.sessions.mcp import Mcp
from paragents.sessions.memory import Memory
from paragents.sessions.opening import Opening
from paragents.sessions.prompts import Prompts
from paragents.sessions.reservations import Reservations
from paragents.sessions.settings import Settings
from paragents.sessions.view import SessionView


class SessionsAPI(Protocol):
    """The session layer as its clients see it. Views (``sessions``) are read, never written: every
    change is a command (here or on a facet), and every outcome comes back as an event through the
    sink."""

    # -- session-wide ---------------------------------------------------------------------------------
    @property
    def project_dir(self) -> Path: ...
    @property
    def config(self) -> RuntimeConfig: ...
    @property
    def sessions(self) -> dict[str, SessionView]:
        """The open sessions by id, in panel order."""
        ...

    @property
    def notes(self) -> list[str]:
        """Readable notes of the start (recovery, sessions held elsewhere)."""
        ...

    def set_sink(self, sink: ev.EventSink) -> None:
        """Set the one callable that receives every event (events before it are replayed to it)."""
        ...

    def observe(self, sink: ev.EventSink) -> None:
        """Let ``sink`` also see every event, before the sink (recorders, fan-out, the API server)."""
        ...

    def unobserve(self, sink: ev.EventSink) -> None: ...
    def notice(self, sid: str, text: str, level: Literal["info", "warning", "error"] = "info") -> None:
        """Show ``text`` in session ``sid``'s transcript."""
        ...

    def submit(self, sid: str, text: str) -> str:
        """Queue ``text`` for the session; return the queued prompt's id."""
        ...

    def cancel(self, sid: str) -> bool: ...
    async def wait_idle(self, sid: str | None = None) -> None: ...
    async def shutdown(self) -> None: ...

    # -- facets ---------------------------------------------------------------------------------------
    @property
    def lifecycle(self) -> Lifecycle: ...
    @property
    def opening(self) -> Opening: ...
    @property
    def controls(self) -> Controls: ...
    @property
    def prompts(self) -> Prompts: ...
    @property
    def lanes(self) -> Lanes: ...
    @property
    def budgets(self) -> Budgets: ...
    @property
    def approvals(self) -> Approvals: ...
    @property
    def memory(self) -> Memory: ...
    @property
    def mcp(self) -> Mcp: ...
    @property
    def settings(self) -> Settings: ...
    @property
    def reservations(self) -> Reservations: ...
