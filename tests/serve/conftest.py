"""Serve fixtures: a real Runtime against the loopback replay server, the API server on 127.0.0.1:0
on its own thread, and an httpx client for it. ``clock`` is a fake clock the server reads."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

from paragents import events as ev
from paragents import paths
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.serve.auth import AuthConfig
from paragents.serve.bridge import RuntimeBridge
from paragents.serve.limits import Limits
from paragents.serve.server import ServeThread
from paragents.sessions.runtime import Runtime
from tests.patience import HANG_GUARD_S

KEY = "sk-test-0123456789abcdef0123456789abcdef"
JWT_SECRET = "jwt-secret-for-tests-0123456789abcdef"


@dataclass
class FakeClock:
    now: float = 1_800_000_000.0

    def __call__(self) -> float:
        return self.now


@dataclass
class Sink:
    """Records events; ``changed`` is set on each one (tests wait on conditions, not sleeps)."""

    events: list[ev.Event] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def __call__(self, event: ev.Event) -> None:
        self.events.append(event)
        self.changed.set()

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = HANG_GUARD_S) -> None:
        async def loop() -> None:
            while not predicate():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(loop(), timeout)


def reply(content: str = "", **kw: Any) -> ScriptedResponse:
    return ScriptedResponse.from_message(content=content, **kw)


def write_call(path: str, content: str, id: str = "call_1") -> dict[str, str]:
    return {"id": id, "name": "write_file", "arguments": json.dumps({"path": path, "content": content})}


@dataclass
class Served:
    runtime: Runtime
    replay: ReplayServer
    project: Path
    sink: Sink
    clock: FakeClock
    server: ServeThread
    client: httpx.AsyncClient

    @property
    def url(self) -> str:
        return self.server.url

    async def pending_write(self, name: str = "a", path: str = "x.txt") -> tuple[str, str]:
        """Open session ``name``, make it ask to write ``path``; return (session id, request id)."""
        view = await self.runtime.lifecycle.new_session(name)
        self.replay.add(reply(tool_calls=[write_call(path, "from the phone\n")]), session=name)
        self.replay.add(reply("written"), session=name)
        self.runtime.submit(view.id, f"write {path}")
        await self.sink.wait_for(lambda: bool(view.pending))
        return view.id, next(iter(view.pending))


def auth_config(**kw: Any) -> AuthConfig:
    base: dict[str, Any] = {
        "api_key": KEY,
        "jwt_secret": JWT_SECRET,
        "jwt_issuer": "paragents-tests",
        "jwt_audience": "paragents",
        "browser_secret": b"c" * 32,
        "browser_ttl": 3600.0,
    }
    base.update(kw)
    return AuthConfig(**base)


@pytest.fixture
def limits() -> Limits:
    return Limits()


@pytest.fixture
async def served(tmp_path: Path, limits: Limits) -> AsyncIterator[Served]:
    project = tmp_path / "proj"
    project.mkdir()
    clock = FakeClock()
    async with ReplayServer(models=["m"]) as replay:
        cfg = {"base_url": replay.base_url, "model": "m", "max_retries": 0}
        runtime = await Runtime.create(project, cli_overrides=cfg, db_path=paths.db_path())
        sink = Sink()
        runtime.set_sink(sink)
        bridge = RuntimeBridge(runtime, runtime.store.api_access, clock=clock)
        server = ServeThread(bridge, auth_config(), "127.0.0.1", 0, limits=limits, clock=clock)
        await asyncio.to_thread(server.start)
        async with httpx.AsyncClient(base_url=server.url, timeout=HANG_GUARD_S) as client:
            yield Served(runtime, replay, project, sink, clock, server, client)
        await server.stop_async()
        bridge.close()
        await runtime.shutdown()
