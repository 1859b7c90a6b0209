"""A loopback HTTP/1.1 server that plays scripted OpenAI-compatible responses, for tests, replay and
the demo.

It is a real socket server on 127.0.0.1 (``asyncio.start_server``, random free port), so the real
:class:`~paragents.llm.client.ChatClient` and httpx run unchanged against it. Each scripted read is
written as one HTTP chunk (``Transfer-Encoding: chunked``) and drained before the next, so the
client sees separate network reads; then the connection closes.

Routing: ``POST .../chat/completions`` (any POST) takes the next response queued for the request's
``X-Paragents-Session`` header (falling back to the default queue when nothing was ever queued for
that session); ``GET .../models`` answers ``{"data": [{"id": m}, ...]}`` from :attr:`models` unless
a response was queued with :meth:`ReplayServer.add_models_response`. An empty queue answers 500
with ``replay: no scripted response left for session X`` so a test fails loudly.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from http import HTTPStatus
from types import TracebackType
from typing import Any
from urllib.parse import unquote

from paragents.llm.replay_script import ScriptedResponse

SESSION_HEADER = "x-paragents-session"

__all__ = ["ReceivedRequest", "ReplayServer", "ScriptedResponse", "ThreadedReplayServer"]


@dataclass
class ReceivedRequest:
    """One request the server received: ``headers`` keys are lower-case; ``body_json`` is the parsed
    JSON body or None (no body / not JSON); ``client_closed`` turns True when the client closed the
    connection before the scripted response was fully sent."""

    method: str
    path: str
    headers: dict[str, str]
    body_json: Any
    client_closed: bool = False

    @property
    def session(self) -> str | None:
        """The ``X-Paragents-Session`` header (percent-decoded: non-ASCII names are encoded), or None."""
        value = self.headers.get(SESSION_HEADER)
        return None if value is None else unquote(value)


@dataclass
class _Queues:
    default: deque[ScriptedResponse] = field(default_factory=deque)
    sessions: dict[str, deque[ScriptedResponse]] = field(default_factory=dict)
    models: deque[ScriptedResponse] = field(default_factory=deque)


class ReplayServer:
    """Scripted OpenAI-compatible server on 127.0.0.1 (see module docstring).

    ``models`` is the list served by ``GET /v1/models``. Use ``async with ReplayServer() as s:`` or
    :meth:`start` / :meth:`stop`. All methods run on the event loop that started the server."""

    def __init__(self, models: list[str] | None = None) -> None:
        self.models: list[str] = list(models or ["replay-model"])
        self.props: dict[str, Any] | None = None
        """The body of ``GET /props`` (llama.cpp's server settings), or None: 404 like other servers."""
        self.requests: list[ReceivedRequest] = []
        """Every request received, in arrival order."""
        self._queues = _Queues()
        self._server: asyncio.Server | None = None
        self._changed: asyncio.Condition | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self.base_url = ""

    # -- scripting -------------------------------------------------------------------------------
    def add(self, response: ScriptedResponse | list[ScriptedResponse], *, session: str | None = None) -> None:
        """Queue ``response`` (or several, in order) for requests of ``session`` (None: default queue)."""
        items = response if isinstance(response, list) else [response]
        if session is None:
            queue = self._queues.default
        else:
            queue = self._queues.sessions.setdefault(session, deque())
        queue.extend(items)

    def add_fixture(self, fixture: dict[str, Any], *, session: str | None = None) -> None:
        """Queue every response of a ``tests/fixtures_shared/sse`` fixture dict (see
        :meth:`ScriptedResponse.list_from_fixture`)."""
        self.add(ScriptedResponse.list_from_fixture(fixture), session=session)

    def add_models_response(self, response: ScriptedResponse) -> None:
        """Queue a response served to the next ``GET /models`` instead of the model list."""
        self._queues.models.append(response)

    def pending(self, session: str | None = None) -> int:
        """Number of responses still queued for ``session`` (None: the default queue)."""
        if session is None:
            return len(self._queues.default)
        return len(self._queues.sessions.get(session, ()))

    # -- lifecycle -------------------------------------------------------------------------------
    async def start(self) -> str:
        """Listen on a free 127.0.0.1 port; return the base URL ``http://127.0.0.1:PORT/v1``."""
        self._changed = asyncio.Condition()
        self._server = await asyncio.start_server(self._handle, "127.0.0.1", 0)
        port = self._server.sockets[0].getsockname()[1]
        self.base_url = f"http://127.0.0.1:{port}/v1"
        return self.base_url

    async def stop(self) -> None:
        """Stop listening and close open connections (hanging responses end)."""
        if self._server is None:
            return
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        for task in list(self._tasks):
            with contextlib.suppress(BaseException):
                await task
        await self._server.wait_closed()
        self._server = None

    async def __aenter__(self) -> ReplayServer:
        await self.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.stop()

    # -- waiting ---------------------------------------------------------------------------------
    async def wait_for(self, predicate: Callable[[], bool]) -> None:
        """Return once ``predicate()`` is true; re-checked whenever a request arrives or a client
        closes a connection (no polling). Wrap in ``asyncio.wait_for`` for a timeout."""
        assert self._changed is not None, "start() the server first"
        async with self._changed:
            await self._changed.wait_for(predicate)

    async def wait_for_requests(self, n: int) -> list[ReceivedRequest]:
        """Return the requests once at least ``n`` have arrived."""
        await self.wait_for(lambda: len(self.requests) >= n)
        return self.requests

    async def wait_for_client_close(self, index: int) -> ReceivedRequest:
        """Return request number ``index`` (0-based) once its client closed the connection early."""
        await self.wait_for(lambda: len(self.requests) > index and self.requests[index].client_closed)
        return self.requests[index]

    async def _notify(self) -> None:
        assert self._changed is not None
        async with self._changed:
            self._changed.notify_all()

    # -- serving ---------------------------------------------------------------------------------
    def _next_response(self, request: ReceivedRequest) -> ScriptedResponse:
        if request.method == "GET" and request.path.rstrip("/").endswith("/models"):
            if self._queues.models:
                return self._queues.models.popleft()
            body = {"object": "list", "data": [{"id": m, "object": "model"} for m in self.models]}
            return ScriptedResponse(headers={"Content-Type": "application/json"}, reads=[json.dumps(body)])
        if request.method == "GET" and request.path.rstrip("/").endswith("/props") and self.props is not None:
            return ScriptedResponse(
                headers={"Content-Type": "application/json"}, reads=[json.dumps(self.props)]
            )
        if request.method != "POST":
            return _json_error(404, f"replay: no route for {request.method} {request.path}")
        session = request.session
        queue = self._queues.default
        if session is not None and session in self._queues.sessions:
            queue = self._queues.sessions[session]
        if not queue:
            return _json_error(500, f"replay: no scripted response left for session {session or '(default)'}")
        return queue.popleft()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)
        try:
            request = await _read_request(reader)
            if request is None:
                return
            self.requests.append(request)
            await self._notify()
            response = self._next_response(request)
            eof = asyncio.ensure_future(reader.read())
            try:
                finished = await _write_response(writer, response, eof)
            finally:
                eof.cancel()
            if not finished:
                request.client_closed = True
                await self._notify()
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._tasks.discard(task)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()


