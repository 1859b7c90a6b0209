"""A remote lane's block of ports, reachable from this machine: :class:`PortForwards`.

Each port of the lane's block (``PARAGENTS_PORT`` .. +9, the numbers its commands get) is listened on
at ``127.0.0.1`` here; each connection runs one relay in the lane (:meth:`RemoteBackend.relay`: an
exec copying between its stdin/stdout and the lane's own ``127.0.0.1:PORT``), so a dev server the
lane starts on ``$PORT`` answers at ``http://127.0.0.1:$PORT`` here. It needs no network in the
container (the relay talks to the container's loopback through bash's ``/dev/tcp``) and works the
same through the Docker Engine API and the Kubernetes exec stream. Only this machine's loopback
listens: nothing is exposed to the network."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator

from paragents.backends.base import BackendError
from paragents.backends.lane import RemoteLane

LINGER = 5.0
"""Seconds a connection's relay may go on after the client here stopped sending (a server still
answering), before it is closed."""
HOST = "127.0.0.1"


class PortForwards:
    """The forwarded ports of one lane (see the module docstring)."""

    def __init__(self, lane: RemoteLane, ports: list[int], host: str = HOST) -> None:
        self.lane = lane
        self.ports = ports
        self.host = host
        self.servers: dict[int, asyncio.Server] = {}
        self.connections = 0
        """Connections relayed so far (the overview and the tests read it)."""
        self._tasks: set[asyncio.Task[None]] = set()

    async def start(self) -> list[int]:
        """Listen on every port of the block; return those already in use here (not forwarded)."""
        if getattr(self.lane.backend, "relay", None) is None:
            return []
        busy = []
        for port in self.ports:
            try:
                self.servers[port] = await asyncio.start_server(
                    functools.partial(self._serve, port), self.host, port
                )
            except OSError:
                busy.append(port)
        return busy

    async def _serve(self, port: int, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._tasks.add(task)
        self.connections += 1
        sent_all = asyncio.Event()

        async def incoming() -> AsyncIterator[bytes]:
            try:
                while data := await reader.read(65536):
                    yield data
            finally:
                sent_all.set()

        def outgoing(data: bytes) -> None:
            if not writer.is_closing():
                writer.write(data)

        relay = getattr(self.lane.backend, "relay")  # noqa: B009 (not on the ExecutionBackend protocol)
        run = asyncio.create_task(self.lane.call(lambda: relay(port, incoming(), outgoing)))
        ended = asyncio.create_task(sent_all.wait())
        try:
            await asyncio.wait({run, ended}, return_when=asyncio.FIRST_COMPLETED)
            if not run.done():
                await asyncio.wait({run}, timeout=LINGER)
        finally:
            ended.cancel()
            if not run.done():
                run.cancel()
            with contextlib.suppress(asyncio.CancelledError, BackendError, Exception):
                await run
            with contextlib.suppress(Exception):
                await writer.drain()
            writer.close()
            if task is not None:
                self._tasks.discard(task)

    async def close(self) -> None:
        """Stop listening and drop the open connections."""
        for server in self.servers.values():
            server.close()
        for task in list(self._tasks):
            task.cancel()
        for server in self.servers.values():
            with contextlib.suppress(Exception):
                await server.wait_closed()
        self.servers.clear()
