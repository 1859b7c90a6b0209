"""One pooled MCP server: its connection (an owner task holding the SDK's ``ClientSession``), its
state, PID, tools, users, last error and stderr log; start with a timeout, serialised calls, restart
with backoff when it dies, stop.

The SDK's transports are anyio context managers that must be entered and left in one task, so each
connection lives in an owner task (:meth:`ServerHandle._own`); calls from any session's task go
through its ``ClientSession``. When the process dies, the SDK answers every pending request with a
"connection closed" error, so no call hangs; the handle restarts the server after a backoff. A call
made after the server's stdout ended or its process exited waits for the owner task to note the end
(it may not have run yet on a loaded machine) and starts the server again, instead of being sent to
the dead connection."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import anyio
from mcp import ClientSession, types
from mcp.client.stdio import StdioServerParameters
from mcp.shared.exceptions import McpError

from paragents.config import McpServerSettings
from paragents.mcp.project import McpConfigError, ServerEntry, expanded
from paragents.mcp.transport import STOP_GRACE, ReadStream, WriteStream, stdio_process

log = logging.getLogger(__name__)

State = Literal["stopped", "starting", "running", "restarting", "failed"]
MAX_FAILURES = 5
"""Unexpected exits in a row (each within STABLE_AFTER of its start) before the server is left failed."""
STABLE_AFTER = 60.0
"""Seconds a server must run for its failure count to start again from zero."""
BACKOFF_BASE = 0.5
BACKOFF_MAX = 30.0


class McpServerError(Exception):
    """A server could not start or a call could not be made; ``str(err)`` names the server and the fix."""


def backoff(failures: int) -> float:
    """Seconds to wait before the next start after ``failures`` unexpected exits in a row."""
    return 0.0 if failures <= 0 else min(BACKOFF_MAX, BACKOFF_BASE * 2 ** (failures - 1))


def leaf(exc: BaseException) -> BaseException:
    """The first non-group exception inside ``exc`` (anyio task groups wrap errors in groups)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


def exited(pid: int | None) -> bool:
    """Whether our child process ``pid`` has exited, also before asyncio reaped it and told its waiters
    (``WNOWAIT`` leaves it to asyncio's child watcher)."""
    if pid is None:
        return False
    try:
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True  # reaped already


def rss_kib(pid: int | None) -> int | None:
    """Resident set size of ``pid`` in KiB (Linux /proc), or None when unknown."""
    if pid is None:
        return None
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


@dataclass(frozen=True)
class ServerStatus:
    """One row of ``/mcp``: a server process (or connection) and who uses it."""

    name: str
    origin: str
    transport: str
    scope: str
    state: str
    pid: int | None
    rss_kib: int | None
    tools: tuple[str, ...]
    users: tuple[str, ...]
    last_error: str | None
    restarts: int
    log_path: Path | None
    log_tail: str
    command: str


