"""An agent's ``session/update`` stream turned into paragents' session events, so an ACP session's
panel looks like any other: message and thought chunks stream as text and reasoning, tool calls (kind,
status, locations, diffs) become tool entries, plans, available commands and modes become notes, and
``usage_update`` sets the context size. :class:`TurnLog` also keeps the turn's messages (OpenAI
shape) for the store. Updates are handled synchronously, in arrival order. Nothing here imports
Textual."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    CurrentModeUpdate,
    SessionInfoUpdate,
    ToolCallProgress,
    ToolCallStart,
    ToolCallUpdate,
    UsageUpdate,
)

from paragents import events as ev
from paragents.conflicts.reads import make_diff
from paragents.models import Message, ToolCall

FINISHED: dict[str, Literal["ok", "error", "denied", "cancelled"]] = {
    "ok": "ok",
    "error": "error",
    "denied": "denied",
}
"""A tool result's stored outcome -> the status its ToolCallFinished shows (anything else: cancelled)."""
PLAN_MARKS = {"completed": "[x]", "in_progress": "[~]", "pending": "[ ]"}


def block_text(block: Any) -> str:
    """The text of an ACP content block (text, or a resource's text / a link's URI); "" otherwise."""
    kind = getattr(block, "type", None)
    if kind == "text":
        return str(getattr(block, "text", ""))
    if kind == "resource":
        return str(getattr(getattr(block, "resource", None), "text", "") or "")
    if kind == "resource_link":
        return str(getattr(block, "uri", ""))
    return ""


@dataclass
class _Call:
    call: ToolCall
    title: str
    kind: str
    status: str = "pending"
    output: str = ""
    diff: str | None = None
    done: bool = False
    fields: dict[str, Any] = field(default_factory=dict)
    """The ACP fields the agent sent so far (kind, title, rawInput, locations, content)."""
    message: Message | None = None
    """The assistant message announcing the call (its arguments follow the agent's updates)."""


