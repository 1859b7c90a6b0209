"""``/serve`` and ``/pair`` in the app: the HTTP API (paragents.serve) inside the running process, on
its own thread and loop so requests never run on the UI loop; only the Runtime calls hop to it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paragents.ui.core.commands import SlashCommand
from paragents.ui.serve.pair import PairScreen

if TYPE_CHECKING:
    from paragents.serve.launch import Running
    from paragents.ui.app_api import AppAPI

_RUNNING: dict[int, Running] = {}
"""The server started by each app (by ``id(app)``); at most one per app."""


def running(app: Any) -> Running | None:
    """The API server this app started with /serve, or None."""
    return _RUNNING.get(id(app))


async def serve(app: AppAPI, sid: str, command: SlashCommand) -> None:
    """``/serve [PORT|stop]``: start the API on 127.0.0.1 (or say where it runs), or stop it."""
    # Deferred for start-up time (the app's first frame): the HTTP server stack (aiohttp...) takes
    # longer to import than the whole app (2.3 s of 7.2 s, measured with -X importtime on a loaded machine).
    from paragents.serve.launch import DEFAULT_PORT, ServeOptions, start
    from paragents.serve.server import ServeRefused

    current = running(app)
    if command.arg == "stop":
        if current is None:
            app.notify("The API is not running.", markup=False)
            return
        await current.stop()
        del _RUNNING[id(app)]
        app.notify("The API stopped.", markup=False)
        return
    if current is not None:
        app.notify("\n".join(current.lines()), title="API", markup=False, timeout=15)
        return
    port = int(command.arg) if command.arg else DEFAULT_PORT
    try:
        current = await start(app.runtime, ServeOptions(port=port))
    except (ServeRefused, OSError) as exc:
        app.notify(f"The API did not start: {exc}", severity="error", markup=False, timeout=12)
        return
    _RUNNING[id(app)] = current
    app.notify("\n".join(current.lines()), title="API", markup=False, timeout=15)


async def pair(app: AppAPI, sid: str, command: SlashCommand) -> None:
    """``/pair``: a one-time link and QR code for a phone (starting the API first when needed)."""
    from paragents.serve.pairing import new_pairing, qr_text  # deferred: start-up time, as in serve()

    if running(app) is None:
        await serve(app, sid, SlashCommand("serve"))
    current = running(app)
    if current is None:
        return
    link = await new_pairing(app.runtime.store.api_access, current.url)
    note = "The phone must reach this address: use ssh -L or a VPN (docs/serve.md)."
    app.show_screen(PairScreen(qr_text(link), link, note))


async def stop_all() -> None:
    """Stop every server /serve started (at quit)."""
    for key, current in list(_RUNNING.items()):
        await current.stop()
        _RUNNING.pop(key, None)
