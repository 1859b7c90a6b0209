"""What a replay saw, per session: the events in their own order, normalised for comparison
(temp paths replaced by ``<workspace>``, volatile ids and timings dropped, streamed text joined)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from paragents import events as ev
from paragents.models import parse_arguments


def call_args(call: Any) -> dict[str, Any]:
    """The tool call's arguments as a dict ({} when they do not parse)."""
    try:
        return dict(parse_arguments(call.arguments))
    except (ValueError, TypeError):
        return {}


@dataclass
class SessionLog:
    """The normalised record of one session: ``events`` (dicts in the session's own order),
    ``approvals`` and ``conflicts`` (with their answers), ``tool_results`` and the ``streamed``
    text (reasoning + answer, all requests) used to time scripted cancels."""

    name: str
    events: list[dict[str, Any]] = field(default_factory=list)
    approvals: list[dict[str, Any]] = field(default_factory=list)
    conflicts: list[dict[str, Any]] = field(default_factory=list)
    tool_results: list[dict[str, Any]] = field(default_factory=list)
    streamed: str = ""
    turns: list[dict[str, Any]] = field(default_factory=list)


class SessionLogs:
    """An event observer that keeps a :class:`SessionLog` per session and wakes waiters on change.

    ``names`` maps session ids to names (updated by the player); ``normalise`` rewrites strings
    (temp paths). Events of unknown sessions are ignored."""

    def __init__(self, normalise: Callable[[str], str]) -> None:
        self.names: dict[str, str] = {}
        self.logs: dict[str, SessionLog] = {}
        self.normalise = normalise
        self.changed = asyncio.Event()
        self._asks: dict[str, dict[str, Any]] = {}
        self._conflicts: dict[Any, dict[str, Any]] = {}

    def log(self, name: str) -> SessionLog:
        """The log of session ``name`` (created empty on first use)."""
        return self.logs.setdefault(name, SessionLog(name))

    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Return once ``predicate()`` holds; re-checked after every recorded event (no polling)."""
        while not predicate():
            self.changed.clear()
            await self.changed.wait()

    def _add(self, log: SessionLog, entry: dict[str, Any]) -> None:
        if (
            entry.get("type") in ("text", "reasoning")
            and log.events
            and log.events[-1]["type"] == entry["type"]
        ):
            log.events[-1]["text"] += entry["text"]
        else:
            log.events.append(entry)

    def __call__(self, event: ev.Event) -> None:
        name = self.names.get(event.session_id)
        if name is None:
            return
        log = self.log(name)
        n = self.normalise
        entry: dict[str, Any] | None = None
        if isinstance(event, ev.TextDelta | ev.ReasoningDelta):
            log.streamed += event.text
            kind = "text" if isinstance(event, ev.TextDelta) else "reasoning"
            entry = {"type": kind, "text": n(event.text)}
        elif isinstance(event, ev.TurnStarted):
            entry = {"type": "turn_started", "prompt": n(event.prompt)}
            log.turns.append({"prompt": n(event.prompt), "status": None, "error": None, "error_kind": None})
        elif isinstance(event, ev.TurnFinished):
            entry = {"type": "turn_finished", "status": event.status, "error": n(event.error or "") or None}
            if log.turns:
                log.turns[-1].update(status=event.status, error=entry["error"], error_kind=event.error_kind)
        elif isinstance(event, ev.MessageAdded):
            msg = event.message
            entry = {"type": "message", "role": msg.get("role")}
            if msg.get("tool_calls"):
                entry["tool_calls"] = [c["function"]["name"] for c in msg["tool_calls"]]
        elif isinstance(event, ev.ToolCallStarted):
            entry = {"type": "tool_started", "tool": event.call.name, "summary": n(event.summary)}
        elif isinstance(event, ev.ToolCallFinished):
            entry = {"type": "tool_finished", "tool": event.call.name, "status": event.status}
            result = {
                "id": event.call.id,
                "tool": event.call.name,
                "status": event.status,
                "output": n(event.output),
            }
            if event.diff:
                result["diff"] = n(event.diff)
            log.tool_results.append(result)
        elif isinstance(event, ev.PermissionRequested):
            args = call_args(event.call)
            ask: dict[str, Any] = {
                "tool": event.call.name,
                "summary": n(event.summary),
                "reason": n(event.reason),
                "answer": None,
            }
            if "path" in args or "command" in args:
                ask["input"] = n(str(args.get("path") or args.get("command")))
            self._asks[event.request_id] = ask
            log.approvals.append(ask)
            entry = {"type": "approval_asked", "tool": event.call.name, "summary": n(event.summary)}
        elif isinstance(event, ev.PermissionResolved):
            resolved = self._asks.pop(event.request_id, None)
            if resolved is not None:
                resolved["answer"], resolved["by"] = event.answer, event.by
            entry = {"type": "approval_answered", "answer": event.answer}
        elif isinstance(event, ev.StreamRetry):
            entry = {"type": "retry", "reason": n(event.reason), "attempt": event.attempt}
        elif isinstance(event, ev.Notice):
            entry = {"type": "notice", "level": event.level, "text": n(event.text)}
        elif isinstance(event, ev.SessionStateChanged):
            if event.state != "queued":  # a wait for a turn slot depends on timing, not on the cassette
                entry = {"type": "state", "state": event.state.value}
        elif type(event).__name__.startswith("Conflict"):
            entry = {"type": _snake(type(event).__name__)}
            for key in ("kind", "path", "holder", "summary", "answer", "by"):
                value = getattr(event, key, None)
                if isinstance(value, str):
                    entry[key] = n(value)
            cid = getattr(event, "conflict_id", None)
            if type(event).__name__ == "ConflictDetected":
                record = {k: v for k, v in entry.items() if k != "type"}
                record["answer"] = None
                self._conflicts[cid] = record
                log.conflicts.append(record)
            elif cid in self._conflicts:
                self._conflicts[cid]["answer"] = entry.get("answer")
                self._conflicts[cid]["by"] = entry.get("by")
        if entry is not None:
            self._add(log, entry)
        self.changed.set()


def _snake(name: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in name).lstrip("_")
