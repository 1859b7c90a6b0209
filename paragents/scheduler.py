"""Per-session FIFO prompt queues under one global cap on concurrent turns.

The scheduler owns the asyncio tasks that run turns. A prompt submitted to a session that is busy,
or while ``max_parallel`` turns already run, waits in that session's queue (visible, editable and
removable until it starts). When a slot frees, the oldest waiting prompt of a session that is not
running starts (FIFO across sessions by submit order), so one chatty session cannot starve others.
A prompt queued ``held`` (one still queued when paragents stopped, back after a restart) waits until
it is released (:meth:`Scheduler.release`); prompts queued after it may start before it.
"""

from __future__ import annotations

import asyncio
import itertools
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class QueuedPrompt:
    """A prompt waiting to start. ``id`` is a short unique id; ``seq`` the global submit order."""

    id: str
    text: str
    seq: int = 0
    resume: Any = None
    """An approval row a crash left pending: this "prompt" continues its turn (sessions/approvals.py)."""
    held: bool = False
    """Waits until released (:meth:`Scheduler.release`): queued when paragents stopped, not sent."""


class PromptHeld(Exception):
    """Raised by a turn before it started anything: its session cannot take prompts now (e.g. an
    external agent waiting for the user to start a new agent session). The prompt goes back to the
    head of its queue, where it stays (visible, editable, kept for a restart) while the session is
    held (``held``), and starts once it is not."""


def _first_free(prompts: list[QueuedPrompt]) -> QueuedPrompt | None:
    """The oldest prompt of a queue that is not held, or None."""
    return next((p for p in prompts if not p.held), None)


RunTurn = Callable[[str, QueuedPrompt], Awaitable[None]]
"""Coroutine function run for each prompt: ``run(session_id, prompt)``."""


@dataclass
class _SessionQueue:
    prompts: list[QueuedPrompt] = field(default_factory=list)
    task: asyncio.Task[None] | None = None


