"""The reservations facet of the session layer (:class:`Reservations`): what the conflict checker holds
for a session (the overview counts it), and paths a fan-out's split reserves for a subtask's session
while it runs. Nothing here imports Textual."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Protocol

from paragents.sessions.core import SessionsCore


class Reservations(Protocol):
    """Reservations between sessions as clients use them (``runtime.reservations``)."""

    def held_count(self, sid: str) -> int: ...
    async def reserve(self, sid: str, paths: Sequence[str], reason: str) -> None: ...
    async def release(self, sid: str) -> None: ...


class ReservationCommands:
    """The :class:`Reservations` facet over the shared conflict checker (``SessionsCore.conflicts``)."""

    def __init__(self, core: SessionsCore) -> None:
        self.core = core

    def held_count(self, sid: str) -> int:
        """How many reservations session ``sid`` holds in this process."""
        return len(self.core.conflicts.held(sid))

    async def reserve(self, sid: str, paths: Sequence[str], reason: str) -> None:
        """Reserve ``paths`` (absolute) for writing by session ``sid`` until :meth:`release` (or its
        turn's end): another session's write to one waits or asks, as for a held write."""
        for path in paths:
            await self.core.store.reservations.add(sid, path, "write", reason=reason, pid=os.getpid())

    async def release(self, sid: str) -> None:
        """Release every reservation of session ``sid`` (a lane's ports stay)."""
        await self.core.conflicts.release(sid)
