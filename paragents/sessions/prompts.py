"""The prompts facet of the session layer (:class:`Prompts`): what the prompt box and the queue
strip do with a session's queued prompts and its unsent draft (``submit`` itself is session-wide:
``SessionsAPI.submit``). Nothing here imports Textual."""

from __future__ import annotations

from typing import Protocol

from paragents.sessions.core import SessionsCore
from paragents.sessions.view import SessionError


class Prompts(Protocol):
    """A session's queued prompts and draft, as clients use them (``runtime.prompts``)."""

    def edit_queued(self, sid: str, prompt_id: str, text: str) -> bool:
        """Change a queued prompt that has not started; False when it already started or is gone."""
        ...

    def remove_queued(self, sid: str, prompt_id: str) -> bool:
        """Remove a queued prompt that has not started; False when it already started or is gone."""
        ...

    def release_queued(self, sid: str, prompt_id: str | None = None) -> bool:
        """Let a held queued prompt (every held one when ``prompt_id`` is None) start in its turn."""
        ...

    def hold_new_turns(self, hold: bool) -> None:
        """While ``hold``, queued prompts do not start (a quit is being confirmed)."""
        ...

    async def save_draft(self, sid: str, text: str) -> None:
        """Keep the prompt box's unsent ``text`` for the next time the session is opened."""
        ...

    def is_running(self, sid: str) -> bool:
        """True while session ``sid`` runs a turn (its queued prompts wait behind it)."""
        ...


class PromptCommands:
    """The :class:`Prompts` facet over the shared state (the scheduler's queues, the drafts)."""

    def __init__(self, core: SessionsCore) -> None:
        self.core = core

    def edit_queued(self, sid: str, prompt_id: str, text: str) -> bool:
        """Change a queued prompt that has not started; False when it already started or is gone."""
        return self.core.scheduler.edit(sid, prompt_id, text)

    def remove_queued(self, sid: str, prompt_id: str) -> bool:
        """Remove a queued prompt that has not started; False when it already started or is gone."""
        return self.core.scheduler.remove(sid, prompt_id)

    def release_queued(self, sid: str, prompt_id: str | None = None) -> bool:
        """Let a held queued prompt (every held one when ``prompt_id`` is None) start in its turn: one
        still queued when paragents stopped, back in the queue not sent. False when none was held.
        Raises SessionError for a session another process holds."""
        core = self.core
        view = core.view(sid)
        if view.read_only:
            raise SessionError(view.read_only)
        core.turn_done[sid].clear()
        released = core.scheduler.release(sid, prompt_id)
        if not released:
            core.queue_changed(sid)  # nothing held: the wait for it is over
        return released

    def hold_new_turns(self, hold: bool) -> None:
        """While ``hold``, queued prompts do not start (running turns go on): the TUI holds them while
        it asks to confirm a quit, so what it said stays queued is not sent meanwhile."""
        self.core.holding_new_turns = hold
        if not hold:
            self.core.scheduler.pump()

    async def save_draft(self, sid: str, text: str) -> None:
        """Keep ``text`` as the session's unsent draft (it comes back into the prompt box next time)."""
        view = self.core.sessions.get(sid)
        if view is not None:
            await self.core.drafts.save(view, text)

    def is_running(self, sid: str) -> bool:
        """True while session ``sid`` runs a turn."""
        return self.core.scheduler.is_running(sid)
