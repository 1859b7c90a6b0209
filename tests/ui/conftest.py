"""Fixtures for UI tests: a real Runtime against a loopback ReplayServer, and wait helpers."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from paragents.llm.replay import ReplayServer
from paragents.sessions.runtime import Runtime
from tests.patience import HANG_GUARD_S

SIZE = (160, 45)
"""Terminal size of every pilot and snapshot test."""


async def wait_until(
    pilot: Any, condition: Callable[[], bool], what: str, timeout: float = HANG_GUARD_S
) -> None:
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
        return await Runtime.create(
            project_dir=project, cli_overrides=overrides, db_path=tmp_path / "db.sqlite"
        )

    return factory
