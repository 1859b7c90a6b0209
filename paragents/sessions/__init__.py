"""The session layer: the open sessions' state (:class:`SessionView`, written only by its
``apply(event)``), their lifecycle, notes and memory commands, and the :class:`Runtime` that composes
them behind the :class:`SessionsAPI` protocol its clients use. Nothing here imports Textual."""

from paragents.llm.recording import ACTIVE_RECORDER
from paragents.sessions.api import SessionsAPI
from paragents.sessions.runtime import Runtime, make_client
from paragents.sessions.view import SessionError, SessionView

__all__ = ["ACTIVE_RECORDER", "Runtime", "SessionError", "SessionView", "SessionsAPI", "make_client"]
