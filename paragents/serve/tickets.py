"""One-time tickets for websockets: a browser cannot send a header with a websocket, so the page asks
``POST /ws-ticket`` (with its browser token) for a ticket it puts in the websocket's path. A ticket
works once, for :data:`TICKET_TTL` seconds, and carries the credential that asked for it."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from paragents.serve.auth import Verdict, code_hash

TICKET_TTL = 60.0
"""Seconds a websocket ticket stays usable (once)."""


@dataclass
class Tickets:
    """The outstanding tickets of one server (kept hashed, in memory: a restart forgets them)."""

    clock: Callable[[], float] = time.time
    ttl: float = TICKET_TTL
    _open: dict[str, tuple[float, Verdict]] = field(default_factory=dict)

    def issue(self, verdict: Verdict) -> str:
        """A new ticket standing for ``verdict`` (an authenticated request's)."""
        now = self.clock()
        for key in [k for k, (until, _) in self._open.items() if until <= now]:
            del self._open[key]
        ticket = secrets.token_urlsafe(24)
        self._open[code_hash(ticket)] = (now + self.ttl, verdict)
        return ticket

    def use(self, ticket: str) -> Verdict:
        """Consume ``ticket``: the verdict it stands for (principal ``ticket:...``), or a refusal."""
        entry = self._open.pop(code_hash(ticket), None)
        if entry is None:
            return Verdict(error="unknown or used websocket ticket: reload the page", kind="ticket")
        until, verdict = entry
        if until <= self.clock():
            return Verdict(error="websocket ticket expired: reload the page", kind="ticket")
        return Verdict(f"ticket:{verdict.principal}", kind="ticket", projects=verdict.projects)
