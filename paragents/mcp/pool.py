"""The pool: one server per (server, project) shared by every session of the project (one per
session for ``scope: "session"``), started on first need, stopped when no session uses it or when
idle; and :class:`SessionMcp`, one session's view of it (its tools, asked for before each request).

A project server (``.mcp.json``) nobody trusted yet is started only after the session that needs it
asked the user (:data:`AskTrust`); the answer is kept for the process, and written to the local
permission file when it is "always"."""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from mcp import types

from paragents import paths
from paragents.config import McpSettings
from paragents.mcp.project import ServerEntry, load_servers, remember_trust
from paragents.mcp.server import McpServerError, ServerHandle, ServerStatus
from paragents.mcp.tools import CHARS_PER_TOKEN, McpTool, make_tool, offered, schema_problem
from paragents.tools.output import cap_middle

TrustAnswer = Literal["once", "always", "refuse"]
AskTrust = Callable[[ServerEntry], Awaitable[TrustAnswer]]
"""Asks the user whether a project server may start (its command line shown)."""
RESOURCE_REF = re.compile(
    r"(?<![\w@])@([A-Za-z0-9_-]{1,64}):([A-Za-z][A-Za-z0-9+.-]*:[^\s]*[^\s.,;:!?)\]'\"])"
)
"""``@server:uri`` in a prompt (the URI needs a scheme, e.g. ``@docs:file:///a.md``)."""
IDLE_CHECK = 30.0
"""Seconds between checks for idle servers."""


def project_file_stamp(project_dir: Path) -> tuple[float, int] | None:
    """The project's ``.mcp.json`` as (mtime, size), or None when there is none."""
    try:
        stat = (project_dir / ".mcp.json").stat()
    except OSError:
        return None
    return (stat.st_mtime, stat.st_size)


