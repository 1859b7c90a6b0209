"""Fixtures for UI tests: a real Runtime against a loopback ReplayServer, and wait helpers."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from paragents.llm.replay import ReplayServer
from paragents.sessions import Runtime

SIZE = (160, 45)
"""Terminal size of every pilot and snapshot test."""


async def wait_until(pilot: Any, condition: Callable[[], bool], what: str, timeout: float = 60.0) -> None:
    """Let the app process messages until ``condition()`` holds; fail naming ``what`` after ``timeout`` s.

    Polls between message-queue drains (pilot.pause) with a short event-loop yield; it is a bounded
    wait on a condition, not a fixed sleep. The bound is a hang guard, not a speed limit: a loaded
    machine (``pytest --load 2``) can take several times longer than an idle one."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await pilot.pause()
        await asyncio.sleep(0.005)


@dataclass
class _Decision:
    decision: str
    reason: str
    rule: str | None = None
    scope: str | None = None
    suggested_rules: tuple[str, ...] = ()


class StubPolicy:
    """Stand-in for paragents.permissions.Policy while it is being written: asks for file writes and
    commands (like the real default mode), allows reads."""

    default_mode = "default"

    def __init__(self) -> None:
        self.remembered: list[str] = []

    def decide(self, tool: str, args: dict[str, Any], **_: Any) -> _Decision:
        if tool in ("write_file", "edit_file", "run_command", "Edit", "Bash"):
            path = args.get("path") or args.get("command") or ""
            return _Decision("ask", "no rule allows it (default: ask)", suggested_rules=(f"Edit({path})",))
        return _Decision("allow", "reads are allowed")

    def remember_always(self, rules: list[str]) -> None:
        self.remembered.extend(rules)

    def read_deny_patterns(self, cwd: Path) -> tuple[tuple[str, str], ...]:
        return ()


async def _runtime_with_stub_policy(project: Path, overrides: dict[str, Any], db: Path) -> Runtime:
    from paragents.config import load_config
    from paragents.llm import ChatClient
    from paragents.store import Store

    loaded = load_config(project, overrides)
    store = await Store.open(db)
    runtime = Runtime(
        project.resolve(), loaded, store, StubPolicy(), ChatClient(loaded.config.base_url, None)
    )
    runtime.notes.extend(await store.recover_interrupted(os.getpid()))
    return runtime


@pytest.fixture
async def replay() -> AsyncIterator[ReplayServer]:
    """A started loopback ReplayServer serving model 'm'."""
    async with ReplayServer(models=["m"]) as server:
        yield server


@pytest.fixture
def make_runtime(tmp_path: Path, replay: ReplayServer) -> Callable[[], Any]:
    """Return an async factory of real Runtimes on the same project dir and db (for restart tests)."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)

    overrides = {"base_url": replay.base_url, "model": "m"}

    async def factory() -> Runtime:
        try:
            from paragents.permissions import Policy  # noqa: F401
        except ImportError:
            return await _runtime_with_stub_policy(project, overrides, tmp_path / "db.sqlite")
        return await Runtime.create(
            project_dir=project, cli_overrides=overrides, db_path=tmp_path / "db.sqlite"
        )

    return factory
