"""Fixtures of the fan-out team tests (review, split, decisions, notes between sessions): a loopback
replay server, real git repositories in tmp dirs (tests/lanes/conftest.py) and a Runtime on them."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path

import pytest

from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions import Runtime
from tests.lanes.conftest import empty_repo, git_identity, repo
from tests.runtime_env import Collector

__all__ = ["empty_repo", "git_identity", "repo"]

MakeRuntime = Callable[..., Awaitable[tuple[Runtime, Collector]]]


def reply(content: str = "", **kw: object) -> ScriptedResponse:
    """One scripted assistant reply (text and/or ``tool_calls``)."""
    return ScriptedResponse.from_message(content=content, **kw)  # type: ignore[arg-type]


@pytest.fixture
async def server() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=["m"]) as replay:
        yield replay


@pytest.fixture
async def runtime(server: ReplayServer, tmp_path: Path) -> AsyncIterator[MakeRuntime]:
    """``await runtime(project, **config)`` -> (Runtime, Collector); every one is shut down after."""
    made: list[Runtime] = []

    async def make(project: Path, **overrides: object) -> tuple[Runtime, Collector]:
        cfg = {"base_url": server.base_url, "model": "m", "max_retries": 0, "sandbox": "off", **overrides}
        rt = await Runtime.create(project, cli_overrides=cfg, db_path=tmp_path / "db.sqlite")
        sink = Collector()
        rt.set_sink(sink)
        made.append(rt)
        return rt, sink

    yield make
    for rt in made:
        await rt.shutdown()