class McpPool:
    """Every configured server of one project and the running ones, by (name, owning session)."""

    def __init__(
        self,
        project_dir: Path,
        settings: McpSettings,
        settings_files: Sequence[Path] = (),
        *,
        env: Mapping[str, str] | None = None,
        log_dir: Path | None = None,
    ) -> None:
        self.project_dir = project_dir
        self.settings = settings
        self.env: Mapping[str, str] = os.environ if env is None else env
        self.log_dir = log_dir or paths.state_dir() / "mcp-logs"
        self.entries, self.problems = load_servers(project_dir, settings, settings_files)
        self.read_stamp = project_file_stamp(project_dir)
        """``.mcp.json``'s (mtime, size) when the servers were read (None: there was none)."""
        self.handles: dict[tuple[str, str | None], ServerHandle] = {}
        self.trust: dict[str, bool] = {}
        """Answers given in this process to "may this project server start?"."""
        self._asking: dict[str, asyncio.Future[bool]] = {}
        self._reaper: asyncio.Task[None] | None = None
        self._stopping: set[asyncio.Task[None]] = set()

    async def reconfigure(self, settings: McpSettings, settings_files: Sequence[Path] = ()) -> None:
        """Read the servers again (``/reload``): servers whose entry changed or went away are stopped
        (sessions start the new entry on their next request); unchanged ones keep running."""
        entries, problems = load_servers(self.project_dir, settings, settings_files)
        self.read_stamp = project_file_stamp(self.project_dir)
        for key, handle in list(self.handles.items()):
            if entries.get(key[0]) != handle.entry:
                await handle.close()
                del self.handles[key]
        self.settings, self.entries, self.problems = settings, entries, problems

    def project_file_changed(self) -> bool:
        """True when the project's ``.mcp.json`` was added, changed or removed since it was read (it
        is read at start and by ``/reload``)."""
        return project_file_stamp(self.project_dir) != self.read_stamp

    def for_session(self, sid: str) -> SessionMcp:
        """The view of the pool one session's agent uses."""
        return SessionMcp(self, sid)

    def handle(self, name: str, sid: str) -> ServerHandle:
        """The handle serving ``sid`` for server ``name`` (created on first need, not started)."""
        entry = self.entries[name]
        owner = sid if entry.settings.scope == "session" else None
        key = (name, owner)
        if key not in self.handles:
            self.handles[key] = ServerHandle(entry, owner, self.project_dir, self.log_dir, self.env)
            self._start_reaper()
        return self.handles[key]

    async def allowed(self, entry: ServerEntry, ask: AskTrust | None) -> bool:
        """Whether ``entry`` may start: user servers yes; project servers by the permission files, else
        by the answer to one ask (shared by sessions asking at the same time)."""
        if entry.origin == "user" or entry.trust == "trusted":
            return True
        if entry.trust == "refused":
            return False
        if entry.name in self.trust:
            return self.trust[entry.name]
        if ask is None:
            return False
        if entry.name in self._asking:
            return await self._asking[entry.name]
        future: asyncio.Future[bool] = asyncio.get_running_loop().create_future()
        self._asking[entry.name] = future
        try:
            answer = await ask(entry)
            ok = answer in ("once", "always")
            if answer == "always":
                remember_trust(self.project_dir, entry.name, entry.settings)
            self.trust[entry.name] = ok
            future.set_result(ok)
            return ok
        except BaseException:
            future.set_result(False)
            raise
        finally:
            self._asking.pop(entry.name, None)

    def release(self, sid: str) -> None:
        """``sid`` closed: it no longer uses any server; servers left without users are stopped."""
        for key, handle in list(self.handles.items()):
            handle.users.discard(sid)
            if not handle.users and handle.state in ("running", "starting", "restarting"):
                task = asyncio.get_running_loop().create_task(handle.stop())
                self._stopping.add(task)  # keep a reference until it is done
                task.add_done_callback(self._stopping.discard)
            if key[1] == sid:
                del self.handles[key]

    async def restart(self, name: str) -> str:
        """``/mcp restart NAME``: restart every process of server ``name``; return what happened."""
        found = [h for (n, _o), h in self.handles.items() if n == name]
        if name not in self.entries:
            raise McpServerError(f"no MCP server named '{name}'; /mcp lists them")
        if not found:
            return f"MCP server '{name}' is not started yet (it starts when a session needs it)"
        for handle in found:
            await handle.restart()
        return f"MCP server '{name}' restarted"

    def status(self) -> list[ServerStatus]:
        """One row per server process (or per configured server not started yet), by name."""
        rows: list[ServerStatus] = []
        for name, entry in sorted(self.entries.items()):
            handles = [h for (n, _o), h in self.handles.items() if n == name]
            if not handles:
                state = "disabled" if not entry.settings.enabled else "not started"
                if entry.origin == "project" and not self._trusted_now(entry):
                    state = (
                        "not trusted" if entry.trust == "refused" or name in self.trust else "not asked yet"
                    )
                rows.append(ServerStatus(
                    name, entry.origin, entry.settings.transport, entry.settings.scope, state, None, None,
                    (), (), None, 0, None, "", entry.command_line(),
                ))  # fmt: skip
            for handle in handles:
                names = tuple(
                    t.name
                    for t in (handle.tools or [])
                    if offered(t.name, entry.settings.enabled_tools, entry.settings.disabled_tools)
                    and schema_problem(t) is None
                )
                rows.append(handle.status(names))
        return rows

    def _trusted_now(self, entry: ServerEntry) -> bool:
        return entry.trust == "trusted" or self.trust.get(entry.name, False)

    def _start_reaper(self) -> None:
        if self._reaper is None or self._reaper.done():
            with contextlib.suppress(RuntimeError):
                self._reaper = asyncio.get_running_loop().create_task(self._reap())

    async def _reap(self) -> None:
        """Stop servers without a call for their ``idleTimeout`` (they start again on the next call)."""
        while True:
            await asyncio.sleep(IDLE_CHECK)
            now = time.monotonic()
            for handle in list(self.handles.values()):
                idle = handle.settings.idle_timeout
                if (
                    idle
                    and handle.state == "running"
                    and not handle.in_flight
                    and now - handle.last_call > idle
                ):
                    await handle.stop()

    async def shutdown(self) -> None:
        """Stop every server (at exit)."""
        if self._reaper is not None:
            self._reaper.cancel()
        await asyncio.gather(*self._stopping, return_exceptions=True)
        await asyncio.gather(*(h.close() for h in self.handles.values()), return_exceptions=True)
        self.handles.clear()


