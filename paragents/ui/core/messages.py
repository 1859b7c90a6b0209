"""Textual messages of the UI ("messages up"): the wrapper for core events and the panel's requests.

A core event reaches the UI only as :class:`AgentEvent`, posted by the runtime sink the app installs;
the app routes it to the panel of ``event.session_id``. Panels never call the runtime: they post
:class:`PromptSubmitted`, :class:`CommandRequested`, :class:`QueueEditRequested` or :class:`Answer`
and the app makes the call.

Every bar that answers something (an approval, a conflict, a budget or loop-guard pause, the lane
question, a predicted lane conflict, a stale agent session) posts the one :class:`Answer` message,
whose ``choice`` is one of the typed choices below; ``paragents.ui.answers.handle`` is the one place
that acts on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from textual.message import Message

from paragents.events import (
    BudgetPaused,
    ConflictAnswer,
    ConflictDetected,
    Event,
    PermissionAnswer,
    PermissionRequested,
    PredictedConflict,
    ReasoningDelta,
    TextDelta,
)
from paragents.ui.core.commands import SlashCommand


class AgentEvent(Message):
    """A core event (paragents.events) delivered to the UI thread; ``event.session_id`` names the panel.

    A streamed-text event (TextDelta / ReasoningDelta) that is still waiting in the app's queue absorbs
    the same session's next deltas of the same kind (:meth:`absorb`), so a busy UI handles one message
    per session per turn of its loop instead of one per token."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self._parts: list[str] = []
        self._event = event

    @property
    def event(self) -> Event:
        """The wrapped core event; for absorbed deltas, one delta of the joined text (``pieces`` = count)."""
        if self._parts:
            first = self._event
            assert isinstance(first, TextDelta | ReasoningDelta)
            text = first.text + "".join(self._parts)
            self._event = type(first)(first.session_id, text, pieces=first.pieces + len(self._parts))
            self._parts.clear()
        return self._event

    def absorb(self, event: Event) -> bool:
        """Join ``event`` into this message when both are deltas of the same kind and session; return
        False (nothing changed) otherwise."""
        first = self._event
        if type(event) is not type(first) or event.session_id != first.session_id:
            return False
        if not isinstance(event, TextDelta | ReasoningDelta) or event.pieces != 1:
            return False
        self._parts.append(event.text)
        return True


class DraftChanged(Message):
    """The unsent text of ``session_id``'s prompt box is now ``text`` (posted once typing pauses, and
    at once when a prompt is sent): the app keeps it in the store for next time."""

    def __init__(self, session_id: str, text: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.text = text


class PromptSubmitted(Message):
    """The user pressed Enter on a prompt (not a command) in ``session_id``'s prompt box."""

    def __init__(self, session_id: str, text: str) -> None:
        super().__init__()
        self.session_id = session_id
        """Session the prompt is for."""
        self.text = text
        """The prompt text as typed (not stripped of inner whitespace)."""


class CommandRequested(Message):
    """The user typed a slash command in ``session_id``'s prompt box (already parsed and valid)."""

    def __init__(self, session_id: str, command: SlashCommand) -> None:
        super().__init__()
        self.session_id = session_id
        """Session whose prompt box received the command (the target of /close, /rename, ...)."""
        self.command = command
        """The parsed command."""


class QueueEditRequested(Message):
    """Edit (``text`` is the new text) or remove (``text`` is None) the queued prompt ``prompt_id``."""

    def __init__(self, session_id: str, prompt_id: str, text: str | None) -> None:
        super().__init__()
        self.session_id = session_id
        """Session owning the queue."""
        self.prompt_id = prompt_id
        """Id returned by ``Runtime.submit`` / carried by QueueChanged."""
        self.text = text
        """New text, or None to remove the prompt."""


class QueueReleaseRequested(Message):
    """Send the held queued prompt ``prompt_id`` (one still queued when paragents stopped)."""

    def __init__(self, session_id: str, prompt_id: str) -> None:
        super().__init__()
        self.session_id = session_id
        self.prompt_id = prompt_id


@dataclass(frozen=True)
class ApprovalChoice:
    """The permission ask ``ask`` answered with ``answer`` (its kind, with the edited rules of
    allow_always or the note of reject_with_note): what the ask's Future is resolved with."""

    ask: PermissionRequested
    answer: PermissionAnswer


@dataclass(frozen=True)
class ConflictChoice:
    """The held call ``conflict`` answered with ``answer`` (one of its ``choices``)."""

    conflict: ConflictDetected
    answer: ConflictAnswer


BudgetAction = Literal["raise", "one_more", "stop"]


@dataclass(frozen=True)
class BudgetChoice:
    """The budget or loop-guard pause ``pause`` answered: raise the cap to ``value``, allow one more
    request (the loop guard's "go on"), or stop the turn."""

    pause: BudgetPaused
    action: BudgetAction
    value: str = ""


LaneAnswer = Literal["lane", "share", "cancel"]


@dataclass(frozen=True)
class LaneChoice:
    """The lane question (``lanes: ask``) answered for the new session ``name`` asked from panel
    ``session_id``; ``options`` are the rest of what was asked for (model, workdir, base)."""

    session_id: str
    choice: LaneAnswer
    name: str | None
    options: Mapping[str, Any] = field(default_factory=dict)


PredictionAction = Literal["sides", "adapt_a", "adapt_b", "dismiss"]


@dataclass(frozen=True)
class PredictionChoice:
    """An action on the predicted lane conflict ``prediction``: show both sides, ask lane a or b to
    adapt, or dismiss it."""

    prediction: PredictedConflict
    action: PredictionAction


@dataclass(frozen=True)
class AgentNewChoice:
    """Start a new external agent session in session ``session_id`` (its agent cannot continue)."""

    session_id: str


AnswerChoice = ApprovalChoice | ConflictChoice | BudgetChoice | LaneChoice | PredictionChoice | AgentNewChoice
"""What a bar can answer."""


class Answer(Message):
    """A bar's answer, typed by its ``choice``; the app acts on it (``paragents.ui.answers``)."""

    def __init__(self, choice: AnswerChoice) -> None:
        super().__init__()
        self.choice = choice
        """What was answered, and how."""