def _json_error(status: int, message: str) -> ScriptedResponse:
    body = {"error": {"message": message, "type": "replay_error", "code": status}}
    return ScriptedResponse(
        status=status, headers={"Content-Type": "application/json"}, reads=[json.dumps(body)]
    )


async def _read_request(reader: asyncio.StreamReader) -> ReceivedRequest | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, asyncio.LimitOverrunError):
        return None
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = [*lines[0].split(" ", 2), "", ""][:3]
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if ":" in line:
            name, _, value = line.partition(":")
            headers[name.strip().lower()] = value.strip()
    length = int(headers.get("content-length", "0") or 0)
    raw = await reader.readexactly(length) if length else b""
    try:
        body: Any = json.loads(raw) if raw else None
    except ValueError:
        body = None
    return ReceivedRequest(method=method, path=path, headers=headers, body_json=body)


async def _write_response(
    writer: asyncio.StreamWriter, response: ScriptedResponse, eof: asyncio.Future[bytes]
) -> bool:
    """Write ``response``; return False when the client closed the connection before the end."""

    async def closed_during(awaitable: Awaitable[Any]) -> bool:
        work = asyncio.ensure_future(awaitable)
        done, _ = await asyncio.wait({work, eof}, return_when=asyncio.FIRST_COMPLETED)
        if work not in done:
            work.cancel()
            return True
        return False

    if response.delay_before and await closed_during(asyncio.sleep(response.delay_before)):
        return False
    headers = {k.lower(): v for k, v in response.headers.items()}
    chunked = "content-length" not in headers
    lines = [f"HTTP/1.1 {response.status} {_phrase(response.status)}"]
    if "content-type" not in headers:
        lines.append(
            "Content-Type: " + ("text/event-stream" if response.status < 300 else "application/json")
        )
    lines += [f"{k}: {v}" for k, v in response.headers.items()]
    if chunked:
        lines.append("Transfer-Encoding: chunked")
    lines.append("Connection: close")
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    await writer.drain()
    for i, read in enumerate(response.reads):
        if response.before_read is not None and await closed_during(response.before_read(i)):
            return False
        data = read.encode("utf-8") if isinstance(read, str) else read
        if not data:
            continue
        writer.write(f"{len(data):x}\r\n".encode() + data + b"\r\n" if chunked else data)
        await writer.drain()
        if eof.done():
            return False
    if response.hang:
        await eof  # until the client gives up (or the server stops)
        return False
    if chunked and not response.truncate:
        writer.write(b"0\r\n\r\n")
        await writer.drain()
    return True


