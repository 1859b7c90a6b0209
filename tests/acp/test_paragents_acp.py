"""``paragents acp``: paragents as an ACP agent on stdio, driven by the SDK's client side (initialize,
new session, prompt, a permission round trip), with a scripted model on the loopback replay server."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path
from typing import Any

from acp import (
    PROTOCOL_VERSION,
    embedded_text_resource,
    resource_block,
    resource_link_block,
    spawn_agent_process,
    text_block,
)
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
        assert call.tool_call_id.startswith("call_1") and call.kind == "edit"
        assert options == ["allow_once", "allow_always", "reject_once"]
        started = [u for u in client.updates if isinstance(u, ToolCallStart)]
        assert [(u.tool_call_id, u.kind) for u in started] == [(call.tool_call_id, "edit")]
        said = "".join(u.content.text for u in client.updates if isinstance(u, AgentMessageChunk))
        assert said == "done"


class OrderClient(RecordingClient):
    """Records every message from the agent in arrival order, with the session it names."""

    def __init__(self) -> None:
        super().__init__()
        self.log: list[tuple[str, str, str]] = []
        """(what, session id, tool call id or update kind)."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.log.append(
            ("update", session_id, getattr(update, "tool_call_id", None) or update.session_update)
        )
        await super().session_update(session_id, update)

    async def request_permission(
        self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any
    ) -> Any:
        self.log.append(("ask", session_id, tool_call.tool_call_id))
        return await super().request_permission(session_id, tool_call, options)


async def test_acp_details_ids_order_resources_and_usage(tmp_path: Path) -> None:
    """Issue 26 item 11: a model reusing ``call_1`` gives distinct toolCallIds; the call is announced
    before its permission ask; resource_link and embedded resource blocks reach the model; no
    update names a session before its session/new was answered."""
    project = tmp_path / "proj"
    project.mkdir()
    async with ReplayServer(models=["m"]) as server:
        for n in (1, 2):
            write = {"path": f"out{n}.txt", "content": f"{n}\n"}
            server.add(
                [
                    ScriptedResponse.from_message(
                        tool_calls=[{"id": "call_1", "name": "write_file", "arguments": json.dumps(write)}]
                    ),
                    ScriptedResponse.from_message(content=f"done {n}"),
                ]
            )
        env = {
            k: os.environ[k]
            for k in ("PARAGENTS_CONFIG_DIR", "PARAGENTS_STATE_DIR", "HOME", "PATH")
            if k in os.environ
        }
        client = OrderClient()
        argv = ["-c", "from paragents.cli import main; main()", "acp", "--dir", str(project)]
        argv += ["--endpoint", server.base_url, "--model", "m"]
        async with spawn_agent_process(client, sys.executable, *argv, env=env) as (conn, _proc):  # type: ignore[arg-type]
            init = await asyncio.wait_for(
                conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()),
                90,
            )
            caps = init.agent_capabilities
            assert caps is not None and caps.prompt_capabilities is not None
            assert caps.prompt_capabilities.embedded_context
            session = await conn.new_session(cwd=str(project), mcp_servers=[])
            client.log.append(("answered", session.session_id, "session/new"))
            link = resource_link_block("spec.md", "file:///tmp/spec.md")
            embedded = resource_block(embedded_text_resource("file:///tmp/notes.txt", "remember the milk"))
            for n in (1, 2):
                blocks: list[Any] = [text_block(f"write out{n}.txt"), link, embedded]
                if n == 2:
                    blocks = [text_block("again")]
                done = await asyncio.wait_for(conn.prompt(session_id=session.session_id, prompt=blocks), 90)
                assert done.stop_reason == "end_turn"
        sid = session.session_id
        answered = client.log.index(("answered", sid, "session/new"))
        assert not [e for e in client.log[:answered] if e[1] == sid]  # nothing before session/new's answer
        ids = [tool for what, _, tool in client.log if what == "ask"]
        assert len(ids) == 2 and len(set(ids)) == 2 and all(i.startswith("call_1") for i in ids)
        for tool_id in ids:  # announced (tool_call) before it is asked about
            first = next(i for i, e in enumerate(client.log) if e[2] == tool_id)
            assert client.log[first][0] == "update"
        started = [u.tool_call_id for u in client.updates if isinstance(u, ToolCallStart)]
        assert started == ids
        first_request = server.requests[0].body_json
        user = next(m for m in first_request["messages"] if m["role"] == "user")
        assert "[resource link spec.md: file:///tmp/spec.md]" in user["content"]
        assert "[resource file:///tmp/notes.txt]\nremember the milk" in user["content"]
