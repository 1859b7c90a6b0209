"""Memory/compaction fixtures: a real Runtime against a loopback ReplayServer, an event collector,
and a checker of what the server received."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.compaction import SUMMARY_PROMPT
from paragents.llm.replay import ReceivedRequest, ReplayServer
from paragents.runtime import Runtime


@dataclass
class Collector:
    """Event sink recording every event; answers permission asks from ``answers`` when given."""

    events: list[ev.Event] = field(default_factory=list)
    answers: list[tuple[str, Any]] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)

    def __call__(self, event: ev.Event) -> None:
        self.events.append(event)
        self.changed.set()
        if isinstance(event, ev.PermissionRequested) and self.answers:
            event.reply.set_result(self.answers.pop(0))

    def of(self, kind: type, sid: str | None = None) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind) and (sid is None or e.session_id == sid)]

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = 10) -> None:
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


def is_summary_request(request: ReceivedRequest) -> bool:
    """True when ``request`` is a summarisation request (its system prompt is SUMMARY_PROMPT...)."""
    messages = request.body_json["messages"]
    return str(messages[0]["content"]).startswith(SUMMARY_PROMPT)


def turn_requests(server: ReplayServer) -> list[dict[str, Any]]:
    """Bodies of the chat requests that were not summarisation requests, in order."""
    return [r.body_json for r in server.requests if r.body_json and not is_summary_request(r)]


def assert_valid_request(body: dict[str, Any]) -> None:
    """Assert the OpenAI rules on ``body["messages"]``: one system message first; every assistant
    ``tool_calls`` answered by tool messages right after it (each id once); no orphan tool message;
    the request does not end with unanswered calls."""
    messages = body["messages"]
    assert messages[0]["role"] == "system"
    assert all(m["role"] != "system" for m in messages[1:])
    pending: set[str] = set()
    for m in messages[1:]:
        if m["role"] == "tool":
            assert m["tool_call_id"] in pending, f"orphan or repeated tool result {m['tool_call_id']}"
            pending.remove(m["tool_call_id"])
        else:
            assert not pending, f"calls {pending} not answered before a {m['role']} message"
            if m["role"] == "assistant":
                pending = {c["id"] for c in m.get("tool_calls") or []}
    assert not pending
