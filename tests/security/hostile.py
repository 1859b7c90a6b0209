"""A hostile model against the real engine: a real Runtime (store, policy, tools, real bwrap) whose
model is the loopback replay server playing the attacker's tool calls. Every ask is answered "no"
(recorded), so an attack that is asked about never runs; the tests then look for evidence on the host.

Import the ``hostile`` fixture into a test module (``from tests.security.hostile import hostile``)."""

from __future__ import annotations

import asyncio
import json
import shutil
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents import paths
from paragents.events import PermissionAnswer
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions.runtime import Runtime
from paragents.tools.sandbox import SandboxConfig, check
from tests.patience import HANG_GUARD_S

needs_bwrap = pytest.mark.skipif(
    shutil.which("bwrap") is None or not check(SandboxConfig()).active,
    reason="bwrap (Debian package bubblewrap) is not installed or cannot create a sandbox here",
)


def tool_call(name: str, args: dict[str, Any], call_id: str = "c1") -> ScriptedResponse:
    """One assistant reply calling ``name`` with ``args``."""
    return ScriptedResponse.from_message(
        tool_calls=[{"id": call_id, "name": name, "arguments": json.dumps(args)}]
    )


@dataclass
class Refuser:
    """Event sink that records every event and answers every permission ask ``reject_once``."""

    events: list[ev.Event] = field(default_factory=list)
    answer: Callable[[ev.PermissionRequested], PermissionAnswer | None] = field(
        default=lambda _req: PermissionAnswer("reject_once")
    )
    """The answer to each ask (None: leave it pending)."""
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Wait (on events, no sleeps) until ``predicate()`` holds."""

        async def loop() -> None:
            while not predicate():
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(loop(), HANG_GUARD_S)

    def __call__(self, event: ev.Event) -> None:
        self.events.append(event)
        self.changed.set()
        if isinstance(event, ev.PermissionRequested):
            reply = self.answer(event)
            if reply is not None:
                event.reply.set_result(reply)

    def of(self, kind: type, sid: str | None = None) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind) and (sid is None or e.session_id == sid)]

    def outputs(self, sid: str | None = None) -> list[str]:
        """What the tool calls told the model (their results)."""
        return [e.output for e in self.of(ev.ToolCallFinished, sid)]


@dataclass
class Hostile:
    """A replay server playing the attacker, a project directory and a way to open a Runtime on it."""

    server: ReplayServer
    project: Path
    db: Path
    sink: Refuser

    async def runtime(self, rules: dict[str, list[str]] | None = None, **overrides: Any) -> Runtime:
        cfg = {"base_url": self.server.base_url, "model": "m", "max_retries": 0, **overrides}
        rt = await Runtime.create(self.project, cli_overrides=cfg, db_path=self.db, cli_rules=rules)
        rt.set_sink(self.sink)
        return rt

    async def attack(
        self, rt: Runtime, calls: list[tuple[str, dict[str, Any]]], *, mode: str | None = None
    ) -> str:
        """Open a session (in ``mode``), let the model make ``calls`` one per reply, then stop; return
        the session id once the turn is over."""
        s = await rt.lifecycle.new_session("mallory", mode=mode)
        replies = [tool_call(name, args, f"c{i}") for i, (name, args) in enumerate(calls)]
        self.server.add([*replies, ScriptedResponse.from_message(content="done")], session="mallory")
        rt.submit(s.id, "go")
        await asyncio.wait_for(rt.wait_idle(s.id), HANG_GUARD_S)
        return s.id

    def asked(self, sid: str | None = None) -> list[ev.PermissionRequested]:
        return list(self.sink.of(ev.PermissionRequested, sid))


@pytest.fixture
async def hostile(tmp_path: Path) -> AsyncIterator[Hostile]:
    project = tmp_path / "proj"
    project.mkdir()
    async with ReplayServer(models=["m"]) as server:
        # the store where `paragents approve` and `inbox` look (this test's own state dir)
        yield Hostile(server=server, project=project, db=paths.db_path(), sink=Refuser())
