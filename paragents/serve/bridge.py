"""The seam between the HTTP server and the Runtime: :class:`RuntimeBridge`.

The server runs on its own thread and loop; the Runtime (views, Futures, the store connection) lives
on its own loop. Every read and command hops to the Runtime's loop here (``run_coroutine_threadsafe``),
so request parsing, auth and JSON never run on the app's loop and the Runtime is only touched from
its own thread. Approvals are answered in-process by resolving the ask's Future (the answer is
accepted once; a second one is refused naming the first). When approvals move into the store, only
:meth:`RuntimeBridge.answer` and :meth:`RuntimeBridge.inbox` change."""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeVar

from paragents import events as ev
from paragents.sessions.view import SessionError

if TYPE_CHECKING:
    from paragents.sessions.api import SessionsAPI
    from paragents.sessions.view import SessionView

T = TypeVar("T")

WEB_ANSWERS = ("allow_once", "allow_session", "reject_once", "reject_with_note")
"""Answers the API accepts ("always allow" writes permanent rules: the terminal only)."""
_QUIET_EVENTS = (ev.TextDelta, ev.ReasoningDelta)
"""Events not sent to /events (one per streamed chunk; the page needs states, not tokens)."""


class ApiError(Exception):
    """A request the Runtime refused: ``status`` (HTTP) and a readable ``message``."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclass(frozen=True)
class Answered:
    """How an ask was settled: the ``answer``, ``by`` whom and ``at`` (Unix seconds)."""

    answer: str
    by: str
    at: float


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


def _message_json(message: dict[str, Any]) -> dict[str, Any]:
    calls = [
        {
            "name": c.get("function", {}).get("name", ""),
            "arguments": c.get("function", {}).get("arguments", ""),
        }
        for c in message.get("tool_calls") or []
        if isinstance(c, dict)
    ]
    out: dict[str, Any] = {"role": message.get("role", ""), "text": _text_of(message)}
    if calls:
        out["tool_calls"] = calls
    if message.get("incomplete"):
        out["incomplete"] = True
    return out


def last_lines(view: SessionView, count: int = 3) -> list[str]:
    """The last ``count`` non-empty lines of the session's newest message with text."""
    for message in reversed(view.messages):
        text = _text_of(message).strip()
        if text:
            return [line for line in text.splitlines() if line.strip()][-count:]
    return []


def is_destructive(command: str) -> bool:
    """True when a shell command deletes or overwrites files (or cannot be analysed): the page then
    asks for a second tap before allowing it."""
    try:
        from paragents.permissions import special
        from paragents.permissions.shell import parse_command

        parsed = parse_command(command)
        return any(special.destructive(cmd.effective) for cmd in parsed.commands)
    except Exception:
        return True


def request_json(sid: str, name: str, req: ev.PermissionRequested, since: float | None) -> dict[str, Any]:
    """One pending approval as the API shows it (plain strings; the page inserts them as text)."""
    try:
        args = json.loads(req.call.arguments or "{}")
    except ValueError:
        args = {}
    command = args.get("command") if isinstance(args, dict) else None
    preview = req.preview
    return {
        "id": req.request_id,
        "kind": "approval",
        "session_id": sid,
        "session_name": name,
        "tool": req.call.name,
        "summary": req.summary,
        "reason": req.reason,
        "rule": req.rule,
        "suggested_rules": list(req.suggested_rules),
        "command": command if isinstance(command, str) else None,
        "preview": None
        if preview is None
        else {
            "kind": preview.kind,
            "text": preview.text,
            "detail": preview.detail,
            "cwd": preview.cwd,
            "problem": preview.problem,
            "omitted": preview.omitted,
        },
        "destructive": isinstance(command, str) and is_destructive(command),
        "since": since,
    }


