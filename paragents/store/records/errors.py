"""The store's errors: every refused or failed operation raises :class:`StoreError` (or one of its
kinds below) with one readable sentence."""

from __future__ import annotations

from paragents.store.records.sessions import HolderRecord


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


class SessionHeld(StoreError):
    """The session is held by another live process (see :class:`HolderRecord`); it can be opened
    read-only, or taken over when the user confirms."""

    def __init__(self, holder: HolderRecord, name: str | None = None) -> None:
        what = f"session {name!r}" if name else f"session {holder.session_id}"
        super().__init__(f"{what} is held by {holder.describe()} (another paragents is using it)")
        self.holder = holder
