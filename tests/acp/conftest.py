"""ACP fixtures: a real Runtime whose agent ``fake`` is tests/acp/fake_agent.py run as a subprocess."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from paragents.sessions.runtime import Runtime
from tests.conflicts.conftest import ConflictSink
from tests.patience import HANG_GUARD_S

FAKE_AGENT = Path(__file__).with_name("fake_agent.py")


@dataclass
class AcpEnv:
    project: Path
    db: Path
    sink: ConflictSink

    async def runtime(self, rules: dict[str, list[str]] | None = None, **env: str) -> Runtime:
        """A Runtime whose agent ``fake`` runs the fake agent (``env``: its extra environment)."""
        agent = {"command": sys.executable, "args": [str(FAKE_AGENT)], "env": env}
        cfg: dict[str, Any] = {"model": "m", "max_retries": 0, "agents": {"fake": agent}}
        rt = await Runtime.create(self.project, cli_overrides=cfg, db_path=self.db, cli_rules=rules)
        rt.set_sink(self.sink)
        return rt

    async def session(self, rt: Runtime, name: str, agent: str = "fake") -> Any:
        view = await rt.lifecycle.new_agent_session(agent, name)
        self.sink.names[view.id] = name
        return view


async def idle(rt: Runtime, sid: str, timeout: float = HANG_GUARD_S) -> None:
    """Wait until the session's turn ended (the fake agent takes seconds to import the SDK on a busy
    machine, hence the generous bound)."""
    await asyncio.wait_for(rt.wait_idle(sid), timeout)


@pytest.fixture
async def aenv(tmp_path: Path) -> AsyncIterator[AcpEnv]:
    project = tmp_path / "proj"
    project.mkdir()
    yield AcpEnv(project, tmp_path / "state" / "paragents.db", ConflictSink())
