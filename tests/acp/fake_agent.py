"""A fake ACP agent written with the SDK's agent side, run as a subprocess by the tests
(``python tests/acp/fake_agent.py``). Each prompt is a script, one step per line:

- ``say TEXT``: a thought chunk, then TEXT in two message chunks, a plan, commands, a usage update
- ``run COMMAND``: an ``execute`` tool call; asks ``request_permission``; when allowed, runs COMMAND in
  a client terminal and says its output, else says "rejected"
- ``write PATH TEXT``: an ``edit`` tool call; asks permission; when allowed ``fs/write_text_file``
- ``read PATH``: ``fs/read_text_file`` and says what it read
- ``sneak PATH TEXT``: writes PATH itself (not through the client)
- ``edit PATH TEXT``: an ``edit`` tool call announced with empty arguments (they follow in an update),
  asks permission (the ask carries only the call id); when allowed writes PATH itself, as opencode
  does, and says "edited", else "rejected"
- ``pathless``: an ``edit`` tool call naming no path; asks permission; says "allowed" or "rejected"
- ``wait``: waits until ``session/cancel`` (the turn then ends with stop reason "cancelled")
- ``crash``: prints to stderr and exits with code 3
- ``/NAME ARGS`` (one of its commands): says "command: /NAME ARGS"
- ``cost AMOUNT [CURRENCY]``: a usage update with the session's cumulative cost (USD by default)
- ``tokens IN OUT``: the prompt's response reports that usage for the turn

Environment: ``FAKE_ACP_INIT_CRASH`` set: exits with code 5 during ``initialize`` after a line on
stderr; ``FAKE_ACP_LOAD`` set: supports ``session/load`` (replays "loaded" as a message chunk);
``FAKE_ACP_RESUME`` set: supports ``session/resume``; ``FAKE_ACP_LOG`` a path: each request it gets
is appended there as one line (``new_session``, ``load_session ID``, ``resume_session ID``, ``prompt
FIRST-LINE``, ``cancel``); ``FAKE_ACP_COMMANDS``: JSON list of [name, description] advertised right
after session/new; ``FAKE_ACP_MODES`` set: offers modes ask, code (current), plan (``broken``:
advertises them but answers session/set_mode with "method not found"); ``FAKE_ACP_MODELS`` set:
config options "model" (small, large; category model) and "thought" (low, high; category
thought_level).
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import uuid
from pathlib import Path
from typing import Any

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
    AvailableCommand,
    AvailableCommandsUpdate,
    Cost,
    CurrentModeUpdate,
    InitializeResponse,
    LoadSessionResponse,
    NewSessionResponse,
    PermissionOption,
    PlanEntry,
    PromptResponse,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionConfigOptionSelect,
    SessionConfigSelectOption,
    SessionMode,
    SessionModeState,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionModeResponse,
    ToolCallLocation,
    Usage,
    UsageUpdate,
)
from acp.schema import (
    AgentPlanUpdate as Plan,
)


def log(line: str) -> None:
    path = os.environ.get("FAKE_ACP_LOG")
    if path:
        with open(path, "a", encoding="utf-8") as out:
            out.write(line + "\n")


OPTIONS = [
    PermissionOption(option_id="yes", name="Allow", kind="allow_once"),
    PermissionOption(option_id="always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="no", name="Reject", kind="reject_once"),
]


class FakeAgent:
    def __init__(self) -> None:
        self.conn: Any = None
        self.cancelled: dict[str, asyncio.Event] = {}
        self.tasks: set[asyncio.Task[None]] = set()
        self.config = {"model": "small", "thought": "low"}

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        if os.environ.get("FAKE_ACP_INIT_CRASH"):
            print("fake agent: cannot start: no API key configured", file=sys.stderr, flush=True)
            os._exit(5)
        caps = AgentCapabilities(load_session=bool(os.environ.get("FAKE_ACP_LOAD")))
        if os.environ.get("FAKE_ACP_RESUME"):
            caps.session_capabilities = SessionCapabilities(resume=SessionResumeCapabilities())
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=caps)

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        log("new_session")
        sid = f"fake-{uuid.uuid4().hex[:8]}"
        if os.environ.get("FAKE_ACP_COMMANDS"):
            self.tasks.add(asyncio.create_task(self.advertise(sid)))
        modes = None
        if os.environ.get("FAKE_ACP_MODES"):
            names = [
                ("ask", "Ask", "asks before edits"),
                ("code", "Code", ""),
                ("plan", "Plan", "plans only"),
            ]
            available = [SessionMode(id=i, name=n, description=d or None) for i, n, d in names]
            modes = SessionModeState(current_mode_id="code", available_modes=available)
        options = self.options() if os.environ.get("FAKE_ACP_MODELS") else None
        return NewSessionResponse(session_id=sid, modes=modes, config_options=options)

    async def advertise(self, sid: str) -> None:
        pairs = json.loads(os.environ["FAKE_ACP_COMMANDS"])
        commands = [AvailableCommand(name=n, description=d) for n, d in pairs]
        update = AvailableCommandsUpdate(
            session_update="available_commands_update", available_commands=commands
        )
        await self.conn.session_update(sid, update)

    def options(self) -> list[Any]:
        def select(cid: str, name: str, category: str, values: list[str]) -> SessionConfigOptionSelect:
            choices = [SessionConfigSelectOption(value=v, name=v.title()) for v in values]
            return SessionConfigOptionSelect(
                id=cid,
                name=name,
                category=category,
                type="select",
                current_value=self.config[cid],
                options=choices,
            )

        return [
            select("model", "Model", "model", ["small", "large"]),
            select("thought", "Thought level", "thought_level", ["low", "high"]),
        ]

    async def set_session_mode(self, mode_id: str, session_id: str, **kwargs: Any) -> SetSessionModeResponse:
        if os.environ.get("FAKE_ACP_MODES") == "broken":
            raise RequestError.method_not_found("session/set_mode")
        update = CurrentModeUpdate(session_update="current_mode_update", current_mode_id=mode_id)
        await self.conn.session_update(session_id, update)
        return SetSessionModeResponse()

    async def set_config_option(
        self, config_id: str, session_id: str, value: str | bool, **kwargs: Any
    ) -> SetSessionConfigOptionResponse:
        if config_id not in self.config:
            raise RequestError.invalid_params({"configId": config_id})
        self.config[config_id] = str(value)
        return SetSessionConfigOptionResponse(config_options=self.options())

    async def load_session(self, cwd: str, session_id: str, **kwargs: Any) -> LoadSessionResponse:
        log(f"load_session {session_id}")
        await self.conn.session_update(session_id, update_agent_message_text("loaded"))
        return LoadSessionResponse()

    async def resume_session(self, cwd: str, session_id: str, **kwargs: Any) -> ResumeSessionResponse:
        log(f"resume_session {session_id}")
        return ResumeSessionResponse()

    async def authenticate(self, method_id: str, **kwargs: Any) -> None:
        return None

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        log("cancel")
        self.cancelled.setdefault(session_id, asyncio.Event()).set()

    async def say(self, sid: str, text: str) -> None:
        await self.conn.session_update(sid, update_agent_message_text(text))

    async def ask(self, sid: str, call_id: str) -> bool:
        from acp.schema import ToolCallUpdate

        answer = await self.conn.request_permission(
            session_id=sid, tool_call=ToolCallUpdate(tool_call_id=call_id), options=OPTIONS
        )
        outcome = answer.outcome
        return isinstance(outcome, AllowedOutcome) and outcome.option_id in ("yes", "always")

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        sid = session_id
        text = "".join(getattr(block, "text", "") for block in prompt)
        log(f"prompt {text.splitlines()[0] if text else ''}")
        usage: Usage | None = None
        for n, line in enumerate(text.splitlines()):
            verb, _, rest = line.partition(" ")
            call_id = f"call-{n}"
            if verb == "say":
                await self.conn.session_update(sid, update_agent_thought_text("thinking about it"))
                half = len(rest) // 2
                await self.say(sid, rest[:half])
                await self.say(sid, rest[half:])
                entries = [
                    PlanEntry(content="look", priority="high", status="completed"),
                    PlanEntry(content="answer", priority="medium", status="in_progress"),
                ]
                await self.conn.session_update(sid, Plan(session_update="plan", entries=entries))
                commands = [AvailableCommand(name="init", description="make AGENTS.md")]
                await self.conn.session_update(
                    sid,
                    AvailableCommandsUpdate(
                        session_update="available_commands_update", available_commands=commands
                    ),
                )
                await self.conn.session_update(
                    sid, UsageUpdate(session_update="usage_update", used=1234, size=32000)
                )
            elif verb == "run":
                await self.conn.session_update(
                    sid,
                    start_tool_call(
                        call_id, f"Run {rest}", kind="execute", status="pending", raw_input={"command": rest}
                    ),
                )
                if await self.ask(sid, call_id):
                    term = await self.conn.create_terminal(session_id=sid, command="bash", args=["-c", rest])
                    await self.conn.wait_for_terminal_exit(session_id=sid, terminal_id=term.terminal_id)
                    out = await self.conn.terminal_output(session_id=sid, terminal_id=term.terminal_id)
                    await self.conn.session_update(
                        sid, update_tool_call(call_id, status="completed", raw_output=out.output)
                    )
                    await self.say(sid, f"ran: {out.output.strip()}")
                else:
                    await self.conn.session_update(sid, update_tool_call(call_id, status="failed"))
                    await self.say(sid, "rejected")
            elif verb == "write":
                path, _, content = rest.partition(" ")
                await self.conn.session_update(
                    sid,
                    start_tool_call(
                        call_id,
                        f"Write {path}",
                        kind="edit",
                        status="pending",
                        locations=[ToolCallLocation(path=path)],
                        raw_input={"file_path": path, "content": content},
                    ),
                )
                if not await self.ask(sid, call_id):
                    await self.conn.session_update(sid, update_tool_call(call_id, status="failed"))
                    await self.say(sid, "rejected")
                    continue
                try:
                    await self.conn.write_text_file(session_id=sid, path=path, content=content + "\n")
                except Exception as exc:
                    await self.conn.session_update(sid, update_tool_call(call_id, status="failed"))
                    await self.say(sid, f"write refused: {exc}")
                else:
                    await self.conn.session_update(sid, update_tool_call(call_id, status="completed"))
                    await self.say(sid, "written")
            elif verb == "read":
                try:
                    got = await self.conn.read_text_file(session_id=sid, path=rest)
                    await self.say(sid, f"read: {got.content.strip()}")
                except Exception as exc:
                    await self.say(sid, f"read refused: {exc}")
            elif verb == "edit":
                path, _, content = rest.partition(" ")
                await self.conn.session_update(
                    sid, start_tool_call(call_id, "edit", kind="edit", status="pending")
                )
                await self.conn.session_update(
                    sid,
                    update_tool_call(
                        call_id,
                        title=f"Edit {path}",
                        locations=[ToolCallLocation(path=path)],
                        raw_input={"filePath": path, "content": content},
                    ),
                )
                if await self.ask(sid, call_id):
                    Path(path).write_text(content + "\n")
                    await self.conn.session_update(sid, update_tool_call(call_id, status="completed"))
                    await self.say(sid, "edited")
                else:
                    await self.conn.session_update(sid, update_tool_call(call_id, status="failed"))
                    await self.say(sid, "rejected")
            elif verb == "pathless":
                await self.conn.session_update(
                    sid, start_tool_call(call_id, "tidy up", kind="edit", status="pending")
                )
                allowed = await self.ask(sid, call_id)
                await self.conn.session_update(
                    sid, update_tool_call(call_id, status="completed" if allowed else "failed")
                )
                await self.say(sid, "allowed" if allowed else "rejected")
            elif verb == "sneak":
                path, _, content = rest.partition(" ")
                Path(path).write_text(content + "\n")
                await self.say(sid, "sneaked")
            elif verb == "wait":
                await self.say(sid, "waiting")
                await self.cancelled.setdefault(sid, asyncio.Event()).wait()
                return PromptResponse(stop_reason="cancelled")
            elif verb.startswith("/"):
                await self.say(sid, f"command: {line}")
            elif verb == "cost":
                amount, _, currency = rest.partition(" ")
                cost = Cost(amount=float(amount), currency=currency or "USD")
                await self.conn.session_update(
                    sid, UsageUpdate(session_update="usage_update", used=2000, size=32000, cost=cost)
                )
            elif verb == "tokens":
                given, _, taken = rest.partition(" ")
                total = int(given) + int(taken)
                usage = Usage(input_tokens=int(given), output_tokens=int(taken), total_tokens=total)
            elif verb == "crash":
                print("fake agent: segmentation fault in the model", file=sys.stderr, flush=True)
                os._exit(3)
        return PromptResponse(stop_reason="end_turn", usage=usage)


if __name__ == "__main__":
    unstable = bool(os.environ.get("FAKE_ACP_RESUME"))  # the SDK routes session/resume only then
    asyncio.run(run_agent(FakeAgent(), use_unstable_protocol=unstable))  # type: ignore[arg-type]
