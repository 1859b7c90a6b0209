"""``paragents serve --tui``: the whole app in a browser through textual-serve, under ``/tui/``.

textual-serve has no authentication of its own; its aiohttp routes (page, websocket, static files,
downloads) are mounted as a sub-application of the API, so the API's middlewares (lock-out, rate
limit, Host and Origin checks, the key or the paired cookie) guard every one of them. Each browser
tab starts one ``paragents`` process on the project; they share the store."""

from __future__ import annotations

import asyncio
import logging
import shlex
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from paragents.serve.app import STATE

if TYPE_CHECKING:
    from paragents.serve.server import ServeThread

PREFIX = "/tui/"
log = logging.getLogger("paragents.serve")


class ReapingAppService(AppService):
    """textual-serve's app service that also waits for the app's process to exit (killing it after
    ``grace`` seconds), so no process or transport outlives the server."""

    grace = 15.0

    async def stop(self) -> None:
        await super().stop()
        process = self._process
        if process is None or process.returncode is not None:
            return
        try:
            await asyncio.wait_for(process.wait(), self.grace)
        except TimeoutError:
            process.kill()
            await process.wait()


class GuardedServer(Server):
    """textual-serve's server without its banner, building its links from the request's own host
    (so it works behind ``ssh -L`` on another port)."""

    async def handle_index(self, request: web.Request) -> Any:
        self.public_url = f"{request.scheme}://{request.host}"  # read synchronously by the parent
        return await Server.handle_index(self, request)

    tasks: set[asyncio.Task[Any]]

    async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
        """textual-serve's websocket handler, with an app service that waits for its process to end."""
        task = asyncio.current_task()
        assert task is not None
        self.tasks.add(task)
        websocket = web.WebSocketResponse(heartbeat=15)
        width = to_int(request.query.get("width", "80"), 80)
        height = to_int(request.query.get("height", "24"), 24)
        service: ReapingAppService | None = None
        try:
            await websocket.prepare(request)
            service = ReapingAppService(
                self.command,
                write_bytes=websocket.send_bytes,
                write_str=websocket.send_str,
                close=websocket.close,  # type: ignore[arg-type]  # as textual-serve passes it
                download_manager=self.download_manager,
                debug=self.debug,
            )
            await service.start(width, height)
            await self._process_messages(websocket, service)
        except asyncio.CancelledError:
            await websocket.close()
        except Exception:
            log.exception("serve --tui: the app's websocket failed")
        finally:
            if service is not None:
                await service.stop()
            self.tasks.discard(task)
        return websocket

    async def close(self, timeout: float = 20.0) -> None:
        """End every browser tab's app (textual-serve sends it "quit" and waits for it)."""
        tasks = list(self.tasks)
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)

    async def sub_app(self) -> web.Application:
        """textual-serve's application, to be mounted under :data:`PREFIX`."""
        app = await self._make_app()
        app.on_startup.clear()  # the banner printed to stdout
        return app


def app_command(project_dir: Path, extra: Sequence[str] = ()) -> str:
    """The shell command each browser tab runs: this Python's ``paragents`` on ``project_dir`` with the
    ``extra`` arguments (``--endpoint``, ``--model``... as ``paragents serve`` got them)."""
    argv = [sys.executable, "-m", "paragents.cli", "--dir", str(project_dir), *extra]
    return shlex.join(argv)


def tui_extension(
    project_dir: Path, command: str | None = None, extra: Sequence[str] = ()
) -> Callable[[web.Application, ServeThread], Awaitable[None]]:
    """The ``extend`` hook of :class:`~paragents.serve.server.ServeThread` mounting the app at /tui/."""

    async def extend(app: web.Application, thread: ServeThread) -> None:
        server = GuardedServer(command or app_command(project_dir, extra), title="paragents")
        server.tasks = set()
        app[STATE].closing.append(server.close)
        app.add_subapp(PREFIX, await server.sub_app())
        app.router.add_get(PREFIX.rstrip("/"), _redirect)

    return extend


async def _redirect(request: web.Request) -> web.StreamResponse:
    return web.Response(status=302, headers={"Location": PREFIX})
