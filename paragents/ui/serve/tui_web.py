"""``paragents serve --tui``: the whole app in a browser through textual-serve, under ``/tui/``.

textual-serve has no authentication of its own; its terminal (``textual.js``, xterm) and app service
run under routes mounted as a sub-application of the API, so the API's middlewares (Host and Origin
checks, limits, credentials) guard every one of them. textual-serve's own page is not used: it loads
Google Fonts and builds its ``<script src>`` and websocket URLs from the request's Host header
(``Host: 127.0.0.1:P@evil`` was reflected into them). Ours (``tui_static/``) is a static file with
path-only URLs, the fonts textual-serve ships and the phone page's Content-Security-Policy (plus
inline styles, which xterm adds at run time); nothing in it comes from the request. Its script
trades the paired browser's token for a one-time websocket ticket (``POST /ws-ticket``) and opens
``/tui/ws/TICKET``. Each browser tab starts one ``paragents`` process on the project; they share
the store."""

from __future__ import annotations

import asyncio
import logging
import shlex
import sys
from collections.abc import Awaitable, Callable, Sequence
from importlib import resources
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web
from textual_serve.app_service import AppService
from textual_serve.server import Server, to_int

from paragents.serve.app import STATE
from paragents.serve.routes import SECURITY_HEADERS

if TYPE_CHECKING:
    from paragents.serve.server import ServeThread

PREFIX = "/tui/"
log = logging.getLogger("paragents.serve")


class ReapingAppService(AppService):
    """textual-serve's app service that also waits for the app's process to exit (killing it after
    ``grace`` seconds), so no process or transport outlives the server."""

    grace = 15.0

    async def stop(self) -> None:
        """Stop the app, wait ``grace`` seconds for its process (then kill it) and close its transport.
        A cancellation (the server stopping) cuts the wait short but never the kill and the close: a
        process left running, or a transport closed later by the garbage collector after the loop
        ended ("Event loop is closed"), would outlive the server. Re-raises the cancellation."""
        cancelled: asyncio.CancelledError | None = None
        try:
            await super().stop()
        except asyncio.CancelledError as exc:
            cancelled = exc
        process = self._process
        if process is not None:
            if process.returncode is None and cancelled is None:
                try:
                    await asyncio.wait_for(process.wait(), self.grace)
                except TimeoutError:
                    pass
                except asyncio.CancelledError as exc:
                    cancelled = exc
            if process.returncode is None:
                process.kill()
                await process.wait()
            transport = getattr(process, "_transport", None)
            if transport is not None:
                transport.close()
        if cancelled is not None:
            raise cancelled


class GuardedServer(Server):
    """textual-serve's server without its banner or its page: ours (:data:`PAGE_FILES`), the websocket
    at ``ws/{ticket}`` and textual-serve's static files (terminal, fonts)."""

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
        """The application to mount under :data:`PREFIX`: our page, the websocket and the static files."""
        app = web.Application()
        app.add_routes(
            [
                web.get("/", page),
                web.get("/ws/{ticket}", self.handle_websocket),
                web.get("/static/paragents/{name}", page_file),
                web.static("/static", self.statics_path),
            ]
        )
        return app


PAGE_FILES = {"tui.css": "text/css", "tui.js": "text/javascript"}
"""Our page's files, served under ``/tui/static/paragents/``."""
TUI_HEADERS = {
    **SECURITY_HEADERS,
    "Content-Security-Policy": SECURITY_HEADERS["Content-Security-Policy"].replace(
        "style-src 'self'", "style-src 'self' 'unsafe-inline'"
    ),
}
"""The phone page's headers; its CSP lets the terminal add inline styles (xterm writes its cell styles
into ``<style>`` elements at run time: style only, scripts stay 'self')."""


def _page_text(name: str) -> str:
    return resources.files("paragents.ui.serve").joinpath("tui_static", name).read_text(encoding="utf-8")


async def page(request: web.Request) -> web.Response:
    """The app's page: a static file; nothing in it comes from the request (Host, query...)."""
    return web.Response(text=_page_text("tui.html"), content_type="text/html", headers=TUI_HEADERS)


async def page_file(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in PAGE_FILES:
        raise web.HTTPNotFound()
    return web.Response(text=_page_text(name), content_type=PAGE_FILES[name], headers=TUI_HEADERS)


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
        app.router.add_get(PREFIX.rstrip("/"), _redirect)  # before the sub-app, which would take it
        app.add_subapp(PREFIX, await server.sub_app())

    return extend


async def _redirect(request: web.Request) -> web.StreamResponse:
    return web.Response(status=302, headers={"Location": PREFIX})
