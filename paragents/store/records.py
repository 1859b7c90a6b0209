"""Records returned by the store (frozen dataclasses), its error type and JSON helpers.

Rows come from the tables created in :mod:`paragents.store.migrations`. Times are unix seconds
(float), token counts are ints, messages are OpenAI chat-completions dicts (see ``paragents.models``).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from paragents.models import Message, SessionState, Usage


class StoreError(Exception):
    """A store operation was refused or failed. ``str(err)`` is one readable sentence saying what and
    what to do (e.g. a duplicate session name, an unknown session id, a value of the wrong type)."""


class HistoryChanged(StoreError):
    """A history write was refused because the session's history moved on (another process wrote to
    it) since the caller's copy was loaded: reload before writing. ``revision`` is the store's now."""

    def __init__(self, session_id: str, expected: int, revision: int) -> None:
        super().__init__(
            f"the history of session {session_id} changed in another process (revision {revision}, "
            f"this copy has {expected}); reload it before writing"
        )
        self.revision = revision


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
        import time

        since = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.started_at))
        return f"pid {self.pid} on {self.host} since {since}"


class SessionHeld(StoreError):
    """The session is held by another live process (see :class:`HolderRecord`); it can be opened
    read-only, or taken over when the user confirms."""

    def __init__(self, holder: HolderRecord, name: str | None = None) -> None:
        what = f"session {name!r}" if name else f"session {holder.session_id}"
        super().__init__(f"{what} is held by {holder.describe()} (another paragents is using it)")
        self.holder = holder


SECRET_KEYS = frozenset({"authorization", "proxy-authorization", "x-api-key", "api-key", "api_key"})
"""Dict keys (compared case-insensitively) that mark HTTP auth headers or keys: never stored."""


def _find_secret_key(value: Any) -> str | None:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            for key, sub in item.items():
                if isinstance(key, str) and key.lower() in SECRET_KEYS:
                    return key
                stack.append(sub)
        elif isinstance(item, list | tuple):
            stack.extend(item)
    return None


def to_json(value: Any, field: str) -> str:
    """Serialise ``value`` to JSON text for the column ``field`` (UTF-8, unicode kept as is).

    Raises StoreError when it cannot be serialised, or when it holds a dict key naming an auth
    header or API key (``Authorization``, ``api_key``...): the store never keeps secrets."""
    secret = _find_secret_key(value)
    if secret is not None:
        raise StoreError(
            f"{field}: refusing to store a value holding {secret!r} (auth headers and API keys are "
            "never written to the database); strip it before storing"
        )
    try:
        return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError) as exc:
        raise StoreError(f"{field}: value is not JSON-serialisable ({exc})") from exc


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

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> SessionRecord:
        """Build from a ``SELECT * FROM sessions`` row. Unknown states read as ``idle``."""
        try:
            state = SessionState(row["state"])
        except ValueError:
            state = SessionState.IDLE
        rules = json.loads(row["session_rules"] or "[]")
        return cls(
            id=row["id"],
            name=row["name"],
            project_dir=Path(row["project_dir"]),
            workdir=Path(row["workdir"]),
            model=row["model"],
            mode=row["mode"],
            state=state,
            is_open=bool(row["is_open"]),
            position=int(row["position"]),
            conversation_id=row["conversation_id"] or "",
            pid=row["pid"],
            created_at=float(row["created_at"]),
            updated_at=float(row["updated_at"]),
            usage=Usage(int(row["prompt_tokens"]), int(row["completion_tokens"]), int(row["total_tokens"])),
            last_prompt_tokens=int(row["last_prompt_tokens"]),
            session_rules=tuple(str(r) for r in rules) if isinstance(rules, list) else (),
            revision=int(row["revision"]) if "revision" in row.keys() else 0,  # noqa: SIM118
        )


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

    COLUMNS: ClassVar[str] = (
        "id, role, message_json, complete, turn_id, created_at, conversation_id, tokens, outcome"
    )
    """The ``messages`` columns :meth:`from_row` reads, in order (``SELECT {COLUMNS} FROM messages``)."""

    def for_display(self) -> Message:
        """Return the message for a transcript: a copy marked ``"incomplete": True`` when it is a
        partial reply, and carrying ``"outcome"`` when it is a tool result (never sent to a provider)."""
        msg = dict(self.message)
        if not self.complete:
            msg["incomplete"] = True
        if self.role == "tool":
            msg["outcome"] = self.outcome or "ok"
        return msg

    @classmethod
    def from_row(cls, row: Sequence[Any]) -> StoredMessage:
        """Build from a ``messages`` row selected as :data:`COLUMNS` (read by position: opening 20
        sessions of 500 messages reads 10,000 rows at startup)."""
        return cls(
            int(row[0]),
            row[1],
            json.loads(row[2]),
            bool(row[3]),
            row[4],
            float(row[5]),
            row[6],
            row[7],
            row[8],
        )


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

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> TurnRecord:
        """Build from a ``turns`` row."""
        return cls(**{k: row[k] for k in row.keys()})  # noqa: SIM118 (sqlite3.Row is not a Mapping)


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

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> ReservationRecord:
        """Build from a ``reservations`` row."""
        return cls(**{k: row[k] for k in row.keys()})  # noqa: SIM118


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """A memory note of a project (``session_id`` None) or of one session of it."""

    id: int
    project_dir: Path
    session_id: str | None
    text: str
    author: str
    created_at: float

    @classmethod
    def from_row(cls, row: sqlite3.Row) -> NoteRecord:
        """Build from a ``notes`` row."""
        data = {k: row[k] for k in row.keys()}  # noqa: SIM118
        data["project_dir"] = Path(data["project_dir"])
        return cls(**data)