def prompt_arguments(prompt: types.Prompt, text: str) -> dict[str, str]:
    """Fill ``prompt``'s arguments from ``text``; raise McpServerError naming a missing required one."""
    import shlex

    declared = [a.name for a in prompt.arguments or []]
    try:
        words = shlex.split(text)
    except ValueError:
        words = text.split()
    args: dict[str, str] = {}
    if words and all("=" in w and w.split("=", 1)[0] in declared for w in words):
        args = dict(w.split("=", 1) for w in words)
    elif words and declared:
        head = words[: len(declared) - 1]
        args = dict(zip(declared, head, strict=False))
        rest = words[len(head) :]
        if rest:
            args[declared[len(head)]] = " ".join(rest)
    missing = [a.name for a in prompt.arguments or [] if a.required and a.name not in args]
    if missing:
        usage = " ".join(f"{n}=..." for n in declared)
        raise McpServerError(
            f"prompt {prompt.name} needs {', '.join(missing)}: /mcp__…__{prompt.name} {usage}"
        )
    return args


class SessionMcp:
    """One session's MCP tools: :meth:`prepare` before each request, then :meth:`specs` / :meth:`get`."""

    def __init__(self, pool: McpPool, sid: str) -> None:
        self.pool = pool
        self.sid = sid
        self.tools: dict[str, McpTool] = {}
        self._told: set[str] = set()
        self._cache: dict[int, tuple[object, list[McpTool], list[str]]] = {}
        """Per handle: its tool list as last built from (by identity), the tools and the problems."""

    def _build(self, handle: ServerHandle) -> tuple[list[McpTool], list[str]]:
        """The agent tools of ``handle``'s listed tools (rebuilt only when it listed them anew)."""
        cached = self._cache.get(id(handle))
        if cached is not None and cached[0] is handle.tools:
            return cached[1], cached[2]
        s = handle.settings
        built: list[McpTool] = []
        problems: list[str] = []
        for remote in handle.tools or []:
            if not offered(remote.name, s.enabled_tools, s.disabled_tools):
                continue
            bad = schema_problem(remote)
            if bad:
                problems.append(f"MCP server '{handle.name}': tool '{remote.name}' is not offered: {bad}")
                continue
            built.append(make_tool(handle, remote))
        self._cache[id(handle)] = (handle.tools, built, problems)
        return built, problems

    async def prepare(self, ask: AskTrust | None = None) -> list[str]:
        """Make sure every enabled server this session may use is started (or its tools known) and
        rebuild the session's tools; return the problems not reported to this session before (a
        server that could not start, a tool with an invalid schema, a bad .mcp.json)."""
        pool = self.pool
        problems = list(pool.problems)
        handles: list[ServerHandle] = []
        for name, entry in pool.entries.items():
            if not entry.settings.enabled:
                continue
            if not await pool.allowed(entry, ask):
                problems.append(
                    f"MCP server '{name}' of .mcp.json is not trusted, so it was not started; allow it "
                    'with "enabledMcpjsonServers": ["' + name + '"] in .paragents/permissions.local.json'
                )
                continue
            handle = pool.handle(name, self.sid)
            handle.users.add(self.sid)
            handles.append(handle)

        async def ready(handle: ServerHandle) -> str | None:
            if handle.tools is not None and handle.state != "failed":
                return None  # known tools: a stopped or restarting server starts again on the next call
            if handle.retry_in() > 0:
                return handle.last_error  # told once already (same text): no retry before the backoff
            try:
                await handle.ensure_running()
            except McpServerError as exc:
                return str(exc)
            return None

        results = await asyncio.gather(*(ready(h) for h in handles))
        problems.extend(p for p in results if p)
        tools: dict[str, McpTool] = {}
        for handle in handles:
            built, bad = self._build(handle)
            problems.extend(bad)
            for tool in built:
                tools.setdefault(tool.name, tool)
        self.tools = tools
        new = [p for p in dict.fromkeys(problems) if p not in self._told]
        self._told.update(new)
        return new

    async def prompt(self, command: str, text: str) -> str:
        """Expand ``/mcp__server__prompt ARGS``: find the server's prompt, fill its arguments from
        ``text`` (``key=value`` words, else the words in the order the prompt declares its arguments,
        the last one taking the rest) and return the prompt's text. Raises McpServerError."""
        server, _, name = command.removeprefix("mcp__").partition("__")
        if server not in self.pool.entries or not name:
            raise McpServerError(
                f"no MCP prompt {command}: /mcp lists the servers (prompts: /mcp__SERVER__PROMPT)"
            )
        entry = self.pool.entries[server]
        if not entry.settings.enabled or not await self.pool.allowed(entry, None):
            raise McpServerError(f"MCP server '{server}' is not enabled or not trusted yet")
        handle = self.pool.handle(server, self.sid)
        handle.users.add(self.sid)
        await handle.ensure_running()
        prompt = next((p for p in handle.prompts if p.name == name), None)
        if prompt is None:
            known = ", ".join(f"/mcp__{server}__{p.name}" for p in handle.prompts) or "none"
            raise McpServerError(f"MCP server '{server}' has no prompt '{name}' (its prompts: {known})")
        return await handle.prompt(name, prompt_arguments(prompt, text))

    async def attach(self, text: str, limit: int) -> tuple[str, list[str]]:
        """Append the resources a prompt names as ``@server:uri`` (a configured server, a URI with a
        scheme) to it, each capped to ``limit`` characters; return the text and the problems."""
        found = [
            (m.group(0), m.group(1), m.group(2))
            for m in RESOURCE_REF.finditer(text)
            if m.group(1) in self.pool.entries
        ]
        if not found:
            return text, []

        blocks: list[str] = []
        problems: list[str] = []
        for ref, server, uri in dict.fromkeys(found):
            entry = self.pool.entries[server]
            try:
                if not entry.settings.enabled or not await self.pool.allowed(entry, None):
                    raise McpServerError(f"MCP server '{server}' is not enabled or not trusted yet")
                handle = self.pool.handle(server, self.sid)
                handle.users.add(self.sid)
                body = await handle.read_resource(uri)
            except McpServerError as exc:
                problems.append(f"{ref} was not attached: {exc}")
                continue
            blocks.append(f"[{ref}]\n{cap_middle(body, limit)}")
        return ("\n\n".join([text, *blocks]) if blocks else text), problems

    def specs(self) -> list[dict[str, object]]:
        """The ``tools`` items of this session's MCP tools (after the built-in ones in a request)."""
        return [tool.spec() for tool in self.tools.values()]

    def get(self, name: str) -> McpTool | None:
        return self.tools.get(name)

    def spec_tokens(self, estimate: Callable[[Any], int] | None = None) -> dict[str, int]:
        """Estimated tokens the MCP tool schemas add to each request, by server. ``estimate`` gives
        a spec's tokens: the agent's own estimate (``agent.tokens.estimate_json_tokens``), so ``/mcp``
        says what the context counts; without it, its JSON length / :data:`CHARS_PER_TOKEN`."""
        import json

        def rough(spec: Any) -> int:
            return len(json.dumps(spec, ensure_ascii=False)) // CHARS_PER_TOKEN

        count = estimate or rough
        out: dict[str, int] = {}
        for tool in self.tools.values():
            out[tool.server] = out.get(tool.server, 0) + count(tool.spec())
        return out