def _phrase(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Unknown"


class ThreadedReplayServer:
    """A :class:`ReplayServer` running its own event loop in a daemon thread, for tests that drive a
    ``paragents`` subprocess or synchronous code. Same scripting API; :meth:`start` / :meth:`stop`
    and the waits are synchronous (waits take ``timeout`` seconds and raise TimeoutError).
    ``before_read`` hooks run on the server's thread/loop."""

    def __init__(self, models: list[str] | None = None) -> None:
        self.server = ReplayServer(models)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    @property
    def requests(self) -> list[ReceivedRequest]:
        """Every request received so far (a snapshot copy)."""
        return list(self.server.requests)

    @property
    def models(self) -> list[str]:
        """The list served by ``GET /models`` (mutable)."""
        return self.server.models

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1`` once started."""
        return self.server.base_url

    def _call(self, fn: Callable[[], Any]) -> Any:
        assert self._loop is not None, "start() the server first"

        async def run() -> Any:
            return fn()

        return asyncio.run_coroutine_threadsafe(run(), self._loop).result()

    def add(self, response: ScriptedResponse | list[ScriptedResponse], *, session: str | None = None) -> None:
        """Queue ``response`` for ``session`` (see :meth:`ReplayServer.add`)."""
        self._call(lambda: self.server.add(response, session=session))

    def add_fixture(self, fixture: dict[str, Any], *, session: str | None = None) -> None:
        """Queue a fixture's responses (see :meth:`ReplayServer.add_fixture`)."""
        self._call(lambda: self.server.add_fixture(fixture, session=session))

    def add_models_response(self, response: ScriptedResponse) -> None:
        """See :meth:`ReplayServer.add_models_response`."""
        self._call(lambda: self.server.add_models_response(response))

    def start(self) -> str:
        """Start the thread and the server; return the base URL."""
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name="replay-server", daemon=True)
        self._thread.start()
        return asyncio.run_coroutine_threadsafe(self.server.start(), self._loop).result()

    def stop(self) -> None:
        """Stop the server and its thread (idempotent)."""
        if self._loop is None or self._thread is None:
            return
        asyncio.run_coroutine_threadsafe(self.server.stop(), self._loop).result()
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join()
        self._loop.close()
        self._loop = self._thread = None

    def wait_for_requests(self, n: int, timeout: float = 10) -> list[ReceivedRequest]:
        """Block until ``n`` requests arrived (TimeoutError after ``timeout`` seconds)."""
        assert self._loop is not None, "start() the server first"
        future = asyncio.run_coroutine_threadsafe(self.server.wait_for_requests(n), self._loop)
        try:
            return list(future.result(timeout))
        except TimeoutError:
            future.cancel()
            raise

    def __enter__(self) -> ThreadedReplayServer:
        self.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()
