"""Bash-family tool: ``run_command``, a ``bash -c`` command in the session's working directory.

The command runs in a new session (so in its own process group) with stdin from /dev/null and
stdout+stderr captured together through one pipe. On timeout or cancellation the whole process
group is signalled: SIGTERM, then SIGKILL after a grace period. Its environment is the user's (not
paragents' own virtualenv) through an allow-list of harmless variables plus ``sandbox.env_allow``
(paragents.tools.env), so keys, tokens and passwords cannot leak into tool output. Output is decoded
as UTF-8 (replace), cleaned of terminal escape sequences and capped keeping its head and tail. With
a sandbox in the context (paragents.tools.sandbox) it runs inside bubblewrap; ``meta["sandboxed"]``
says whether it did.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import replace
from pathlib import Path
from typing import Any, ClassVar

from paragents.models import CallPreview
from paragents.tools.base import Tool, ToolContext, ToolFamily, ToolResult, bounded_lines
from paragents.tools.env import FORCED_ENV as FORCED_ENV  # re-exported (the env lives in env.py)
from paragents.tools.env import command_env as command_env
from paragents.tools.env import is_secret_env as is_secret_env
from paragents.tools.output import cap_middle, cap_parts, clean_output
from paragents.tools.sandbox import Prepared, check, prepare

TERM_GRACE = 2.0
"""Seconds between SIGTERM and SIGKILL when a command times out."""
CANCEL_GRACE = 0.3
"""Seconds between SIGTERM and SIGKILL when the running tool call is cancelled."""
POST_EXIT_DRAIN = 1.0
"""Seconds to keep reading after the command exits, while background processes still hold the pipe."""
MAX_TIMEOUT = 3600.0
"""Largest ``timeout`` argument accepted, in seconds."""

TOOL_ENV = "PARAGENTS_TOOL_SESSION"
"""Set (to the session id) for every command: its processes are a session's tool and may not answer
asks (``paragents.sessions.answerer``)."""


class OutputCapture:
    """Bounded capture of a byte stream: keeps the first and the last ``keep`` bytes and counts
    the characters dropped in between (UTF-8, approximately at the cut points)."""

    def __init__(self, keep: int) -> None:
        """``keep``: bytes kept at each end."""
        self.keep = keep
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped_chars = 0
        self.total_bytes = 0

    def feed(self, chunk: bytes) -> None:
        """Add one chunk read from the stream."""
        self.total_bytes += len(chunk)
        room = self.keep - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if not chunk:
            return
        self.tail += chunk
        extra = len(self.tail) - self.keep
        if extra > 0:
            self.dropped_chars += len(bytes(self.tail[:extra]).decode("utf-8", errors="replace"))
            del self.tail[:extra]

    def text(self, limit: int) -> str:
        """Return the captured output as clean text of about ``limit`` characters at most."""
        if self.dropped_chars == 0:
            return cap_middle(clean_output(bytes(self.head + self.tail)), limit)
        return cap_parts(
            clean_output(bytes(self.head)), clean_output(bytes(self.tail)), limit, self.dropped_chars
        )


def _signal_group(pgid: int, sig: signal.Signals) -> None:
    """Send ``sig`` to process group ``pgid``; a group that is already gone is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


async def kill_group(proc: asyncio.subprocess.Process, grace: float) -> None:
    """Stop ``proc``'s whole process group: SIGTERM, wait up to ``grace`` seconds for the leader to
    exit, then SIGKILL the group (always, so children that ignored SIGTERM go too) and reap it."""
    pgid = proc.pid
    _signal_group(pgid, signal.SIGTERM)
    try:
        await asyncio.wait_for(proc.wait(), grace)
    except TimeoutError:
        pass
    finally:
        _signal_group(pgid, signal.SIGKILL)
    await proc.wait()


def _describe_exit(code: int) -> str:
    """Return ``exit code N``, naming the signal when the command was killed by one."""
    if code < 0:
        try:
            return f"exit code {code} (killed by {signal.Signals(-code).name})"
        except ValueError:
            return f"exit code {code} (killed by signal {-code})"
    return f"exit code {code}"


