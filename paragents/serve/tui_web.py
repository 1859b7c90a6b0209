"""``paragents serve --tui``: the whole app in a browser through textual-serve, under ``/tui/``.

textual-serve has no authentication of its own; its aiohttp routes (page, websocket, static files,
downloads) are mounted as a sub-application of the API, so the API's middlewares (lock-out, rate
limit, Host and Origin checks, the key or the paired cookie) guard every one of them. Each browser
tab starts one ``paragents`` process on the project; they share the store."""

from __future__ import annotations

import shlex
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web
from textual_serve.server import Server

if TYPE_CHECKING:
    from paragents.serve.server import ServeThread

PREFIX = "/tui/"


class GuardedServer(Server):
    """textual-serve's server without its banner, building its links from the request's own host
    (so it works behind ``ssh -L`` on another port)."""

    async def handle_index(self, request: web.Request) -> Any:
        self.public_url = f"{request.scheme}://{request.host}"  # read synchronously by the parent
        return await Server.handle_index(self, request)

    async def sub_app(self) -> web.Application:
        """textual-serve's application, to be mounted under :data:`PREFIX`."""
        app = await self._make_app()
        app.on_startup.clear()  # the banner printed to stdout
        return app


def app_command(project_dir: Path) -> str:
    """The shell command each browser tab runs: this Python's ``paragents`` on ``project_dir``."""
    return f"{shlex.quote(sys.executable)} -m paragents.cli --dir {shlex.quote(str(project_dir))}"


def tui_extension(
    project_dir: Path, command: str | None = None
) -> Callable[[web.Application, ServeThread], Awaitable[None]]:
    """The ``extend`` hook of :class:`~paragents.serve.server.ServeThread` mounting the app at /tui/."""

    async def extend(app: web.Application, thread: ServeThread) -> None:
        server = GuardedServer(command or app_command(project_dir), title="paragents")
        app.add_subapp(PREFIX, await server.sub_app())
        app.router.add_get(PREFIX.rstrip("/"), lambda request: _redirect())

    return extend


async def _redirect() -> web.StreamResponse:
    raise web.HTTPFound(PREFIX)
