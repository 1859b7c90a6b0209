"""The stdio transport of a pooled server: the SDK's ``stdio_client`` made to also hand back the
process (the pool shows its PID and RSS and notices at once when it dies) and an event set when its
stdout ends (the connection is over then, even before its exit status comes in), and to write the
server's stderr to a log file (``/mcp`` shows its tail). Messages are parsed and sent with the SDK's
types; the shutdown follows the SDK (close stdin, wait, then terminate the process group)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager, suppress
from typing import IO

import anyio
import anyio.lowlevel
from anyio.abc import ByteReceiveStream, Process
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from anyio.streams.text import TextReceiveStream
from mcp import types
from mcp.client.stdio import StdioServerParameters, get_default_environment
from mcp.os.posix.utilities import terminate_posix_process_tree
from mcp.shared.message import SessionMessage

log = logging.getLogger(__name__)
STOP_GRACE = 2.0
"""Seconds a server has to exit after its stdin closes before its process group is terminated."""

ReadStream = MemoryObjectReceiveStream[SessionMessage | Exception]
WriteStream = MemoryObjectSendStream[SessionMessage]


@asynccontextmanager
async def stdio_process(
    server: StdioServerParameters, errlog: IO[bytes]
) -> AsyncIterator[tuple[ReadStream, WriteStream, Process, anyio.Event]]:
    """Start ``server`` in its own process group; yield (read stream, write stream, process, stdout
    ended). The event is set before the read stream closes, so whoever sees "connection closed" sees it
    set. Raises OSError (e.g. FileNotFoundError) when the program cannot be started."""
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)
    env = {**get_default_environment(), **(server.env or {})}
    try:
        process = await anyio.open_process(
            [server.command, *server.args],
            env=env,
            stderr=errlog,
            cwd=server.cwd,
            start_new_session=True,
        )
    except OSError:
        for stream in (read_stream, write_stream, read_writer, write_reader):
            await stream.aclose()
        raise

    stdout_ended = anyio.Event()

    async def stdout_reader() -> None:
        assert process.stdout is not None
        try:
            async with read_writer:
                try:
                    await read_lines(process.stdout, read_writer)
                finally:
                    stdout_ended.set()  # before the read stream closes (the SDK then fails the calls)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            await anyio.lowlevel.checkpoint()

    async def stdin_writer() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_none=True)
                    await process.stdin.send((data + "\n").encode("utf-8"))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            await anyio.lowlevel.checkpoint()

    async with anyio.create_task_group() as tg, process:
        tg.start_soon(stdout_reader)
        tg.start_soon(stdin_writer)
        try:
            yield read_stream, write_stream, process, stdout_ended
        finally:
            with anyio.CancelScope(shield=True):
                if process.stdin is not None:
                    with suppress(Exception):
                        await process.stdin.aclose()
                try:
                    with anyio.fail_after(STOP_GRACE):
                        await process.wait()
                except TimeoutError:
                    await terminate_posix_process_tree(process)
                except ProcessLookupError:
                    pass
                for stream in (read_stream, write_stream, read_writer, write_reader):
                    await stream.aclose()


async def read_lines(
    stdout: ByteReceiveStream, out: MemoryObjectSendStream[SessionMessage | Exception]
) -> None:
    """Send each JSON-RPC line of ``stdout`` to ``out`` (a line that does not parse as an exception)
    until the stream ends."""
    pending: list[str] = []  # a long line (a 10 MB result) arrives in many chunks
    async for chunk in TextReceiveStream(stdout, encoding="utf-8", errors="replace"):
        if "\n" not in chunk:
            pending.append(chunk)
            continue
        lines = ("".join(pending) + chunk).split("\n")
        pending = [lines.pop()]
        for line in lines:
            if not line.strip():
                continue
            try:
                message = types.JSONRPCMessage.model_validate_json(line)
            except Exception as exc:
                await out.send(exc)
                continue
            await out.send(SessionMessage(message))