class ServerHandle:
    """A server of one (name, project[, session]) key: started on first need, shared by its users."""

    def __init__(
        self, entry: ServerEntry, owner: str | None, project_dir: Path, log_dir: Path, env: Mapping[str, str]
    ) -> None:
        self.entry = entry
        self.owner = owner
        """The session of a ``scope: "session"`` server, else None (shared by the project's sessions)."""
        self.project_dir = project_dir
        self.env = env
        suffix = f"-{owner[:8]}" if owner else ""
        self.log_path = log_dir / f"{entry.name}{suffix}.stderr.log"
        self.state: State = "stopped"
        self.pid: int | None = None
        self.prompts: list[types.Prompt] = []
        """The server's prompts (``/mcp__server__prompt``), listed at start when it offers any."""
        self.tools: list[types.Tool] | None = None
        """The server's tools as last listed (kept while it is stopped or restarting), None before."""
        self.users: set[str] = set()
        self.last_error: str | None = None
        self.restarts = 0
        self.failures = 0
        self.in_flight = 0
        self.calls: dict[str, int] = {}
        """Calls made per tool (the server's tool names) since this process started it first."""
        self.last_call = time.monotonic()
        self._session: ClientSession | None = None
        self._stdout_ended: anyio.Event | None = None
        self._task: asyncio.Task[None] | None = None
        self._stop = asyncio.Event()
        self._start_lock = asyncio.Lock()
        self._call_lock = asyncio.Lock()
        self._started_at = 0.0
        self._not_before = 0.0
        self._restart: asyncio.Task[None] | None = None
        self._closing = False
        self._stopping: asyncio.Future[None] | None = None
        self._reset: asyncio.Task[None] | None = None
        """A stop after an HTTP connection broke (kept so the task is not collected mid-way)."""

    @property
    def settings(self) -> McpServerSettings:
        return self.entry.settings

    @property
    def name(self) -> str:
        return self.entry.name

    # -- starting -----------------------------------------------------------------------------------
    async def ensure_running(self) -> ClientSession:
        """Return the live session, starting the server when needed (after its backoff). Raises
        McpServerError with one readable message naming the server when it cannot start in time."""
        async with self._start_lock:
            if self._session is not None and self.state == "running" and not self._connection_over():
                return self._session
            await self._owner_gone()  # it notes why the connection ended and sets the backoff
            if self.state == "failed" and self._not_before == float("inf"):
                raise McpServerError(self._failed_message())
            wait = self._not_before - time.monotonic()
            if self.state == "failed" and wait > 0:  # a start failed: no retry before its backoff
                raise McpServerError(f"{self.last_error} (next try in {wait:.0f} s)")
            if wait > 0:
                await asyncio.sleep(wait)
            await self._start()
            assert self._session is not None
            return self._session

    def _connection_over(self) -> bool:
        """The stdio server's stdout ended or its process exited (its owner task may not know yet)."""
        ended = self._stdout_ended is not None and self._stdout_ended.is_set()
        return ended or exited(self.pid)

    async def _owner_gone(self) -> None:
        """Wait for the owner task of a connection that is over to finish (never start a second one
        beside it: its end would overwrite the new connection's state)."""
        task = self._task
        if task is not None and not task.done():
            await asyncio.wait({task})

    def retry_in(self) -> float:
        """Seconds before a failed server may be tried again (0 when it may be now)."""
        return max(self._not_before - time.monotonic(), 0.0) if self.state == "failed" else 0.0

    def _failed_message(self) -> str:
        return (
            f"MCP server '{self.name}' failed {self.failures} times in a row ({self.last_error}); "
            f"see its log {self.log_path} and fix it, then /mcp restart {self.name}"
        )

    async def _start(self) -> None:
        try:
            settings = expanded(self.entry, self.env)
        except McpConfigError as exc:
            self._fail(str(exc), permanent=True)
            raise McpServerError(str(exc)) from None
        self.state = "starting"
        self._stop = asyncio.Event()
        ready: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._task = asyncio.create_task(self._own(settings, ready), name=f"mcp:{self.name}")
        timeout = settings.startup_timeout
        try:
            await asyncio.wait_for(asyncio.shield(ready), timeout)
        except TimeoutError:
            await self._kill_task()
            message = (
                f"MCP server '{self.name}' did not answer initialize within {timeout:g} s (startupTimeout); "
                f"check that '{self.entry.command_line()}' is an MCP server, see {self.log_path}"
            )
            self._fail(message)
            raise McpServerError(message) from None
        except Exception as exc:
            await self._kill_task()
            message = self._start_error(leaf(exc))
            self._fail(message)
            raise McpServerError(message) from None
        self.state = "running"
        self._started_at = time.monotonic()
        self.last_call = time.monotonic()

    def _start_error(self, exc: BaseException) -> str:
        name = self.name
        if isinstance(exc, FileNotFoundError):
            return (
                f"MCP server '{name}': command '{self.settings.command}' not found; install it or fix "
                "'command' in its configuration"
            )
        if isinstance(exc, PermissionError):
            return f"MCP server '{name}': command '{self.settings.command}' cannot be run ({exc.strerror})"
        if isinstance(exc, McpError):
            tail = self.log_tail(1).strip()
            seen = f"; its stderr ends: {tail[-200:]}" if tail else ""
            return f"MCP server '{name}' stopped while starting ({exc.error.message}){seen}"
        text = f"{type(exc).__name__}: {exc}"
        if self.settings.transport != "stdio":
            return f"MCP server '{name}' at {self.settings.url} could not be reached ({text[:300]})"
        return f"MCP server '{name}' could not start ({text[:300]})"

    async def _own(self, settings: McpServerSettings, ready: asyncio.Future[None]) -> None:
        """Hold one connection: open the transport, initialize, list tools, then wait for stop or death."""
        exit_note = "the connection closed"
        try:
            async with contextlib.AsyncExitStack() as stack:
                proc = None
                if settings.transport == "stdio":
                    self.log_path.parent.mkdir(parents=True, exist_ok=True)
                    errlog = stack.enter_context(open(self.log_path, "ab"))  # noqa: SIM115
                    params = StdioServerParameters(
                        command=settings.command or "",
                        args=list(settings.args),
                        env=dict(settings.env),
                        cwd=settings.cwd or str(self.project_dir),
                    )
                    read, write, proc, ended = await stack.enter_async_context(stdio_process(params, errlog))
                    self.pid, self._stdout_ended = proc.pid, ended
                else:
                    read, write = await self._open_http(stack, settings)
                session = await stack.enter_async_context(ClientSession(read, write))
                await session.initialize()
                self.tools = await _list_tools(session)
                caps = session.get_server_capabilities()
                if caps is not None and caps.prompts is not None:
                    with contextlib.suppress(McpError):
                        self.prompts = list((await session.list_prompts()).prompts)
                self._session = session
                ready.set_result(None)
                waiters: list[asyncio.Future[object]] = [asyncio.ensure_future(self._stop.wait())]
                if proc is not None:
                    waiters.append(asyncio.ensure_future(proc.wait()))
                    waiters.append(asyncio.ensure_future(ended.wait()))
                try:
                    await asyncio.wait(waiters, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    for waiter in waiters:
                        waiter.cancel()
                self._session = None
                if proc is not None and not self._stop.is_set() and proc.returncode is None:
                    with contextlib.suppress(TimeoutError):  # its stdout ended: it is usually exiting
                        await asyncio.wait_for(proc.wait(), STOP_GRACE)
                    exit_note = "closed its stdout but did not exit (it was stopped)"
                if proc is not None and proc.returncode is not None:
                    exit_note = f"exited with code {proc.returncode}"
        except asyncio.CancelledError:
            if not ready.done():
                ready.cancel()
            raise
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
                return
            exit_note = f"the connection failed ({type(leaf(exc)).__name__}: {leaf(exc)})"
        finally:
            self._session = None
            self.pid, self._stdout_ended = None, None
        if not self._stop.is_set() and not self._closing:
            self._died(exit_note)

    async def _open_http(
        self, stack: contextlib.AsyncExitStack, settings: McpServerSettings
    ) -> tuple[ReadStream, WriteStream]:
        if settings.transport == "sse":
            from mcp.client.sse import sse_client

            read, write = await stack.enter_async_context(
                sse_client(settings.url or "", headers=dict(settings.headers))
            )
            return read, write
        import httpx
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        timeout = httpx.Timeout(settings.startup_timeout, read=max(settings.tool_timeout, 300.0))
        http = await stack.enter_async_context(create_mcp_http_client(dict(settings.headers), timeout))
        read, write, _session_id = await stack.enter_async_context(
            streamable_http_client(settings.url or "", http_client=http)
        )
        return read, write

    # -- dying and restarting -----------------------------------------------------------------------
    def _fail(self, message: str, *, permanent: bool = False) -> None:
        self.last_error = message
        self.failures += 1
        if permanent or self.failures >= MAX_FAILURES:
            self.state = "failed"
            self._not_before = float("inf") if permanent else time.monotonic() + BACKOFF_MAX
        else:
            self.state = "failed"
            self._not_before = time.monotonic() + backoff(self.failures)

    def _died(self, note: str) -> None:
        """The server went away while nobody stopped it: note why and restart it after a backoff."""
        if time.monotonic() - self._started_at > STABLE_AFTER:
            self.failures = 0
        self.failures += 1
        self.restarts += 1
        self.last_error = f"MCP server '{self.name}' {note}"
        log.info("%s", self.last_error)
        if self.failures >= MAX_FAILURES:
            self.state = "failed"
            self._not_before = float("inf")
            self.last_error = self._failed_message()
            return
        self.state = "restarting"
        delay = backoff(self.failures)
        self._not_before = time.monotonic() + delay
        if self.users:
            self._restart = asyncio.get_running_loop().create_task(self._restart_later())

    async def _restart_later(self) -> None:
        with contextlib.suppress(McpServerError):
            await self.ensure_running()

    async def restart(self) -> None:
        """Stop the server (if running) and start it again now, forgetting past failures."""
        await self.stop()
        self.failures = 0
        self._not_before = 0.0
        await self.ensure_running()

    # -- calls --------------------------------------------------------------------------------------
    async def call(self, tool: str, arguments: dict[str, object]) -> types.CallToolResult:
        """Call ``tool``; serialised unless the server is declared ``concurrent``. Raises
        McpServerError (could not start, timed out, died during the call) with a readable message."""
        timeout = self.settings.tool_timeout
        self.calls[tool] = self.calls.get(tool, 0) + 1
        self.in_flight += 1
        self.last_call = time.monotonic()
        try:
            session = await self.ensure_running()
            lock = self._call_lock if not self.settings.concurrent else contextlib.nullcontext()
            try:
                async with asyncio.timeout(timeout):
                    async with lock:
                        if self._session is not session or self._connection_over():
                            session = await self.ensure_running()  # it ended while this call waited
                        return await session.call_tool(tool, arguments)
            except TimeoutError:
                raise McpServerError(
                    f"MCP server '{self.name}': {tool} did not answer within {timeout:g} s (toolTimeout); "
                    "the call was abandoned"
                ) from None
            except McpError as exc:
                if self._session is not session or exc.error.code == types.CONNECTION_CLOSED:
                    raise McpServerError(
                        f"MCP server '{self.name}' stopped during the call ({exc.error.message}); it is "
                        "being restarted: call the tool again"
                    ) from None
                raise McpServerError(f"MCP server '{self.name}': {tool}: {exc.error.message}") from None
            except (McpServerError, asyncio.CancelledError):
                raise
            except Exception as exc:
                inner = leaf(exc)
                if self.settings.transport != "stdio":  # a broken connection: reconnect on the next call
                    self._reset = asyncio.get_running_loop().create_task(self.stop())
                raise McpServerError(
                    f"MCP server '{self.name}': {tool} failed ({type(inner).__name__}: {inner})"
                ) from None
        finally:
            self.in_flight -= 1
            self.last_call = time.monotonic()

    async def prompt(self, name: str, arguments: dict[str, str]) -> str:
        """The text of the server's prompt ``name`` with ``arguments`` (its messages joined). Raises
        McpServerError naming the server when it cannot start or refuses the prompt."""
        session = await self.ensure_running()
        try:
            async with asyncio.timeout(self.settings.tool_timeout):
                result = await session.get_prompt(name, arguments)
        except TimeoutError:
            raise McpServerError(f"MCP server '{self.name}': prompt {name} did not answer in time") from None
        except McpError as exc:
            raise McpServerError(f"MCP server '{self.name}': prompt {name}: {exc.error.message}") from None
        parts = [m.content.text for m in result.messages if isinstance(m.content, types.TextContent)]
        return "\n\n".join(parts)

    async def read_resource(self, uri: str) -> str:
        """The text of the server's resource ``uri`` (binary parts described in one line). Raises
        McpServerError naming the server when it cannot start or cannot read it."""
        from pydantic import AnyUrl, ValidationError

        session = await self.ensure_running()
        try:
            async with asyncio.timeout(self.settings.tool_timeout):
                result = await session.read_resource(AnyUrl(uri))
        except ValidationError:
            raise McpServerError(f"MCP server '{self.name}': {uri!r} is not a resource URI") from None
        except TimeoutError:
            raise McpServerError(f"MCP server '{self.name}': {uri} did not answer in time") from None
        except McpError as exc:
            raise McpServerError(f"MCP server '{self.name}': {uri}: {exc.error.message}") from None
        parts = [
            c.text if isinstance(c, types.TextResourceContents) else f"[binary {c.mimeType or 'data'}]"
            for c in result.contents
        ]
        return "\n".join(parts)

    # -- stopping -----------------------------------------------------------------------------------
    async def stop(self) -> None:
        """Stop the server (close its stdin, then terminate it); its tool list is kept. A stop
        already under way is joined."""
        if self._stopping is None or self._stopping.done():
            self._stopping = asyncio.ensure_future(self._stop_now())
        await asyncio.shield(self._stopping)

    async def _stop_now(self) -> None:
        if self._restart is not None:
            self._restart.cancel()
            self._restart = None
        self._stop.set()
        task, self._task = self._task, None
        if task is not None:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, 10)
        if self.state != "failed":
            self.state = "stopped"

    async def close(self) -> None:
        """Stop for good (shutdown)."""
        self._closing = True
        await self.stop()

    async def _kill_task(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await asyncio.wait_for(task, 10)

    # -- reporting ----------------------------------------------------------------------------------
    def log_tail(self, lines: int = 10) -> str:
        """The last ``lines`` lines of the server's stderr log (at most the last 4 kB read)."""
        try:
            with open(self.log_path, "rb") as fh:
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(max(size - 4096, 0))
                data = fh.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(data.splitlines()[-lines:])

    def status(self, tool_names: tuple[str, ...]) -> ServerStatus:
        s = self.settings
        return ServerStatus(
            name=self.name,
            origin=self.entry.origin,
            transport=s.transport,
            scope=s.scope,
            state=self.state,
            pid=self.pid,
            rss_kib=rss_kib(self.pid),
            tools=tool_names,
            users=tuple(sorted(self.users)),
            last_error=self.last_error,
            restarts=self.restarts,
            log_path=self.log_path if s.transport == "stdio" else None,
            log_tail=self.log_tail() if s.transport == "stdio" else "",
            command=self.entry.command_line(),
        )


async def _list_tools(session: ClientSession) -> list[types.Tool]:
    """Every tool of the server (following pagination, at most 50 pages)."""
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _page in range(50):
        result = await session.list_tools(
            params=types.PaginatedRequestParams(cursor=cursor) if cursor else None
        )
        tools.extend(result.tools)
        cursor = result.nextCursor
        if not cursor:
            break
    return tools