@dataclass
class TurnLog:
    """The updates of one agent session (see the module docstring): ``emit`` gets the events;
    ``messages`` collects ``(message, outcome)`` of the turn for the store (take them with
    :meth:`take`)."""

    session_id: str
    emit: ev.EventSink
    text: str = ""
    reasoning: str = ""
    messages: list[tuple[Message, str | None]] = field(default_factory=list)
    calls: dict[str, _Call] = field(default_factory=dict)
    commands: list[tuple[str, str]] = field(default_factory=list)
    mode: str | None = None
    plan: tuple[tuple[str, str], ...] = ()
    context: tuple[int, int] | None = None
    """The last ``usage_update``: (tokens used, context size)."""
    muted: bool = False
    """True while the agent replays a loaded session (paragents already shows its transcript)."""
    denied: set[str] = field(default_factory=set)
    """Tool calls whose ``request_permission`` paragents answered with a reject (policy or user): when
    the agent then reports them failed, they are stored and shown as denied, not as errors."""
    cost: tuple[float, str] | None = None
    """The last cumulative cost the agent reported for its session (``usage_update.cost``): (amount,
    currency)."""
    on_usage: Callable[[], None] | None = None
    """Called after each ``usage_update`` (the agent's spend is counted, paragents.acp.spending)."""

    def apply(self, update: Any) -> None:
        """Turn one ``session/update`` into events (unknown kinds are ignored)."""
        sid = self.session_id
        if isinstance(update, AgentMessageChunk):
            text = block_text(update.content)
            if text and not self.muted:
                self.text += text
                self.emit(ev.TextDelta(sid, text))
        elif isinstance(update, AgentThoughtChunk):
            text = block_text(update.content)
            if text and not self.muted:
                self.reasoning += text
                self.emit(ev.ReasoningDelta(sid, text))
        elif isinstance(update, ToolCallStart | ToolCallProgress):
            if not self.muted:
                self._tool(update)
        elif isinstance(update, AgentPlanUpdate):
            plan = tuple((e.status, e.content) for e in update.entries)
            if plan != self.plan and not self.muted:
                self.plan = plan
                lines = [f"{PLAN_MARKS.get(status, '[ ]')} {content}" for status, content in plan]
                self.emit(ev.Notice(sid, "plan:\n" + "\n".join(lines)))
        elif isinstance(update, AvailableCommandsUpdate):
            self.commands = [(c.name, c.description) for c in update.available_commands]
        elif isinstance(update, CurrentModeUpdate):
            if update.current_mode_id != self.mode:
                self.mode = update.current_mode_id
                self.emit(ev.Notice(sid, f"agent mode: {self.mode}"))
        elif isinstance(update, UsageUpdate):
            self.context = (update.used, update.size)
            if update.cost is not None:
                self.cost = (update.cost.amount, update.cost.currency)
            if self.on_usage is not None:
                self.on_usage()
        elif isinstance(update, SessionInfoUpdate) and update.title and not self.muted:
            self.emit(ev.Notice(sid, f"agent session: {update.title}"))

    # -- tool calls ----------------------------------------------------------------------------------
    def _tool(self, update: ToolCallStart | ToolCallProgress) -> None:
        sid = self.session_id
        state = self.calls.get(update.tool_call_id)
        if state is None:
            kind = str(update.kind or "other")
            title = update.title or kind
            call = ToolCall(update.tool_call_id, kind, _arguments(update.raw_input, update.locations))
            state = _Call(call, title, kind)
            self.calls[update.tool_call_id] = state
            message = self._flush(call)
            state.message = message
            self.emit(ev.MessageAdded(sid, message))
            self.emit(ev.ToolCallStarted(sid, call, title))
        elif update.title and update.title != state.title and not state.done:
            state.title = update.title
            self.emit(ev.ToolCallStarted(sid, state.call, state.title))
        for name in ("kind", "title", "raw_input", "locations", "content"):
            value = getattr(update, name, None)
            if value is not None:
                state.fields[name] = value
        self._update_arguments(state)
        self._content(state, update)
        if update.status is not None:
            state.status = update.status
        if state.status in ("completed", "failed") and not state.done:
            failed = "denied" if update.tool_call_id in self.denied else "error"
            self._finish(state, "ok" if state.status == "completed" else failed)

    def _update_arguments(self, state: _Call) -> None:
        """Agents often announce a call with empty arguments and send them in a later update: the
        stored call (and the message announcing it, for the store and exports) follows them."""
        arguments = _arguments(state.fields.get("raw_input"), state.fields.get("locations"))
        if arguments == state.call.arguments or arguments == "{}":
            return
        state.call = replace(state.call, arguments=arguments)
        if state.message is not None:
            state.message["tool_calls"] = [state.call.to_openai()]

    def merged(self, update: ToolCallUpdate) -> ToolCallUpdate:
        """``update`` (e.g. the tool call of a permission ask, which may carry only its id) completed
        with what the agent said of that call in its ``tool_call`` updates."""
        state = self.calls.get(update.tool_call_id)
        if state is None:
            return update
        known = {k: v for k, v in state.fields.items() if getattr(update, k, None) is None}
        return update.model_copy(update=known) if known else update

    def _content(self, state: _Call, update: ToolCallStart | ToolCallProgress) -> None:
        texts: list[str] = []
        for item in update.content or ():
            kind = getattr(item, "type", None)
            if kind == "diff":
                path = str(getattr(item, "path", ""))
                diff = make_diff(
                    getattr(item, "old_text", None) or "", item.new_text, path.rsplit("/", 1)[-1]
                )
                state.diff = (state.diff or "") + diff
            elif kind == "content":
                texts.append(block_text(item.content))
            elif kind == "terminal":
                texts.append(f"(terminal {item.terminal_id})")
        if texts:
            state.output = "\n".join(t for t in texts if t)
        elif update.raw_output is not None and not state.output:
            raw = update.raw_output
            state.output = raw if isinstance(raw, str) else json.dumps(raw, ensure_ascii=False, default=str)

    def _finish(self, state: _Call, outcome: str) -> None:
        state.done = True
        status = FINISHED.get(outcome, "cancelled")
        self.emit(ev.ToolCallFinished(self.session_id, state.call, status, state.output, state.diff))
        result: Message = {"role": "tool", "tool_call_id": state.call.id, "content": state.output}
        self.messages.append((result, outcome))

    def _flush(self, call: ToolCall | None = None) -> Message:
        """Close the text streamed so far into an assistant message (announcing ``call``)."""
        message: Message = {"role": "assistant", "content": self.text}
        if self.reasoning:
            message["reasoning_content"] = self.reasoning
        if call is not None:
            message["tool_calls"] = [call.to_openai()]
        self.text = self.reasoning = ""
        self.messages.append((message, None))
        return message

    def end(self, outcome: str = "error", note: str = "the agent reported no result") -> list[Message]:
        """End the turn: the remaining text becomes the last assistant message (returned, to show),
        and tool calls still open are closed with ``outcome`` (their output says ``note``)."""
        for state in self.calls.values():
            if not state.done:
                state.output = state.output or note
                self._finish(state, outcome)
        shown = [self._flush()] if (self.text or self.reasoning) else []
        self.calls.clear()
        return shown

    def take(self) -> list[tuple[Message, str | None]]:
        """Return and forget the messages collected so far."""
        taken, self.messages = self.messages, []
        return taken


def _arguments(raw_input: Any, locations: Any) -> str:
    """A call's arguments as JSON: the agent's ``rawInput`` (an object), with the ``locations`` it
    names when the input has no ``path``."""
    raw = raw_input if isinstance(raw_input, dict) else {}
    paths = [loc.path for loc in locations or ()]
    args = {**raw, **({"locations": paths} if paths and "path" not in raw else {})}
    return json.dumps(args, ensure_ascii=False, default=str)
