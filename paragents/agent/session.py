"""What the agent reads of its session: :class:`SessionReader`, a read-only view.

The session's state is written only by ``paragents.sessions.view.SessionView.apply`` from the events
the agent (and the lifecycle code) emit; the agent never assigns it. Nothing here imports Textual."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from paragents.models import SessionState, Usage


class SessionReader(Protocol):
    """The session fields the agent reads (``paragents.sessions.SessionView`` has them all)."""

    @property
    def id(self) -> str: ...
    @property
    def name(self) -> str: ...
    @property
    def model(self) -> str: ...
    @property
    def mode(self) -> str: ...
    @property
    def workdir(self) -> Path: ...
    @property
    def state(self) -> SessionState: ...
    @property
    def usage(self) -> Usage: ...
    @property
    def context_tokens(self) -> int: ...
    @property
    def context_window(self) -> int: ...
    @property
    def session_rules(self) -> Sequence[str]: ...
