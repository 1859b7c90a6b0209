"""Domain types shared by every layer: messages, tool calls, usage and session states.

Messages are kept as plain dicts in the OpenAI chat-completions shape
(https://platform.openai.com/docs/api-reference/chat/create): ``{"role": "user"|"assistant"|
"system"|"tool", "content": str|None, "tool_calls": [...], "tool_call_id": str,
"reasoning_content": str}``; that is exactly what the store persists and what is sent to the
endpoint. The helpers here build them so every layer spells them the same way.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

Message = dict[str, Any]
"""One OpenAI-format chat message (see module docstring)."""


class SessionState(StrEnum):
    """Closed set of states a session can be in, shown in its panel title."""

    IDLE = "idle"
    """No turn running and no prompt queued."""
    QUEUED = "queued"
    """A prompt is waiting for a free slot under ``max_parallel_turns``."""
    RUNNING = "running"
    """A turn is streaming or running tools."""
    WAITING = "waiting"
    """A turn is blocked on the user (approval or conflict)."""
    BUDGET = "budget"
    """A turn is held before its next model request: a budget was reached or the loop guard tripped
    (``SessionView.budget_pause`` says which); raising the cap or "one more" resumes it."""
    PAUSED = "paused"
    """A turn is held before its next model request because the lane it works in (a container or a
    Pod) does not answer; it resumes by itself when the lane answers again (docs/remote.md)."""
    FAILED = "failed"
    """The last turn ended with an error; the session accepts new prompts."""
    INTERRUPTED = "interrupted"
    """The process stopped during the last turn (found on restart)."""
    CLOSED = "closed"
    """The session was closed; it stays in history and can be reopened."""


class TurnStatus(StrEnum):
    """How a turn ended; also the ``status`` of ``paragents run --json``."""

    COMPLETED = "completed"
    FAILED = "failed"
    CANCELLED = "cancelled"


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call requested by the model.

    ``arguments`` is the raw JSON text exactly as streamed (it may be invalid JSON when the
    stream was cut; the agent then refuses to run it)."""

    id: str
    name: str
    arguments: str

    def to_openai(self) -> dict[str, Any]:
        """Return the ``tool_calls[]`` item of an assistant message in OpenAI shape."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }

    @classmethod
    def from_openai(cls, data: dict[str, Any]) -> ToolCall:
        """Build from an OpenAI ``tool_calls[]`` item. Raises KeyError/TypeError on a wrong shape."""
        fn = data.get("function") or {}
        return cls(id=str(data["id"]), name=str(fn.get("name", "")), arguments=str(fn.get("arguments", "")))


@dataclass(frozen=True, slots=True)
class CallPreview:
    """What a tool call will do, computed before it runs (shown with a permission ask).

    - ``kind``: "diff" (an edit or an overwrite: ``text`` is a unified diff), "content" (a new file:
      ``text`` is its head), "command" (``text`` is the full command line), or "note" (only ``detail``).
    - ``detail``: one line of facts, e.g. "new file, 120 lines, 3.4 kB" or "in /work/project".
    - ``cwd``: the directory a command runs in (absolute), else "".
    - ``omitted``: lines of ``text`` left out (the preview is bounded), 0 when complete.
    - ``problem``: why the call will fail as written (e.g. old_string not found), else "".
    """

    kind: str
    text: str = ""
    detail: str = ""
    cwd: str = ""
    omitted: int = 0
    problem: str = ""


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage of one request, in tokens, as the endpoint reports it (OpenAI ``usage``)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    """The part of ``prompt_tokens`` the server read from its prompt cache
    (``prompt_tokens_details.cached_tokens``; 0 when it says nothing)."""

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            self.cached_tokens + other.cached_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        """Return ``{"prompt_tokens", "completion_tokens", "total_tokens"}`` (and ``cached_tokens``
        when not 0)."""
        out = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
        if self.cached_tokens:
            out["cached_tokens"] = self.cached_tokens
        return out


@dataclass(slots=True)
class AssembledReply:
    """What one streamed chat completion assembled into (the output of ``llm.stream``).

    - ``content``: answer text, or None when no delta carried non-empty text.
    - ``reasoning``: thinking text from ``reasoning_content`` / ``reasoning`` deltas, or None.
    - ``tool_calls``: complete or not, in index order, with raw argument text.
    - ``finish_reason``: last non-null ``finish_reason`` received, or None.
    - ``usage``: the server's usage, or None when it sent none.
    - ``complete``: True when the stream ended properly (``[DONE]`` or a finish_reason before close).
    """

    content: str | None = None
    reasoning: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    finish_reason: str | None = None
    usage: Usage | None = None
    complete: bool = False

    def to_message(self) -> Message:
        """Return the assistant message to store and send back (OpenAI shape).

        ``content`` is "" rather than None when there are no tool calls (some servers, e.g.
        llama.cpp, reject a null content); ``reasoning_content`` is included when present."""
        msg: Message = {"role": "assistant", "content": self.content if self.content is not None else ""}
        if self.reasoning:
            msg["reasoning_content"] = self.reasoning
        if self.tool_calls:
            msg["tool_calls"] = [tc.to_openai() for tc in self.tool_calls]
        return msg


def user_message(text: str) -> Message:
    """Return ``{"role": "user", "content": text}``."""
    return {"role": "user", "content": text}


def tool_message(tool_call_id: str, content: str) -> Message:
    """Return the ``role: tool`` result message answering ``tool_call_id``."""
    return {"role": "tool", "tool_call_id": tool_call_id, "content": content}


def parse_arguments(raw: str) -> dict[str, Any]:
    """Parse a tool call's raw argument text into a dict.

    An empty string means ``{}``. Raises ValueError with a message containing
    "not valid JSON" when the text does not parse, or when it is not a JSON object."""
    if raw.strip() == "":
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise ValueError(f"arguments are not valid JSON ({exc.msg} at char {exc.pos})") from exc
    if not isinstance(value, dict):
        raise ValueError(f"arguments are not valid JSON object: got {type(value).__name__}")
    return value


@dataclass
class TurnResult:
    """How a turn ended: ``status``, readable ``error`` and its ``error_kind`` (None when completed),
    ``messages`` the OpenAI messages the turn added (user first), ``usage`` summed over its requests."""

    status: TurnStatus
    error: str | None = None
    error_kind: str | None = None
    messages: list[Message] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
