"""Session-layer fixtures, from tests/runtime_env.py: ``env`` (a real Runtime on one project against a
loopback ReplayServer) and ``server`` + ``runtime`` (a Runtime factory over one replay server)."""

from __future__ import annotations

from tests.runtime_env import env, runtime, server

__all__ = ["env", "runtime", "server"]
