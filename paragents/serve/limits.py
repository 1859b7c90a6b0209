"""Rate limits and failure lock-outs, on an injectable clock (tests use a fake one).

Nothing here ever refuses a request that presents valid credentials because of someone else's
failures (issue 28 item 2: five ``<img src=".../pair/x">`` on any web page locked 127.0.0.1 out,
valid key included, and behind ``ssh -L`` every request comes from 127.0.0.1):

- an authenticated request counts against its own credential's rate (``principal:...``);
- an unauthenticated one against its network's (:func:`network`: all of 127.0.0.0/8 is one, an
  IPv6 address counts as its /64, so rotating source addresses gains nothing);
- failed credentials are counted per credential kind (key, jwt, browser, ticket, pairing) across
  every address; past ``max_failures`` in ``failure_window`` seconds that kind is locked for
  ``lockout`` seconds: its failures are answered 429 instead of 401, while a valid credential of
  the same kind still passes (it is checked first)."""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from ipaddress import IPv6Address, ip_address, ip_network

SWEEP_AT = 10_000
"""Counters kept before idle ones are dropped (bounds memory under many source addresses)."""


@dataclass
class Limits:
    """At most ``rate`` requests per ``per`` seconds for one credential (or, unauthenticated, one
    network); ``max_failures`` failed credentials of one kind within ``failure_window`` seconds lock
    that kind's failures out for ``lockout`` seconds."""

    rate: int = 600
    per: float = 60.0
    max_failures: int = 5
    failure_window: float = 300.0
    lockout: float = 900.0


def network(addr: str) -> str:
    """The network an address counts as for unauthenticated limits: 127.0.0.0/8 for any IPv4
    loopback (also IPv4-mapped), the /64 of an IPv6 address, else the address itself."""
    try:
        ip = ip_address(addr)
    except ValueError:
        return addr
    if isinstance(ip, IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    if ip.version == 4:
        return "127.0.0.0/8" if ip.is_loopback else str(ip)
    return "::1" if ip.is_loopback else str(ip_network(f"{ip}/64", strict=False))


@dataclass
class Guard:
    """The request and failure counters of one server."""

    limits: Limits = field(default_factory=Limits)
    clock: Callable[[], float] = time.time
    _hits: dict[str, deque[float]] = field(default_factory=lambda: defaultdict(deque))
    _failures: dict[str, deque[float]] = field(default_factory=lambda: defaultdict(deque))
    _locked_until: dict[str, float] = field(default_factory=dict)

    def hit(self, bucket: str) -> float:
        """Count one request against ``bucket`` (``principal:...`` or ``net:...``); return 0 when
        allowed, else seconds until it may retry."""
        now = self.clock()
        if len(self._hits) > SWEEP_AT:
            for key in [k for k, v in self._hits.items() if not v or v[-1] <= now - self.limits.per]:
                del self._hits[key]
        hits = self._hits[bucket]
        while hits and hits[0] <= now - self.limits.per:
            hits.popleft()
        if len(hits) >= self.limits.rate:
            return max(0.1, hits[0] + self.limits.per - now)
        hits.append(now)
        return 0.0

    def locked(self, kind: str) -> float:
        """Seconds failures of credential ``kind`` stay locked out (0 when they are not)."""
        left = self._locked_until.get(kind, 0.0) - self.clock()
        if left <= 0:
            self._locked_until.pop(kind, None)
            return 0.0
        return left

    def failed(self, kind: str) -> float:
        """Count one failed credential of ``kind``; return the seconds that kind is now locked (0: not)."""
        left = self.locked(kind)
        if left:
            return left
        now = self.clock()
        fails = self._failures[kind]
        while fails and fails[0] <= now - self.limits.failure_window:
            fails.popleft()
        fails.append(now)
        if len(fails) >= self.limits.max_failures:
            self._locked_until[kind] = now + self.limits.lockout
            fails.clear()
            return self.limits.lockout
        return 0.0
