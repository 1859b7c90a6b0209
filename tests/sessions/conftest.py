"""Session-layer fixtures: ``env``, a real Runtime on one project against a loopback ReplayServer
(tests/runtime_env.py)."""

from __future__ import annotations

from tests.runtime_env import env

__all__ = ["env"]
