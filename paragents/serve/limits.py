"""Rate limiting and lock-out per client address, on an injectable clock (tests use a fake one)."""

from __future__ import annotations

import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field


@dataclass
class Limits:
    """At most ``rate`` requests per ``per`` seconds from one address; ``max_failures`` failed
    authentications within ``failure_window`` seconds lock the address out for ``lockout`` seconds."""

    rate: int = 600
    per: float = 60.0
    max_failures: int = 5
    failure_window: float = 300.0
    lockout: float = 900.0


@dataclass
class Guard:
    """The per-address request and failure counters of one server."""

    limits: Limits = field(default_factory=Limits)
    clock: Callable[[], float] = time.time
    _hits: dict[str, deque[float]] = field(default_factory=lambda: defaultdict(deque))
    _failures: dict[str, deque[float]] = field(default_factory=lambda: defaultdict(deque))
    _locked_until: dict[str, float] = field(default_factory=dict)

    def locked(self, addr: str) -> float:
        """Seconds ``addr`` stays locked out (0 when it is not)."""
        until = self._locked_until.get(addr, 0.0)
        left = until - self.clock()
        if left <= 0:
            self._locked_until.pop(addr, None)
            return 0.0
        return left

    def hit(self, addr: str) -> float:
        """Count one request from ``addr``; return 0 when allowed, else seconds until it may retry."""
        now = self.clock()
        hits = self._hits[addr]
        while hits and hits[0] <= now - self.limits.per:
            hits.popleft()
        if len(hits) >= self.limits.rate:
            return max(0.1, hits[0] + self.limits.per - now)
        hits.append(now)
        return 0.0

    def failed(self, addr: str) -> bool:
        """Count one failed authentication from ``addr``; True when it is now locked out."""
        now = self.clock()
        fails = self._failures[addr]
        while fails and fails[0] <= now - self.limits.failure_window:
            fails.popleft()
        fails.append(now)
        if len(fails) >= self.limits.max_failures:
            self._locked_until[addr] = now + self.limits.lockout
            fails.clear()
            return True
        return False
