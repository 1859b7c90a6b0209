"""Records of a session's own tables: the session, its conversations, messages, turns, holder,
reservations, notes and compactions (frozen dataclasses; rows are read into them by the
repositories, see :mod:`paragents.store.rows`).

Rows come from the tables created in :mod:`paragents.store.migrations`. Times are unix seconds
(float), token counts are ints, messages are OpenAI chat-completions dicts (see ``paragents.models``).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from paragents.models import Message, SessionState, Usage


@dataclass(frozen=True, slots=True)
class HolderRecord:
    """The live writer of a session (``session_holders`` row): process ``pid`` on ``host``, holding it
    since ``started_at`` and alive at ``heartbeat`` (unix seconds)."""

    session_id: str
    pid: int
    host: str
    started_at: float
    heartbeat: float
    proc_start: int | None = None
    """When the holder's process started (``/proc/PID/stat`` clock ticks; None: not known), so a
    reused pid is not taken for the holder."""

    def describe(self) -> str:
        """Return "pid N on HOST since HH:MM" for messages."""
        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started_at))
        return f"pid {self.pid} on {self.host} since {since}"


@dataclass(frozen=True, slots=True)
class SessionRecord:
    """One row of ``sessions``.

    ``project_dir``/``workdir`` are absolute paths; ``state`` a :class:`SessionState`; ``is_open``
    says whether the TUI shows it, ``position`` orders open panels (0 first); ``conversation_id`` is
    the current conversation; ``pid`` the process running it (None when idle); ``usage`` the totals
    in tokens over all requests; ``last_prompt_tokens`` the prompt size of the last request (for
    the context %); ``session_rules`` the "allow for this session" permission rules."""

    id: str
    name: str
    project_dir: Path
    workdir: Path
    model: str
    mode: str
    state: SessionState
    is_open: bool
    position: int
    conversation_id: str
    pid: int | None
    created_at: float
    updated_at: float
    usage: Usage
    last_prompt_tokens: int
    session_rules: tuple[str, ...]
    revision: int = 0
    """Grows by one with every write of the session's history (message, compaction, new
    conversation): a copy loaded at an older revision is stale."""


@dataclass(frozen=True, slots=True)
class ConversationRecord:
    """One conversation of a session (``/clear`` starts a new one; old ones stay as history).

    ``message_count`` counts its stored messages; ``is_current`` is True for the session's current one."""

    id: str
    session_id: str
    created_at: float
    title: str | None
    message_count: int
    is_current: bool


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """One stored message: ``id`` (its order), ``role``, ``message`` (the full OpenAI dict as
    appended), ``complete`` (False for a partial reply kept after a failure), ``turn_id``,
    ``created_at`` (unix seconds), ``conversation_id``, ``tokens`` (optional size in tokens) and, for a
    tool result, its ``outcome``: ok, error, denied, cancelled, interrupted or skipped (None otherwise)."""

    id: int
    role: str
    message: Message
    complete: bool
    turn_id: int | None
    created_at: float
    conversation_id: str = ""
    tokens: int | None = None
    outcome: str | None = None

    def for_display(self) -> Message:
        """Return the message for a transcript: a copy marked ``"incomplete": True`` when it is a
        partial reply, and carrying ``"outcome"`` when it is a tool result (never sent to a provider)."""
        msg = dict(self.message)
        if not self.complete:
            msg["incomplete"] = True
        if self.role == "tool":
            msg["outcome"] = self.outcome or "ok"
        return msg


@dataclass(frozen=True, slots=True)
class TurnRecord:
    """One turn: a prompt and what the agent did about it. ``status`` is running, completed, failed,
    cancelled or interrupted; times are unix seconds; ``pid`` is the process that ran it."""

    id: int
    session_id: str
    conversation_id: str | None
    prompt: str
    status: str
    error: str | None
    started_at: float
    finished_at: float | None
    pid: int | None
    run_seconds: float | None = None
    """Wall-clock seconds the turn ran, pauses excluded (the wall-clock budgets); None: not measured."""


@dataclass(frozen=True, slots=True)
class ReservationRecord:
    """A path (or resource) reserved by a session's turn for the conflict checker.

    ``kind`` says how it is used (e.g. "write", "resource"); ``pid`` is the reserving process."""

    id: int
    session_id: str
    turn_id: int | None
    path: str
    kind: str
    reason: str | None
    pid: int | None
    created_at: float


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """A memory note of a project (``session_id`` None) or of one session of it."""

    id: int
    project_dir: Path
    session_id: str | None
    text: str
    author: str
    created_at: float


@dataclass(frozen=True, slots=True)
class CompactionRecord:
    """One row of ``compactions``: ``upto_message_id`` is the last stored message the ``summary``
    covers; ``created_at`` is in unix seconds."""

    id: int
    session_id: str
    conversation_id: str
    upto_message_id: int
    summary: str
    created_at: float
