"""The cassette, as typed objects: what :func:`paragents.cassette.loader.load_cassette` returns.

A cassette (format: ``docs/cassettes.md``, JSON Schema: ``paragents/cassette/schema.json``) holds
everything a multi-session run needs except the model: the workspace files, the permissions, each
session's prompts and scripted replies, the user's answers and optional expectations.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass, field
from typing import Any, Literal

from paragents.llm.replay_script import ScriptedResponse

ReplyKind = Literal["message", "raw", "http_error"]


@dataclass
class Reply:
    """One scripted model reply (one HTTP response to one chat-completions request).

    ``kind`` is "message" (an assistant message synthesised into SSE), "raw" (network reads, the
    format of ``shared/fixtures/sse``) or "http_error" (status, headers, body). ``data`` is the
    cassette object as written. ``where`` is its field path (``sessions[0].replies[2]``)."""

    kind: ReplyKind
    data: dict[str, Any]
    where: str

    @property
    def cancel(self) -> bool:
        """True when the player cancels the turn while this reply streams (the server then hangs)."""
        return bool(self.data.get("cancel"))

    @property
    def cancel_after_text(self) -> str:
        """Streamed text (reasoning + answer) to wait for before cancelling (default: all of it)."""
        if "cancel_after_text" in self.data:
            return str(self.data["cancel_after_text"])
        return (self.data.get("reasoning_content") or "") + (self.data.get("content") or "")

    def to_scripted(self) -> ScriptedResponse:
        """Build the :class:`ScriptedResponse` the replay server plays (no pacing, no gates)."""
        d = self.data
        if self.kind == "message":
            resp = ScriptedResponse.from_message(
                d.get("content"),
                reasoning_content=d.get("reasoning_content"),
                tool_calls=[dict(c) for c in d.get("tool_calls", [])],
                finish_reason=d.get("finish_reason"),
                usage=d.get("usage"),
                chunk_size=int(d.get("chunk_size", 8)),
                done=not self.cancel,
            )
        elif self.kind == "raw":
            reads: list[bytes | str]
            if "reads" in d:
                reads = [str(r) for r in d["reads"]]
            else:
                reads = [base64.b64decode(r) for r in d["reads_b64"]]
            resp = ScriptedResponse(
                status=int(d.get("status", 200)), headers=dict(d.get("headers", {})), reads=reads
            )
        else:
            body = d.get("body", "")
            text = body if isinstance(body, str) else json.dumps(body)
            headers = dict(d.get("headers", {}))
            if not any(k.lower() == "content-type" for k in headers):
                headers["Content-Type"] = "application/json"
            resp = ScriptedResponse(status=int(d["status"]), headers=headers, reads=[text] if text else [])
        resp.truncate = bool(d.get("truncate"))
        resp.hang = self.cancel
        return resp


@dataclass
class Step:
    """One entry of a session's ``prompts``: a prompt (``text``; ``after``: the name of a session
    that must have finished its prompts of this phase first) or a restart point (``restart``)."""

    text: str | None = None
    after: str | None = None
    restart: bool = False


@dataclass
class SessionSpec:
    """One scripted session: ``name``, ``dir`` (relative to the workspace), ``mode``, ``model``,
    ``steps`` (prompts and restart points, in order) and ``replies`` (in order)."""

    name: str
    dir: str | None = None
    mode: str | None = None
    model: str | None = None
    steps: list[Step] = field(default_factory=list)
    replies: list[Reply] = field(default_factory=list)

    def phases(self) -> list[list[Step]]:
        """The prompt steps split at restart points: phase ``i`` runs between restart ``i-1`` and ``i``."""
        out: list[list[Step]] = [[]]
        for step in self.steps:
            if step.restart:
                out.append([])
            else:
                out[-1].append(step)
        return out


@dataclass
class Answer:
    """A scripted user answer to an approval ("permission") or a conflict ("conflict").

    Matching (first unused answer in cassette order wins): ``session`` (name), ``tool``, ``path`` and
    ``command`` each must equal the ask's when given. ``note`` goes with reject_with_note, ``rules``
    with allow_always, ``reason`` with reject_once (``<workspace>`` stands for the project path);
    ``headless`` marks an answer given by ``paragents run`` without a terminal."""

    answer: str
    where: str
    kind: str | None = None
    session: str | None = None
    tool: str | None = None
    path: str | None = None
    command: str | None = None
    note: str | None = None
    rules: list[str] | None = None
    reason: str | None = None
    headless: bool = False


@dataclass
class Expectation:
    """Assertions on one session's final state (every field optional): ``status`` of its last turn,
    ``messages`` count, ``error_contains`` (case-insensitive substring of its last error) and
    ``files`` (path relative to the workspace -> expected content, or None for "must not exist")."""

    status: str | None = None
    messages: int | None = None
    error_contains: str | None = None
    files: dict[str, str | None] = field(default_factory=dict)


@dataclass
class Cassette:
    """A loaded, validated cassette. ``source`` is the file it came from (for messages)."""

    sessions: list[SessionSpec]
    workspace: dict[str, str] = field(default_factory=dict)
    permissions: dict[str, Any] | None = None
    answers: list[Answer] = field(default_factory=list)
    expect: dict[str, Expectation] = field(default_factory=dict)
    title: str = ""
    description: str = ""
    model: str = "replay-model"
    max_parallel_turns: int | None = None
    max_tool_rounds: int | None = None
    source: str = "<cassette>"
    raw: dict[str, Any] = field(default_factory=dict)

    def session(self, name: str) -> SessionSpec:
        """Return the session named ``name`` (KeyError when absent)."""
        for spec in self.sessions:
            if spec.name == name:
                return spec
        raise KeyError(name)
