"""Agent fixtures: a real Runtime against a loopback ReplayServer and an event collector
(tests/runtime_env.py). The checkers of what the server received are tests/chat_requests.py."""

from __future__ import annotations

from tests.runtime_env import env

__all__ = ["env"]
