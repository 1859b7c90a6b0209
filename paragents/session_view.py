"""The live state of one open session (:class:`SessionView`) and :class:`SessionError`, shared by the
runtime, the agents and every client. Nothing here imports Textual."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from paragents import events as ev
from paragents.agent import TurnResult
from paragents.models import Message, SessionState, Usage
from paragents.scheduler import QueuedPrompt


class SessionError(Exception):
    """A runtime command could not be done (bad session name, unknown session...). ``str()`` is readable."""


@dataclass
class SessionView:
    """Live state of one open session, shared by the runtime, its agent and the clients (read-only for them).

    ``messages`` is the current conversation for display (OpenAI-shaped, system prompt excluded; a
    partial reply kept after a failure carries ``"incomplete": True``). ``queue`` holds prompts not yet
    started. ``pending`` maps request ids to unanswered permission asks. Token counts are in tokens."""

    id: str
    name: str
    model: str
    mode: str
    workdir: Path
    state: SessionState = SessionState.IDLE
    usage: Usage = field(default_factory=Usage)
    context_tokens: int = 0
    context_window: int = 8192
    queue: list[QueuedPrompt] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)
    pending: dict[str, ev.PermissionRequested] = field(default_factory=dict)
    conflicts: dict[str, ev.ConflictDetected] = field(default_factory=dict)
    """Unanswered conflicts (paragents.conflicts) by conflict id, oldest first."""
    waiting_on: str | None = None
    """What a held tool call waits on (the holder session's name, or a path), else None."""
    session_rules: list[str] = field(default_factory=list)
    last_result: TurnResult | None = None
    sandbox_mode: str | None = None
    """The session's ``/sandbox`` mode (off/auto/required), or None for the config's ``sandbox.mode``."""
    sandbox_root: Path | None = None
    """The sandbox's writable root (e.g. a lane's worktree), or None for ``workdir``."""
    read_only: str | None = None
    """Set when another live process holds the session (one writer per session): why it is shown
    read-only here and how to take it over; None when this process holds it."""
