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
    PromptCapabilities,
    PromptResponse,
    ToolCallUpdate,
    UsageUpdate,
)

from paragents import __version__
from paragents import events as ev
from paragents.cli.open_runtime import OpenFailed, open_runtime, project_dir_of
from paragents.sessions import SessionError, SessionsAPI

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

    def __init__(self, runtime: SessionsAPI) -> None:
        self.runtime = runtime
        self.conn: Any = None
        self._out: asyncio.Queue[Any] = asyncio.Queue()
        self._sender: asyncio.Task[None] | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._ready: set[str] = set()
        """Sessions the client knows (its ``session/new`` was answered: it has sent a request for it)."""
        self._held: dict[str, list[Any]] = {}
        """Updates of a session the client does not know yet, sent once it does."""
        self._ids: dict[tuple[str, str], str] = {}
        """(session, the model's tool-call id) -> the toolCallId the client sees (unique per session)."""
        self._announced: set[str] = set()
        """toolCallIds the client has been told about (``tool_call``)."""
        self._count = 0

    def on_connect(self, conn: Any) -> None:
        self.conn = conn
        self.runtime.set_sink(self.on_event)

    # -- requests ------------------------------------------------------------------------------------
    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=False, prompt_capabilities=PromptCapabilities(embedded_context=True)
            ),
            agent_info=Implementation(name="paragents", title="paragents", version=_version()),
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        try:
            view = await self.runtime.lifecycle.new_session(None, workdir=Path(cwd), open_panel=False)
        except SessionError as exc:
            raise RequestError.invalid_params({"error": str(exc)}) from None
        return NewSessionResponse(session_id=view.id)

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        rt = self.runtime
        self._know(session_id)
        text = "\n".join(part for block in prompt if (part := prompt_text(block)))
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
        self._know(session_id)
        await self.runtime.controls.set_mode(session_id, mode_id)

    def _know(self, session_id: str) -> None:
        """The client knows ``session_id`` now: send what was held back for it, in order."""
        if session_id in self._ready:
            return
        self._ready.add(session_id)
        for update in self._held.pop(session_id, []):
            self._queue(session_id, update)

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
            update = self._announce(sid, event.call, event.summary, "in_progress")
        elif isinstance(event, ev.ToolCallFinished):
            from acp import text_block, tool_content

            status: Literal["completed", "failed"] = "completed" if event.status == "ok" else "failed"
            if self._tool_id(sid, event.call.id, new=False) not in self._announced:
                self._queue(sid, self._announce(sid, event.call, event.call.name, "pending"))
            update = update_tool_call(
                self._tool_id(sid, event.call.id, new=False),
                status=status,
                content=[tool_content(text_block(event.output))],
            )
            self._ids.pop((sid, event.call.id), None)
        elif isinstance(event, ev.UsageUpdated):
            update = UsageUpdate(
                session_update="usage_update", used=event.context_tokens, size=event.context_window
            )
        elif isinstance(event, ev.PermissionRequested):  # announce the call first, then ask
            self._queue(sid, self._announce(sid, event.call, event.summary, "pending"))
            task = asyncio.get_running_loop().create_task(self._ask(event))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            return
        if update is not None:
            self._queue(sid, update)

    def _queue(self, sid: str, update: Any) -> None:
        if sid not in self._ready:  # e.g. usage of a session whose session/new is not answered yet
            self._held.setdefault(sid, []).append(update)
            return
        self._out.put_nowait((sid, update))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.get_running_loop().create_task(self._send())

    def _tool_id(self, sid: str, call_id: str, *, new: bool = True) -> str:
        """The toolCallId the client sees for the model's ``call_id``: unique in the session even
        when a model reuses ids (``call_1`` in every turn); the same one until the call finishes."""
        key = (sid, call_id)
        if key not in self._ids:
            if not new:
                return call_id
            self._count += 1
            self._ids[key] = f"{call_id}#{self._count}"
        return self._ids[key]

    def _announce(self, sid: str, call: Any, title: str, status: str) -> Any:
        """``tool_call`` the first time the client hears of the call, then ``tool_call_update``."""
        tool_id = self._tool_id(sid, call.id)
        if tool_id in self._announced:
            return update_tool_call(tool_id, title=title, status=status)  # type: ignore[arg-type]
        self._announced.add(tool_id)
        return start_tool_call(
            tool_id,
            title,
            kind=KINDS.get(call.name, "other"),  # type: ignore[arg-type]
            status=status,  # type: ignore[arg-type]
            raw_input=_args(call.arguments),
        )

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
            tool_call_id=self._tool_id(event.session_id, event.call.id, new=False),
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
            event.reply.set_result(ev.PermissionAnswer(answer))


def prompt_text(block: Any) -> str:
    """The text of one prompt block: text as it is; a ``resource_link`` as its name and URI; an
    embedded ``resource`` as its URI and text (binary contents by their URI only); '' otherwise."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(block.text)
    if kind == "resource_link":
        name = getattr(block, "title", None) or getattr(block, "name", "") or ""
        return f"[resource link {name}: {block.uri}]"
    if kind == "resource":
        resource = block.resource
        text = getattr(resource, "text", None)
        if text is None:
            return f"[resource {resource.uri} (binary, {getattr(resource, 'mime_type', None) or 'no type'})]"
        return f"[resource {resource.uri}]\n{text}"
    return ""


def _args(arguments: str) -> Any:
    try:
        return json.loads(arguments)
    except ValueError:
        return {"arguments": arguments}


def _version() -> str:
    return str(__version__)


async def serve(args: argparse.Namespace) -> int:
    """Run ``paragents acp``: open the Runtime of ``--dir`` and serve ACP on stdio until EOF."""
    prog = "paragents acp"
    try:
        project_dir = project_dir_of(args, prog)
        opened = await open_runtime(
            args, project_dir, prog=prog, require_config=True, require_model=True, unattended_wait=300.0
        )
    except OpenFailed as exc:
        return exc.code
    runtime = opened.api
    try:
        await run_agent(ParagentsAgent(runtime))  # type: ignore[arg-type]
    finally:
        await runtime.shutdown()
    return 0
