"""Nothing typed is lost by quitting (:class:`SessionDrafts`): a session's unsent draft and the prompts
still waiting in its queue are kept in the store (``drafts`` table) and come back when the session is
opened again, not sent: the draft into its prompt box, the prompts into its queue (held).

The queue is saved whenever it changes (so a crash keeps it too); the draft is saved by the client
(the TUI saves its prompt box a moment after typing stops, and at quit). Closing a session or
shutting down clears the live queue without touching the saved copy (:meth:`freeze`). When a session
is opened, its queued prompts go back into its queue, each on its own and held (they start only once
the user releases them: ``release_queued``), and its draft alone goes back into the prompt box
(``DraftRestored``). Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from paragents import events as ev
from paragents.store.records import StoreError

if TYPE_CHECKING:
    from paragents.sessions.view import SessionView
    from paragents.store.drafts import DraftsRepo

log = logging.getLogger(__name__)


class SessionDrafts:
    """Saves and restores what was typed but not sent (see the module docstring)."""

    def __init__(self, drafts: DraftsRepo, emit: ev.EventSink, requeue: Callable[[str, str], None]) -> None:
        """``requeue(session_id, text)`` puts a prompt back into the session's queue, held."""
        self.drafts = drafts
        self.emit = emit
        self.requeue = requeue
        self._pending: dict[str, list[str]] = {}
        self._frozen: set[str] = set()
        self._all_frozen = False
        self._task: asyncio.Task[None] | None = None

    def queue_changed(self, sid: str, prompts: list[str]) -> None:
        """The queue of ``sid`` is now ``prompts``: save it (coalesced; writes happen in order)."""
        if self._all_frozen or sid in self._frozen:
            return
        self._pending[sid] = prompts
        if self._task is None or self._task.done():
            self._task = asyncio.get_running_loop().create_task(self._flush())

    async def _flush(self) -> None:
        while self._pending:
            sid = next(iter(self._pending))
            prompts = self._pending.pop(sid)
            try:
                await self.drafts.save_queued(sid, prompts)
            except StoreError as exc:  # the prompts still run; only the copy for a restart is missing
                log.warning("queued prompts of %s not saved: %s", sid, exc)

    def freeze(self, sid: str | None = None) -> None:
        """Stop following the queue of ``sid`` (every session when None): it is about to be cleared by
        a close or a shutdown, and the saved copy must stay."""
        if sid is None:
            self._all_frozen = True
        else:
            self._frozen.add(sid)

    async def flushed(self) -> None:
        """Wait until every queue change seen so far is written."""
        while self._task is not None and not self._task.done():
            await asyncio.shield(self._task)

    async def save(self, view: SessionView, text: str) -> None:
        """Keep ``text`` as the draft of ``view``'s session (not for a session another process holds)."""
        if not view.read_only:
            await self.drafts.save(view.id, text)

    async def restore(self, view: SessionView) -> None:
        """Put the session's queued prompts back into its queue, each on its own and held (not sent),
        and its saved draft back into the prompt box (``DraftRestored``), alone. Nothing happens for
        a session another process holds (its draft is that process's)."""
        self._frozen.discard(view.id)
        if view.read_only:
            return
        try:
            text, queued = await self.drafts.get(view.id)
        except StoreError as exc:
            self.emit(ev.Notice(view.id, f"the unsent draft could not be read back: {exc}", "warning"))
            return
        for prompt in queued:
            self.requeue(view.id, prompt)
        if text.strip() or queued:
            self.emit(ev.DraftRestored(view.id, text if text.strip() else "", len(queued)))
        if queued:
            n = len(queued)
            self.emit(
                ev.Notice(
                    view.id,
                    f"{n} prompt{'s' if n != 1 else ''} still queued when paragents stopped "
                    f'{"are" if n != 1 else "is"} back in the queue, held (not sent): its "send" '
                    "button starts each one (edit or remove it first if needed).",
                )
            )
