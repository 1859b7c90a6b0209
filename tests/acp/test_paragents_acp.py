"""``paragents acp``: paragents as an ACP agent on stdio, driven by the SDK's client side (initialize,
new session, prompt, a permission round trip), with a scripted model on the loopback replay server."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import (
    AgentMessageChunk,
    AllowedOutcome,
    ClientCapabilities,
    RequestPermissionResponse,
    ToolCallStart,
)

from paragents.llm.replay import ReplayServer, ScriptedResponse


class RecordingClient:
    """An ACP client that records updates and allows every permission ask once."""

    def __init__(self) -> None:
        self.updates: list[Any] = []
        self.asks: list[tuple[Any, list[str]]] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        self.asks.append((tool_call, [o.option_id for o in options]))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id="allow_once"))


async def test_an_acp_client_drives_a_paragents_session_with_a_permission_round_trip(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    async with ReplayServer(models=["m"]) as server:
        write = {"path": "out.txt", "content": "from paragents\n"}
        server.add(
            [
                ScriptedResponse.from_message(
                    tool_calls=[{"id": "call_1", "name": "write_file", "arguments": json.dumps(write)}]
                ),
                ScriptedResponse.from_message(content="done"),
            ]
        )
        env = {
            k: os.environ[k]
            for k in ("PARAGENTS_CONFIG_DIR", "PARAGENTS_STATE_DIR", "HOME", "PATH")
            if k in os.environ
        }
        client = RecordingClient()
        argv = ["-c", "from paragents.cli import main; main()", "acp", "--dir", str(project)]
        argv += ["--endpoint", server.base_url, "--model", "m"]
        async with spawn_agent_process(client, sys.executable, *argv, env=env) as (conn, _proc):  # type: ignore[arg-type]
            init = await asyncio.wait_for(
                conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()),
                90,
            )
            assert init.agent_info is not None and init.agent_info.name == "paragents"
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            done = await asyncio.wait_for(
                conn.prompt(session_id=session.session_id, prompt=[text_block("write out.txt")]), 90
            )
        assert done.stop_reason == "end_turn"
        assert (project / "out.txt").read_text() == "from paragents\n"
        [(call, options)] = client.asks
        assert call.tool_call_id == "call_1" and call.kind == "edit"
        assert options == ["allow_once", "allow_always", "reject_once"]
        started = [u for u in client.updates if isinstance(u, ToolCallStart)]
        assert [(u.tool_call_id, u.kind) for u in started] == [("call_1", "edit")]
        said = "".join(u.content.text for u in client.updates if isinstance(u, AgentMessageChunk))
        assert said == "done"
