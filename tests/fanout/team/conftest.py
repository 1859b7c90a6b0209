"""Fixtures of the fan-out team tests (review, split, decisions): real git repositories in tmp dirs
(tests/lanes/conftest.py), a loopback replay server and a Runtime on them (tests/runtime_env.py)."""

from __future__ import annotations

from tests.lanes.conftest import empty_repo, git_identity, repo
from tests.runtime_env import runtime, server

__all__ = ["empty_repo", "git_identity", "repo", "runtime", "server"]