async def settle(boxed: Prepared | None) -> list[str]:
    """What the sandboxed command left behind, settled (:meth:`Prepared.settle`), also when the call
    was cancelled (the sandbox ended with it: nothing of it still runs)."""
    if boxed is None:
        return []
    task = asyncio.ensure_future(boxed.settle())
    try:
        return await asyncio.shield(task)
    except asyncio.CancelledError:
        await asyncio.wait({task})  # finish before the cancellation goes on
        raise


def _with_notices(result: ToolResult, boxed: Prepared | None, notices: list[str]) -> ToolResult:
    """``result`` with the sandbox's notes: what the command left behind, a write refused in a
    read-only hard-linked environment."""
    extra = [f"[{n}]" for n in notices]
    if boxed is not None and result.is_error and (hint := boxed.write_hint(result.content)):
        extra.append(f"[{hint}]")
    if extra:
        result.content += "\n" + "\n".join(extra)
        result.meta["sandbox_notices"] = notices
    return result


class RunCommand(Tool):
    """``run_command(command, timeout?, cwd?)``: run ``bash -c command`` and return its output."""

    name: ClassVar[str] = "run_command"
    family: ClassVar[ToolFamily] = "bash"
    description: ClassVar[str] = (
        "Run a shell command with 'bash -c' in the working directory (or the subdirectory 'cwd'). "
        "Returns combined stdout and stderr and the exit code. stdin is empty; no pagers or colours. "
        "The command is killed with its child processes after 'timeout' seconds. For long-running "
        "servers, redirect their output to a file and run them in the background."
    )
    parameters: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "command": {"type": "string", "minLength": 1, "description": "The bash command line."},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": MAX_TIMEOUT,
                "description": "Seconds before the command is killed (default: the session's setting).",
            },
            "cwd": {
                "type": "string",
                "minLength": 1,
                "description": "Directory to run in: a subdirectory of the working directory.",
            },
        },
        "required": ["command"],
        "additionalProperties": False,
    }

    def summarize(self, args: dict[str, Any]) -> str:
        """Return e.g. ``run_command pytest -q`` (with `` (in sub)`` for a cwd)."""
        cwd = args.get("cwd")
        return self._line(str(args.get("command", "")) + (f" (in {cwd})" if cwd else ""))

    def _workdir(self, ctx: ToolContext, cwd: str | None) -> Path | str:
        """Return the directory to run in, or an error message when ``cwd`` is not a subdirectory."""
        base = ctx.workdir.resolve()
        if not cwd:
            return base
        target = (base / os.path.expanduser(cwd)).resolve()  # symlinks resolved, as the policy does
        if not target.is_relative_to(base):
            return f"cwd '{cwd}' must be a directory inside the working directory {base}"
        if not target.is_dir():
            return f"cwd '{cwd}' is not an existing directory under the working directory"
        return target

    def preview(self, args: dict[str, Any], workdir: Path) -> CallPreview:
        """The full command line, the directory it runs in and its timeout."""
        where = self._workdir(ToolContext(workdir=workdir), args.get("cwd"))
        text, omitted = bounded_lines(str(args["command"]))
        timeout = args.get("timeout")
        detail = "bash -c" + (f", timeout {timeout:g} s" if timeout else "")
        if isinstance(where, str):
            return CallPreview("command", text, detail, omitted=omitted, problem=where)
        return CallPreview("command", text, detail, cwd=str(where), omitted=omitted)

    async def run(self, args: dict[str, Any], ctx: ToolContext) -> ToolResult:
        """Run the command; non-zero exit and timeout give ``is_error`` results. On cancellation
        the process group is killed at once and CancelledError is re-raised."""
        if ctx.execution is not None:  # a lane on another machine (paragents.tools.remote)
            return await ctx.execution.run_tool(self, args, ctx)
        command: str = args["command"]
        timeout = float(args.get("timeout") or ctx.command_timeout)
        where = self._workdir(ctx, args.get("cwd"))
        if isinstance(where, str):
            return ToolResult(content=where, is_error=True)
        argv = ["bash", "-c", command]
        sandboxed = False
        boxed: Prepared | None = None
        if ctx.sandbox is not None:
            status = check(ctx.sandbox)
            if status.state == "refused":
                return ToolResult(content=status.message, is_error=True, meta={"sandboxed": False})
            if status.active and status.bwrap:
                sandbox = ctx.sandbox if ctx.sandbox.root else replace(ctx.sandbox, root=ctx.workdir)
                boxed = prepare(status.bwrap, sandbox, where, argv)
                argv = boxed.argv
                sandboxed = True
        try:
            result = await self._run(argv, where, timeout, ctx, sandboxed)
        finally:
            notices = await settle(boxed)
        return _with_notices(result, boxed, notices)

    async def _run(
        self, argv: list[str], where: Path, timeout: float, ctx: ToolContext, sandboxed: bool
    ) -> ToolResult:
        """Start ``argv`` in ``where`` and capture its output (see :meth:`run`)."""
        loop = asyncio.get_running_loop()
        read_fd, write_fd = os.pipe()
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=write_fd,
                stderr=write_fd,
                cwd=where,
                env=command_env(allow=ctx.sandbox.env_allow if ctx.sandbox else ())
                | ctx.env
                | {TOOL_ENV: ctx.session_id or "-"},
                start_new_session=True,
            )
        except OSError as exc:
            os.close(read_fd)
            what = "bwrap" if sandboxed else "bash"
            return ToolResult(content=f"cannot start {what}: {exc.strerror or exc}", is_error=True)
        finally:
            os.close(write_fd)
        capture = OutputCapture(ctx.max_output_chars)
        stream = asyncio.StreamReader()
        pipe = os.fdopen(read_fd, "rb", buffering=0)
        transport: asyncio.ReadTransport | None = None
        pump: asyncio.Task[None] | None = None
        started = time.monotonic()
        timed_out = lingering = False
        try:
            transport, _ = await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(stream), pipe)
            pump = asyncio.create_task(self._pump(stream, capture))
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                timed_out = True
                await kill_group(proc, TERM_GRACE)
            try:
                await asyncio.wait_for(asyncio.shield(pump), POST_EXIT_DRAIN)
            except TimeoutError:
                lingering = True
        except BaseException:
            # Cancelled (or an unexpected failure): stop the whole group at once, then re-raise.
            await kill_group(proc, CANCEL_GRACE)
            raise
        finally:
            if pump is not None:
                pump.cancel()
            if transport is not None:
                transport.close()
            else:
                pipe.close()
        code = proc.returncode if proc.returncode is not None else -1
        result = self._result(capture, ctx, code, timeout, timed_out, lingering, time.monotonic() - started)
        result.meta["sandboxed"] = sandboxed
        if sandboxed and code != 0:
            net = "no network" if ctx.sandbox and ctx.sandbox.network == "none" else "network allowed"
            result.content += f"\n[ran sandboxed: read-only outside the working directory, {net}]"
        return result

    @staticmethod
    async def _pump(stream: asyncio.StreamReader, capture: OutputCapture) -> None:
        """Read ``stream`` to EOF into ``capture``."""
        while chunk := await stream.read(65536):
            capture.feed(chunk)

    def _result(
        self,
        capture: OutputCapture,
        ctx: ToolContext,
        code: int,
        timeout: float,
        timed_out: bool,
        lingering: bool,
        duration: float,
    ) -> ToolResult:
        """Build the result text: output (capped), notes, and the ``exit code N`` line."""
        notes = []
        if timed_out:
            notes.append(
                f"[timed out after {timeout:g}s: killed the command's process group "
                f"(SIGTERM, then SIGKILL after {TERM_GRACE:g}s)]"
            )
        if lingering:
            notes.append(
                "[background processes still hold the output; what they print later is not captured]"
            )
        notes.append(_describe_exit(code))
        tail = "\n".join(notes)
        output = capture.text(max(ctx.max_output_chars - len(tail) - 2, 100))
        if not output.strip():
            output = "(no output)"
        content = output.rstrip("\n") + "\n" + tail
        return ToolResult(
            content=content,
            is_error=timed_out or code != 0,
            meta={
                "exit_code": code,
                "timed_out": timed_out,
                "output_bytes": capture.total_bytes,
                "duration_s": round(duration, 3),
            },
        )
