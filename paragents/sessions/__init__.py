"""The session layer: the open sessions' state (:class:`SessionView`, written only by its
``apply(event)``), their lifecycle, notes and memory commands, composed by the ``Runtime``
(sessions/runtime.py) behind the :class:`SessionsAPI` protocol and its facets, which clients get from
:func:`open_sessions` (sessions/factory.py). Nothing here imports Textual."""

from paragents.llm.recording import ACTIVE_RECORDER
from paragents.sessions.api import SessionsAPI
from paragents.sessions.factory import Opened, open_sessions
from paragents.sessions.settings import make_client
from paragents.sessions.view import SessionError, SessionView

__all__ = [
    "ACTIVE_RECORDER",
    "Opened",
    "SessionError",
    "SessionView",
    "SessionsAPI",
    "make_client",
    "open_sessions",
]
