"""Records of project-wide decisions and of notes between sessions (:mod:`paragents.store.decisions`)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class DecisionRecord:
    """A project-wide decision: its text, who recorded it (``user@api``, ``paragents decisions add``)
    and when (unix seconds)."""

    id: int
    project_dir: Path
    text: str
    author: str
    created_at: float


@dataclass(frozen=True, slots=True)
class SessionMessageRecord:
    """A note sent to session ``to_session`` by the session named ``from_name``; ``delivered_at`` is
    set when it was put into the receiver's context (None: waiting for its next turn)."""

    id: int
    to_session: str
    from_name: str
    text: str
    created_at: float
    delivered_at: float | None
