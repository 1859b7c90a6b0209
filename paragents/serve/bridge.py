"""The seam between the HTTP server and the Runtime: :class:`RuntimeBridge`.

The server runs on its own thread and loop; the Runtime (views, Futures, the store connection) lives
on its own loop. Every read and command hops to the Runtime's loop here (``run_coroutine_threadsafe``),
so request parsing, auth and JSON never run on the app's loop and the Runtime is only touched from
its own thread. Listing and answering approvals is :mod:`paragents.serve.approvals` (the one file to
change when approvals move into the store)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from paragents import events as ev
from paragents.serve.approvals import WEB_ANSWERS, ApiError, Approvals
from paragents.sessions.view import SessionError

if TYPE_CHECKING:
    from paragents.serve.pairing import AccessLog
    from paragents.sessions.api import SessionsAPI
    from paragents.sessions.view import SessionView

T = TypeVar("T")

_QUIET_EVENTS = (ev.TextDelta, ev.ReasoningDelta)
"""Events not sent to /events (one per streamed chunk; the page needs states, not tokens)."""


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


class RuntimeBridge:
    """Everything the HTTP server asks of the Runtime ``runtime`` living on ``loop`` (default: the
    running loop of the caller of the constructor), and of its ``access`` log (the store's
    ``api_access``, given by the composition root). ``clock`` gives Unix seconds."""

    def __init__(
        self,
        runtime: SessionsAPI,
        access: AccessLog,
        loop: asyncio.AbstractEventLoop | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.runtime = runtime
        self.access = access
        self.loop = loop or asyncio.get_running_loop()
        self.clock = clock
        self.approvals = Approvals(runtime, clock)
        """Pending approvals: listing and answering them (the seam to the store-backed approvals)."""
        self._listeners: list[Callable[[dict[str, Any]], None]] = []
        runtime.observe(self._observe)

    def close(self) -> None:
        """Stop observing the Runtime (idempotent; call it on the Runtime's loop or after it ended)."""
        self.runtime.unobserve(self._observe)

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
        self.approvals.observe(event)
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
        records = await self.call(self.runtime.lifecycle.list_sessions)
        if any(r.id == sid for r in records):
            raise ApiError(409, f"session {sid} is closed (reopen it in paragents first)")
        raise ApiError(404, f"no session with id {sid}")

    async def inbox(self, projects: tuple[str, ...]) -> list[dict[str, Any]]:
        """What waits on the user in ``projects`` (a credential's), oldest first (:class:`Approvals`)."""
        return await self.call(lambda: self.approvals.items(projects))

    async def whole_call(self, request_id: str, projects: tuple[str, ...]) -> dict[str, Any]:
        """The whole call of a pending ask of ``projects`` (:meth:`Approvals.whole`)."""
        return await self.call(lambda: self.approvals.whole(request_id, projects))

    async def answer(
        self, request_id: str, answer: str, note: str | None, by: str, projects: tuple[str, ...]
    ) -> dict[str, Any]:
        """Answer the pending approval ``request_id`` of one of ``projects`` once. Raises ApiError: 400
        for an answer the API does not give, 403 for an ask of another project (naming it), 409 when
        it was already answered (naming that answer), 404 when unknown."""
        if answer not in WEB_ANSWERS:
            raise ApiError(400, f"answer must be one of {', '.join(WEB_ANSWERS)}")
        if answer == "reject_with_note" and not (note or "").strip():
            raise ApiError(400, "reject_with_note needs a non-empty note")
        return await self.call(lambda: self.approvals.answer(request_id, answer, note, by, projects))

    async def answer_conflict(
        self, conflict_id: str, answer: str, by: str, projects: tuple[str, ...]
    ) -> dict[str, Any]:
        """Answer the pending conflict ``conflict_id`` of one of ``projects`` once
        (:meth:`~paragents.serve.held.Held.answer_conflict`)."""
        return await self.call(lambda: self.approvals.held.answer_conflict(conflict_id, answer, by, projects))

    async def answer_pause(
        self, pause_id: str, answer: str, value: str | None, by: str, projects: tuple[str, ...]
    ) -> dict[str, Any]:
        """Answer this process's budget or loop-guard pause ``pause_id`` once
        (:meth:`~paragents.serve.held.Held.answer_pause`)."""
        return await self.call(
            lambda: self.approvals.held.answer_pause(pause_id, answer, value, by, projects)
        )

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
        """Add one row to the API access log (``store.api_access.record``)."""
        await self.call(lambda: self.access.record(**row))

    async def use_pairing_code(self, code_hash: str, at: float) -> str:
        """Consume a one-time pairing code (``store.api_access.use_pairing_code``): ok, unknown, used
        or expired."""
        return await self.call(lambda: self.access.use_pairing_code(code_hash, at=at))
