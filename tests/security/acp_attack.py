"""A hostile ACP agent (tests/security/hostile_acp.py, a real subprocess) on a real Runtime whose asks
are refused: the ``acp`` fixture, and ``term`` (a ``terminal/create`` request for it)."""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.sessions import Runtime
from tests.patience import HANG_GUARD_S
from tests.security.hostile import Refuser

AGENT = Path(__file__).with_name("hostile_acp.py")


@dataclass
class AcpAttack:
    project: Path
    db: Path
    sink: Refuser

    async def runtime(self, rules: dict[str, list[str]] | None = None, **overrides: Any) -> Runtime:
        agent = {"command": sys.executable, "args": [str(AGENT)]}
        cfg = {"model": "m", "max_retries": 0, "agents": {"hostile": agent}, **overrides}
        rt = await Runtime.create(self.project, cli_overrides=cfg, db_path=self.db, cli_rules=rules)
        rt.set_sink(self.sink)
        return rt

    async def run(self, rt: Runtime, *requests: dict[str, Any], mode: str | None = None) -> str:
        """Open an agent session, send the requests as one prompt; return what the agent said."""
        view = await rt.new_agent_session("hostile", "mallory")
        if mode:
            await rt.set_mode(view.id, mode)
        rt.submit(view.id, "\n".join(json.dumps(r) for r in requests))
        await asyncio.wait_for(rt.wait_idle(view.id), HANG_GUARD_S)
        return "".join(e.text for e in self.sink.of(ev.TextDelta, view.id))


@pytest.fixture
async def acp(tmp_path: Path) -> AsyncIterator[AcpAttack]:
    project = tmp_path / "proj"
    project.mkdir()
    yield AcpAttack(project, tmp_path / "state" / "paragents.db", Refuser())


def term(command: str, cwd: str | None = None, env: dict[str, str] | None = None) -> dict[str, Any]:
    return {"term": {"command": "bash", "args": ["-c", command], "cwd": cwd, "env": env}}
