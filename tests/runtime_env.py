"""A real Runtime (store, policy, tools, client) against a loopback ReplayServer, two ways: the ``env``
fixture (one project and database; ``await env.runtime(**config)``) and the ``server`` + ``runtime``
fixtures (``await runtime(project, **config)`` -> (Runtime, Collector), every one shut down after),
with the :class:`Collector` sink. The conftest of each folder whose tests take them re-exports them."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions import Runtime
from tests.patience import HANG_GUARD_S


@dataclass
class Collector:
    """Event sink that records every event and answers permission asks with a scripted policy."""

    events: list[ev.Event] = field(default_factory=list)
    answers: list[ev.PermissionAnswer] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def __call__(self, event: ev.Event) -> None:
        self.events.append(event)
        self.changed.set()
        if isinstance(event, ev.PermissionRequested) and self.answers:
            event.reply.set_result(self.answers.pop(0))

    def of(self, kind: type, sid: str | None = None) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind) and (sid is None or e.session_id == sid)]

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = HANG_GUARD_S) -> None:
        async def loop() -> None:
            while not predicate():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(loop(), timeout)


@dataclass
class Env:
    server: ReplayServer
    project: Path
    db: Path
    sink: Collector

    async def runtime(self, **overrides: Any) -> Runtime:
        cfg = {"base_url": self.server.base_url, "model": "m", "max_retries": 0, **overrides}
        rt = await Runtime.create(self.project, cli_overrides=cfg, db_path=self.db)
        rt.set_sink(self.sink)
        return rt


@pytest.fixture
async def env(tmp_path: Path) -> AsyncIterator[Env]:
    project = tmp_path / "proj"
    project.mkdir()
    async with ReplayServer(models=["m"]) as server:
        yield Env(server=server, project=project, db=tmp_path / "state" / "paragents.db", sink=Collector())


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
