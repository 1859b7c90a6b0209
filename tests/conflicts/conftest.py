"""Conflict fixtures: real Runtimes (store, policy, tools) against a loopback ReplayServer, with a sink
that answers conflicts from a per-session script, and gates that hold a session's next reply."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions import Runtime
from tests.runtime_env import Collector


@dataclass
class ConflictSink(Collector):
    """Records events; answers each session's conflicts with the next of ``conflict_answers[name]``
    (no answer left: the conflict stays open, as when the user has not looked yet)."""

    conflict_answers: dict[str, list[str]] = field(default_factory=dict)
    names: dict[str, str] = field(default_factory=dict)

    def __call__(self, event: ev.Event) -> None:
        super().__call__(event)
        if isinstance(event, ev.ConflictDetected):
            script = self.conflict_answers.get(self.names.get(event.session_id, ""), [])
            if script:
                event.reply.set_result(script.pop(0))  # type: ignore[arg-type]


def reply(content: str = "", **kw: Any) -> ScriptedResponse:
    """A scripted assistant reply (text and/or tool_calls)."""
    return ScriptedResponse.from_message(content=content, **kw)


def tool(name: str, args: dict[str, Any], id: str = "call_1") -> dict[str, str]:
    """A tool call in ScriptedResponse's shape."""
    return {"id": id, "name": name, "arguments": json.dumps(args)}


def gated(response: ScriptedResponse, gate: asyncio.Event) -> ScriptedResponse:
    """Hold ``response`` (its first read) until ``gate`` is set: the session's turn stays open."""

    async def before(i: int) -> None:
        if i == 0:
            await gate.wait()

    response.before_read = before
    return response


@dataclass
class ConflictEnv:
    server: ReplayServer
    project: Path
    db: Path
    sink: ConflictSink

    async def runtime(self, **overrides: Any) -> Runtime:
        """A Runtime on the project where edits and commands are allowed by a CLI rule (no asks)."""
        cfg = {"base_url": self.server.base_url, "model": "m", "max_retries": 0, **overrides}
        rt = await Runtime.create(
            self.project, cli_overrides=cfg, db_path=self.db, cli_rules={"allow": ["Edit", "Bash"]}
        )
        rt.set_sink(self.sink)
        return rt

    async def session(self, rt: Runtime, name: str) -> Any:
        view = await rt.new_session(name)
        self.sink.names[view.id] = name
        return view

    def tool_message(self, index: int) -> dict[str, Any]:
        """The last message (a tool result) of the ``index``-th request the server received."""
        return dict(self.server.requests[index].body_json["messages"][-1])


@pytest.fixture
async def cenv(tmp_path: Path) -> AsyncIterator[ConflictEnv]:
    project = tmp_path / "proj"
    project.mkdir()
    async with ReplayServer(models=["m"]) as server:
        yield ConflictEnv(server, project, tmp_path / "state" / "paragents.db", ConflictSink())
