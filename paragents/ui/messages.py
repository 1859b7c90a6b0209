"""Textual messages of the UI ("messages up"): the wrapper for core events and the panel's requests.

A core event reaches the UI only as :class:`AgentEvent`, posted by the runtime sink the app installs;
the app routes it to the panel of ``event.session_id``. Panels never call the runtime: they post
:class:`PromptSubmitted`, :class:`CommandRequested`, :class:`QueueEditRequested` or
:class:`ApprovalAnswered` and the app makes the call.
"""

from __future__ import annotations

from textual.message import Message

from paragents.events import Event, PermissionAnswer, ReasoningDelta, TextDelta
from paragents.ui.commands import SlashCommand


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


class ApprovalAnswered(Message):
    """The user answered the permission ask ``request_id`` with ``answer`` (its kind, with the edited
    rules of allow_always or the note of reject_with_note)."""

    def __init__(self, request_id: str, answer: PermissionAnswer) -> None:
        super().__init__()
        self.request_id = request_id
        """Id of the PermissionRequested event answered."""
        self.answer = answer
        """What the ask's Future is resolved with."""
