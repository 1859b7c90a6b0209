"""A session whose external agent cannot continue its stored conversation (it supports neither
``session/load`` nor ``session/resume``): its prompts wait until the user starts a new agent session
(:class:`SessionWait`), and what such a prompt is told. No SDK import: the session layer uses it
without loading the ACP SDK. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable

from paragents import events as ev
from paragents.acp.launch import AcpLaunchError
from paragents.models import SessionState
from paragents.scheduler import PromptHeld

WAITING_ON = "a new agent session"
"""What such a session's title says it waits on."""


def held_note(prompt: str, *, queued: bool = True) -> str:
    """The note shown when ``prompt`` has to wait for a new agent session (in the queue, or in a turn
    that found out only when it launched the agent)."""
    shown = prompt if len(prompt) <= 80 else prompt[:79] + "…"
    where = "in the queue " if queued else ""
    return (
        f'this prompt waits {where}until a new agent session starts ("Start a new agent session" above '
        f"the prompt, or /agent new): {shown}"
    )


class SessionWait:
    """The read-only wait of one external agent's session: ``stale`` says why the agent cannot go on
    (None: it can), prompts wait for :meth:`fresh`; ``probe`` is the launch started when the session
    was reopened (it learns whether the agent can reload); ``auto_new`` (headless: ``paragents
    run``) starts a new agent session with a note instead of waiting."""

    def __init__(self, session_id: str, emit: ev.EventSink) -> None:
        self.session_id = session_id
        self.emit = emit
        self.stale: str | None = None
        """Set when the agent cannot continue the stored conversation (no ``session/load`` nor
        ``session/resume``): prompts wait until a new agent session starts (``ev.AgentSessionStale``)."""
        self.auto_new = False
        """Headless (``paragents run``): start a new agent session with a note instead of waiting."""
        self.probe: asyncio.Task[None] | None = None
        """The launch started when the session was reopened (it learns whether the agent can reload)."""
        self._fresh = asyncio.Event()

    def go_stale(self, name: str) -> None:
        """Agent ``name`` cannot reload the stored conversation: say so; prompts wait for a new session."""
        self.stale = (
            f"{name} cannot continue this conversation (it supports neither session/load nor "
            "session/resume): the transcript above is read-only for it. To go on, start a new agent "
            'session ("Start a new agent session" above the prompt, or /agent new); the agent will not '
            "know what is above."
        )
        self._fresh.clear()
        self.emit(ev.AgentSessionStale(self.session_id, self.stale))

    def fresh(self, name: str) -> None:
        """A new session of agent ``name`` began: a note marks where, a waiting prompt is sent."""
        was_stale, self.stale = self.stale, None
        if was_stale:
            self.emit(ev.AgentSessionStale(self.session_id, None))
        self.emit(
            ev.Notice(
                self.session_id,
                f"--- a new {name} session began here: the agent does not know the conversation above ---",
                "warning",
            )
        )
        self._fresh.set()

    async def before(
        self, prompt: str, start_new: Callable[[], Awaitable[None]], *, started: bool = False
    ) -> None:
        """Before a turn: when the agent cannot continue the stored conversation, the prompt waits
        until the user starts a new agent session (headless, ``auto_new``: ``start_new`` one now, with
        a note). Before the turn started (``started`` False) it goes back to its queue (PromptHeld:
        visible, editable, kept across a quit); a turn that found out only when it launched the agent
        waits in place, and a cancel meanwhile says the prompt was not sent."""
        if self.probe is not None and not self.probe.done():
            await asyncio.shield(self.probe)  # the reopen's launch says whether the agent can reload
        if self.stale is None:
            return
        sid = self.session_id
        if self.auto_new:
            with contextlib.suppress(AcpLaunchError):  # the turn's own start says why it failed
                await start_new()
            return
        self.emit(ev.Notice(sid, held_note(prompt, queued=not started), "warning"))
        if not started:
            raise PromptHeld(prompt)
        self.emit(ev.SessionStateChanged(sid, SessionState.WAITING, "", WAITING_ON))
        try:
            await self._fresh.wait()
        except asyncio.CancelledError:
            self.emit(
                ev.Notice(sid, f"cancelled: this prompt was not sent to the agent: {prompt}", "warning")
            )
            self.emit(ev.SessionStateChanged(sid, SessionState.IDLE, ""))
            raise
        self.emit(ev.SessionStateChanged(sid, SessionState.RUNNING, ""))
