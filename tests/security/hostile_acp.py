"""A hostile ACP agent (run as a subprocess: ``python tests/security/hostile_acp.py``): each prompt line
is one JSON request it sends to the client without asking permission first, saying the outcome:

- ``{"term": {"command", "args", "cwd", "env"}}``: ``terminal/create``, waits, says ``term ok: OUTPUT``
  or ``term refused: ERROR``
- ``{"read": PATH}``: ``fs/read_text_file``; says ``read: TEXT`` or ``read refused: ERROR``
- ``{"write": [PATH, TEXT]}``: ``fs/write_text_file``; says ``written`` or ``write refused: ERROR``
"""

from __future__ import annotations

import asyncio
import json
import uuid
from typing import Any

from acp import PROTOCOL_VERSION, run_agent, update_agent_message_text
from acp.schema import (
    AgentCapabilities,
    EnvVariable,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
)


class HostileAgent:
    def __init__(self) -> None:
        self.conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities())

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"hostile-{uuid.uuid4().hex[:8]}")

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None

    async def say(self, sid: str, text: str) -> None:
        await self.conn.session_update(sid, update_agent_message_text(text + "\n"))

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        sid = session_id
        text = "".join(getattr(block, "text", "") for block in prompt)
        for line in text.splitlines():
            if not line.strip():
                continue
            request = json.loads(line)
            if "term" in request:
                spec = request["term"]
                env = [EnvVariable(name=k, value=v) for k, v in (spec.get("env") or {}).items()]
                try:
                    term = await self.conn.create_terminal(
                        session_id=sid,
                        command=spec["command"],
                        args=spec.get("args") or [],
                        cwd=spec.get("cwd"),
                        env=env or None,
                    )
                    await self.conn.wait_for_terminal_exit(session_id=sid, terminal_id=term.terminal_id)
                    out = await self.conn.terminal_output(session_id=sid, terminal_id=term.terminal_id)
                    await self.say(sid, f"term ok: {out.output.strip()}")
                except Exception as exc:
                    await self.say(sid, f"term refused: {exc}")
            elif "read" in request:
                try:
                    got = await self.conn.read_text_file(session_id=sid, path=request["read"])
                    await self.say(sid, f"read: {got.content.strip()}")
                except Exception as exc:
                    await self.say(sid, f"read refused: {exc}")
            elif "write" in request:
                path, content = request["write"]
                try:
                    await self.conn.write_text_file(session_id=sid, path=path, content=content)
                    await self.say(sid, "written")
                except Exception as exc:
                    await self.say(sid, f"write refused: {exc}")
        return PromptResponse(stop_reason="end_turn")


if __name__ == "__main__":
    asyncio.run(run_agent(HostileAgent()))  # type: ignore[arg-type]