class Scheduler:
    """Runs turns with at most ``max_parallel`` at a time.

    ``run`` is awaited for each started prompt; ``on_change(session_id)`` is called (synchronously)
    whenever a session's queue or running state changes, so the owner can emit events. ``held(sid)``
    True keeps a session's prompts waiting (call :meth:`pump` when it is no longer held)."""

    def __init__(
        self,
        max_parallel: int,
        run: RunTurn,
        on_change: Callable[[str], None],
        held: Callable[[str], bool] | None = None,
    ) -> None:
        if max_parallel < 1:
            raise ValueError("max_parallel must be >= 1")
        self.max_parallel = max_parallel
        self._run = run
        self._on_change = on_change
        self._held = held or (lambda _sid: False)
        self._sessions: dict[str, _SessionQueue] = {}
        self._seq = itertools.count()
        self._idle = asyncio.Event()
        self._idle.set()

    # -- queries -------------------------------------------------------------------------------
    def queue(self, session_id: str) -> list[QueuedPrompt]:
        """Return a copy of the session's waiting prompts, oldest first."""
        sq = self._sessions.get(session_id)
        return list(sq.prompts) if sq else []

    def is_running(self, session_id: str) -> bool:
        """Return True while a turn of ``session_id`` runs."""
        sq = self._sessions.get(session_id)
        return bool(sq and sq.task and not sq.task.done())

    @property
    def running_count(self) -> int:
        """Number of turns running now."""
        return sum(1 for sq in self._sessions.values() if sq.task and not sq.task.done())

    def waiting_sessions(self) -> list[str]:
        """Return ids of sessions with prompts waiting for a slot, in the order they would start."""
        heads = [
            (first.seq, sid)
            for sid, sq in self._sessions.items()
            if (first := _first_free(sq.prompts)) is not None
            and not (sq.task and not sq.task.done())
            and not self._held(sid)
        ]
        return [sid for _, sid in sorted(heads)]

    # -- commands --------------------------------------------------------------------------------
    def submit(self, session_id: str, text: str, *, resume: Any = None, held: bool = False) -> QueuedPrompt:
        """Queue ``text`` for ``session_id`` and start it at once when a slot is free (a ``held`` one
        only once released); return it."""
        prompt = QueuedPrompt(uuid.uuid4().hex[:8], text, next(self._seq), resume, held)
        self._sessions.setdefault(session_id, _SessionQueue()).prompts.append(prompt)
        self._on_change(session_id)
        self._pump()
        return prompt

    def edit(self, session_id: str, prompt_id: str, text: str) -> bool:
        """Replace the text of a prompt that has not started; return False when it is gone."""
        for p in self._sessions.get(session_id, _SessionQueue()).prompts:
            if p.id == prompt_id:
                p.text = text
                self._on_change(session_id)
                return True
        return False

    def release(self, session_id: str, prompt_id: str | None = None) -> bool:
        """Let the held prompt ``prompt_id`` (every held prompt of the session when None) start in its
        turn; return False when there was none."""
        released = False
        for p in self._sessions.get(session_id, _SessionQueue()).prompts:
            if p.held and prompt_id in (None, p.id):
                p.held = False
                released = True
        if released:
            self._on_change(session_id)
            self._pump()
        return released

    def remove(self, session_id: str, prompt_id: str) -> bool:
        """Remove a prompt that has not started; return False when it is gone (already started)."""
        sq = self._sessions.get(session_id)
        if not sq:
            return False
        for i, p in enumerate(sq.prompts):
            if p.id == prompt_id:
                del sq.prompts[i]
                self._on_change(session_id)
                return True
        return False

    def cancel(self, session_id: str) -> bool:
        """Cancel the running turn of ``session_id`` (queued prompts stay); return True if one ran."""
        sq = self._sessions.get(session_id)
        if sq and sq.task and not sq.task.done():
            sq.task.cancel()
            return True
        return False

    async def drop(self, session_id: str) -> None:
        """Forget a session: clear its queue, cancel its turn and wait for the turn to end."""
        sq = self._sessions.pop(session_id, None)
        if not sq:
            return
        sq.prompts.clear()
        if sq.task and not sq.task.done():
            sq.task.cancel()
            await asyncio.gather(sq.task, return_exceptions=True)

    async def wait_idle(self) -> None:
        """Wait until no turn runs and no prompt waits."""
        await self._idle.wait()

    async def shutdown(self) -> None:
        """Cancel every turn and clear every queue; wait for the tasks to end."""
        tasks = []
        for sq in self._sessions.values():
            sq.prompts.clear()
            if sq.task and not sq.task.done():
                sq.task.cancel()
                tasks.append(sq.task)
        await asyncio.gather(*tasks, return_exceptions=True)

    def pump(self) -> None:
        """Start what may start now (e.g. a session is no longer held)."""
        self._pump()

    # -- internals -------------------------------------------------------------------------------
    def _pump(self) -> None:
        for sid in self.waiting_sessions():
            if self.running_count >= self.max_parallel:
                break
            sq = self._sessions[sid]
            prompt = sq.prompts.pop(sq.prompts.index(_first_free(sq.prompts)))  # type: ignore[arg-type]
            sq.task = asyncio.create_task(self._run_one(sid, prompt), name=f"turn-{sid}-{prompt.id}")
            self._on_change(sid)
        busy = self.running_count > 0 or any(
            _first_free(sq.prompts) is not None and not self._held(sid) for sid, sq in self._sessions.items()
        )
        if busy:
            self._idle.clear()
        else:
            self._idle.set()

    async def _run_one(self, session_id: str, prompt: QueuedPrompt) -> None:
        try:
            await self._run(session_id, prompt)
        except PromptHeld:  # back to the head of its queue, kept there while the session is held
            sq = self._sessions.get(session_id)
            if sq is not None:
                sq.prompts.insert(0, prompt)
        finally:
            sq = self._sessions.get(session_id)
            if sq and sq.task is asyncio.current_task():
                sq.task = None
            self._on_change(session_id)
            # Start the next prompts on the next loop iteration (this task is still finishing).
            asyncio.get_running_loop().call_soon(self._pump)