class RuntimeBridge:
    """Everything the HTTP server asks of the Runtime ``runtime`` living on ``loop`` (default: the
    running loop of the caller of the constructor). ``clock`` gives Unix seconds."""

    def __init__(
        self,
        runtime: SessionsAPI,
        loop: asyncio.AbstractEventLoop | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.runtime = runtime
        self.loop = loop or asyncio.get_running_loop()
        self.clock = clock
        self.answered: dict[str, Answered] = {}
        """Asks settled so far (by any client), by request id: a second answer is refused naming it."""
        self.asked_at: dict[str, float] = {}
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        runtime.observers.append(self._observe)

    def close(self) -> None:
        """Stop observing the Runtime (idempotent; call it on the Runtime's loop or after it ended)."""
        with contextlib.suppress(ValueError):
            self.runtime.observers.remove(self._observe)

    # -- hopping to the Runtime's loop ------------------------------------------------------------------
    async def call(self, work: Callable[[], Awaitable[T]]) -> T:
        """Run the coroutine ``work()`` on the Runtime's loop and return its result."""
        if asyncio.get_running_loop() is self.loop:
            return await work()
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(work(), self.loop))  # type: ignore[arg-type]

    async def run(self, work: Callable[[], T]) -> T:
        """Run the plain callable ``work()`` on the Runtime's loop and return its result."""

        async def wrapped() -> T:
            return work()

        return await self.call(wrapped)

    # -- events -----------------------------------------------------------------------------------------
    def listen(self, listener: Callable[[dict[str, Any]], None]) -> Callable[[], None]:
        """Call ``listener(event_json)`` (on the Runtime's loop) for each session change; returns the
        function that stops it. The listener must only hand the dict to its own loop."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def _observe(self, event: ev.Event) -> None:
        if isinstance(event, ev.PermissionRequested):
            self.asked_at[event.request_id] = self.clock()
        elif isinstance(event, ev.PermissionResolved):
            self.asked_at.pop(event.request_id, None)
            if event.request_id not in self.answered:
                self.answered[event.request_id] = Answered(event.answer, event.by, self.clock())
        if isinstance(event, _QUIET_EVENTS) or not self._listeners:
            return
        data: dict[str, Any] = {"type": type(event).__name__, "session_id": event.session_id}
        view = self.runtime.sessions.get(event.session_id)
        if view is not None:
            data["state"] = view.state.value
            data["pending"] = len(view.pending)
        for listener in list(self._listeners):
            listener(data)

    # -- reads ------------------------------------------------------------------------------------------
    def _session_json(self, view: SessionView) -> dict[str, Any]:
        return {
            "id": view.id,
            "name": view.name,
            "model": view.model,
            "mode": view.mode,
            "state": view.state.value,
            "waiting_on": view.waiting_on,
            "pending": len(view.pending),
            "queued": len(view.queue),
            "read_only": view.read_only is not None,
            "last_lines": last_lines(view),
            "messages": len(view.messages),
        }

    async def sessions(self) -> list[dict[str, Any]]:
        """The open sessions, in panel order."""
        return await self.run(lambda: [self._session_json(v) for v in self.runtime.sessions.values()])

    async def session(self, sid: str, offset: int | None, limit: int) -> dict[str, Any]:
        """One open session with a page of its transcript: ``limit`` messages from ``offset`` (default:
        the newest page). Raises ApiError 404 for an unknown id, 409 for a closed session."""

        def read() -> dict[str, Any] | None:
            view = self.runtime.sessions.get(sid)
            if view is None:
                return None
            total = len(view.messages)
            start = max(0, total - limit) if offset is None else min(max(0, offset), total)
            page = view.messages[start : start + limit]
            return {
                **self._session_json(view),
                "transcript": {
                    "offset": start,
                    "limit": limit,
                    "total": total,
                    "messages": [_message_json(m) for m in page],
                },
            }

        found = await self.run(read)
        if found is None:
            await self._raise_missing(sid)
        assert found is not None
        return found

    async def _raise_missing(self, sid: str) -> None:
        records = await self.call(self.runtime.list_sessions)
        if any(r.id == sid for r in records):
            raise ApiError(409, f"session {sid} is closed (reopen it in paragents first)")
        raise ApiError(404, f"no session with id {sid}")

    async def inbox(self) -> list[dict[str, Any]]:
        """What waits on the user across the open sessions, oldest first: pending approvals
        (answerable here) and conflicts (answered in the terminal)."""

        def read() -> list[dict[str, Any]]:
            items: list[dict[str, Any]] = []
            for sid, view in self.runtime.sessions.items():
                for req in view.pending.values():
                    if not req.reply.done():
                        items.append(request_json(sid, view.name, req, self.asked_at.get(req.request_id)))
                for con in view.conflicts.values():
                    if not con.reply.done():
                        items.append(
                            {
                                "id": con.conflict_id,
                                "kind": "conflict",
                                "session_id": sid,
                                "session_name": view.name,
                                "summary": con.summary,
                                "since": None,
                            }
                        )
            items.sort(key=lambda i: i["since"] if i["since"] is not None else float("inf"))
            return items

        return await self.run(read)

    # -- commands ---------------------------------------------------------------------------------------
    async def answer(self, request_id: str, answer: str, note: str | None, by: str) -> dict[str, Any]:
        """Answer the pending approval ``request_id`` once. Raises ApiError: 400 for an answer the API
        does not give, 409 when it was already answered (naming that answer), 404 when unknown."""
        if answer not in WEB_ANSWERS:
            raise ApiError(400, f"answer must be one of {', '.join(WEB_ANSWERS)}")
        if answer == "reject_with_note" and not (note or "").strip():
            raise ApiError(400, "reject_with_note needs a non-empty note")

        def settle() -> dict[str, Any]:
            first = self.answered.get(request_id)
            if first is not None:
                raise ApiError(409, f"already answered: {first.answer} by {first.by}")
            for view in self.runtime.sessions.values():
                req = view.pending.get(request_id)
                if req is None:
                    continue
                if req.reply.done():
                    raise ApiError(409, "already answered")
                self.answered[request_id] = Answered(answer, by, self.clock())
                payload: Any = {"note": note} if answer == "reject_with_note" else None
                req.reply.set_result((answer, payload))  # type: ignore[arg-type]
                return {"id": request_id, "session_id": view.id, "answer": answer, "by": by}
            raise ApiError(404, f"no pending approval with id {request_id}")

        return await self.run(settle)

    async def prompt(self, sid: str, text: str) -> str:
        """Queue ``text`` for the open session ``sid``; return the prompt id (404/409 as for reads)."""

        def submit() -> str | None:
            if sid not in self.runtime.sessions:
                return None
            try:
                return self.runtime.submit(sid, text)
            except SessionError as exc:
                raise ApiError(409, str(exc)) from exc

        prompt_id = await self.run(submit)
        if prompt_id is None:
            await self._raise_missing(sid)
        assert prompt_id is not None
        return prompt_id

    async def cancel(self, sid: str) -> bool:
        """Cancel the open session's running turn; False when nothing ran (404/409 as for reads)."""
        result = await self.run(lambda: self.runtime.cancel(sid) if sid in self.runtime.sessions else None)
        if result is None:
            await self._raise_missing(sid)
        return bool(result)

    # -- the store ----------------------------------------------------------------------------------------
    async def record_access(self, **row: Any) -> None:
        """Add one row to the API access log (``Store.record_access``)."""
        await self.call(lambda: self.runtime.store.record_access(**row))

    async def use_pairing_code(self, code_hash: str, at: float) -> str:
        """Consume a one-time pairing code (``Store.use_pairing_code``): ok, unknown, used or expired."""
        return await self.call(lambda: self.runtime.store.use_pairing_code(code_hash, at=at))
