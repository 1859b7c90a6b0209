"""``paragents acp``: paragents itself as an ACP agent on stdio, so Zed, Toad, JetBrains and other ACP
clients drive paragents sessions with their permissions, conflict checks and lanes.

Each ACP session is a paragents session (``session/new``); ``session/prompt`` submits the prompt and
streams the session's events back as ``session/update`` (text, thoughts, tool calls, usage);
a permission ask goes to the client as ``session/request_permission`` with paragents' answers as its
options; ``session/cancel`` cancels the turn. Stdout carries only JSON-RPC."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
from pathlib import Path
from typing import Any, Literal

from acp import (
    PROTOCOL_VERSION,
    RequestError,
    run_agent,
    start_tool_call,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
)
from acp.schema import (
    AgentCapabilities,
    AllowedOutcome,
    Implementation,
    InitializeResponse,
    NewSessionResponse,
    PermissionOption,
    PromptResponse,
    ToolCallUpdate,
    UsageUpdate,
)

from paragents import events as ev
from paragents.sessions import Runtime

OPTIONS = (
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
)
"""paragents' answers offered to the client for a permission ask (option id = paragents' answer)."""
KINDS = {"read_file": "read", "list_dir": "search", "glob": "search", "grep": "search"}
KINDS |= {"write_file": "edit", "edit_file": "edit", "run_command": "execute"}


class ParagentsAgent:
    """The agent side (see the module docstring) over one Runtime."""

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self.conn: Any = None
        self._out: asyncio.Queue[Any] = asyncio.Queue()
        self._sender: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn
        self.runtime.set_sink(self.on_event)

    # -- requests ------------------------------------------------------------------------------------
    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(load_session=False),
            agent_info=Implementation(name="paragents", title="paragents", version=_version()),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        from paragents.sessions import SessionError

        try:
            view = await self.runtime.new_session(None, workdir=Path(cwd), open_panel=False)
        except SessionError as exc:
            raise RequestError.invalid_params({"error": str(exc)}) from None
        return NewSessionResponse(session_id=view.id)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        from paragents.sessions import SessionError

        rt = self.runtime
        text = "\n".join(str(getattr(block, "text", "")) for block in prompt if getattr(block, "text", None))
        try:
            rt.submit(session_id, text)
        except SessionError as exc:
            raise RequestError.invalid_params({"error": str(exc)}) from None
        await rt.wait_idle(session_id)
        await self._flush()
        result = rt.sessions[session_id].last_result
        status = getattr(getattr(result, "status", None), "value", "completed")
        if status == "cancelled":
            return PromptResponse(stop_reason="cancelled")
        if status == "failed" and result is not None:
            raise RequestError.internal_error({"error": result.error, "kind": result.error_kind})
        return PromptResponse(stop_reason="end_turn")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        self.runtime.cancel(session_id)

    async def set_session_mode(self, session_id: str, mode_id: str, **kwargs: Any) -> None:
        await self.runtime.set_mode(session_id, mode_id)

    async def ext_method(self, method: str, params: dict[str, Any]) -> dict[str, Any]:
        raise RequestError.method_not_found(method)

    async def ext_notification(self, method: str, params: dict[str, Any]) -> None:
        return None

    # -- events -> session/update ----------------------------------------------------------------------
    def on_event(self, event: ev.Event) -> None:
        """The runtime's sink: queue what the client must hear, in order."""
        sid = event.session_id
        update: Any = None
        if isinstance(event, ev.TextDelta):
            update = update_agent_message_text(event.text)
        elif isinstance(event, ev.ReasoningDelta):
            update = update_agent_thought_text(event.text)
        elif isinstance(event, ev.ToolCallStarted):
            update = start_tool_call(
                event.call.id,
                event.summary,
                kind=KINDS.get(event.call.name, "other"),  # type: ignore[arg-type]
                status="in_progress",
                raw_input=_args(event.call.arguments),
            )
        elif isinstance(event, ev.ToolCallFinished):
            from acp import text_block, tool_content

            status: Literal["completed", "failed"] = "completed" if event.status == "ok" else "failed"
            update = update_tool_call(
                event.call.id, status=status, content=[tool_content(text_block(event.output))]
            )
        elif isinstance(event, ev.UsageUpdated):
            update = UsageUpdate(
                session_update="usage_update", used=event.context_tokens, size=event.context_window
            )
        elif isinstance(event, ev.PermissionRequested):
            task = asyncio.get_running_loop().create_task(self._ask(event))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        if update is not None:
            self._out.put_nowait((sid, update))
            if self._sender is None or self._sender.done():
                self._sender = asyncio.get_running_loop().create_task(self._send())

    async def _send(self) -> None:
        while not self._out.empty():
            sid, update = self._out.get_nowait()
            with contextlib.suppress(Exception):
                await self.conn.session_update(sid, update)

    async def _flush(self) -> None:
        if self._sender is not None:
            await asyncio.shield(self._sender)

    async def _ask(self, event: ev.PermissionRequested) -> None:
        """Ask the client; its option is paragents' answer (no answer: rejected once)."""
        await self._flush()  # the tool call it is about was announced before
        call = ToolCallUpdate(
            tool_call_id=event.call.id,
            title=event.summary,
            kind=KINDS.get(event.call.name, "other"),
            status="pending",
            raw_input=_args(event.call.arguments),
        )
        answer: ev.ApprovalAnswer = "reject_once"
        try:
            got = await self.conn.request_permission(
                session_id=event.session_id, tool_call=call, options=list(OPTIONS)
            )
            outcome = got.outcome
            if isinstance(outcome, AllowedOutcome) and outcome.option_id == "allow_always":
                answer = "allow_always"
            elif isinstance(outcome, AllowedOutcome) and outcome.option_id == "allow_once":
                answer = "allow_once"
        except Exception:
            answer = "reject_once"
        if not event.reply.done():
            event.reply.set_result((answer, None))


def _args(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return {"arguments": arguments}


def _version() -> str:
    from paragents import __version__

    return str(__version__)


async def serve(args: argparse.Namespace) -> int:
    """Run ``paragents acp``: open the Runtime of ``--dir`` and serve ACP on stdio until EOF."""
    from paragents.cli.open_runtime import OpenFailed, open_runtime, project_dir_of

    prog = "paragents acp"
    try:
        project_dir = project_dir_of(args, prog)
        runtime = await open_runtime(args, project_dir, prog=prog, require_config=True, require_model=True)
    except OpenFailed as exc:
        return exc.code
    runtime.conflicts.unattended_wait = runtime.conflicts.unattended_wait or 300.0
    try:
        await run_agent(ParagentsAgent(runtime))  # type: ignore[arg-type]
    finally:
        await runtime.shutdown()
    return 0
