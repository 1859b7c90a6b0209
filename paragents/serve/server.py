"""Run the API server on its own thread and event loop, next to a Runtime on another loop.

:class:`ServeThread` binds (port 0 picks a free one), reports its URL and stops cleanly. It refuses a
non-loopback address without an API key or JWT secret (:class:`ServeRefused`)."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import threading
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import Future
from dataclasses import replace

from aiohttp import web

from paragents.paths import norm_dir
from paragents.serve.app import STATE, is_loopback_host, make_app
from paragents.serve.auth import MIN_SECRET_BYTES, AuthConfig, weak_secret
from paragents.serve.bridge import RuntimeBridge
from paragents.serve.limits import Limits
from paragents.serve.routes import add_routes


class ServeRefused(Exception):
    """The server will not start as asked (``str()`` says why and what to do)."""


def check_bind(host: str, auth: AuthConfig) -> None:
    """Raise ServeRefused for a non-loopback ``host`` without an API key or a JWT secret, or with one
    shorter than 32 bytes (a guessable key must not face the network)."""
    if is_loopback_host(host):
        return
    if not auth.has_credentials:
        raise ServeRefused(
            f"refusing to listen on {host} without authentication: set PARAGENTS_SERVE_KEY (or pass "
            "--api-key) or give a JWT secret (--jwt-secret-file), or keep the default 127.0.0.1 and "
            "use ssh -L"
        )
    for what, value in (("the API key", auth.api_key), ("the JWT secret", auth.jwt_secret)):
        if weak_secret(value):
            raise ServeRefused(
                f"refusing to listen on {host}: {what} is shorter than {MIN_SECRET_BYTES} bytes; use a "
                "random one, e.g. `python3 -c 'import secrets; print(secrets.token_urlsafe(32))'`"
            )


class ServeThread:
    """The API over ``bridge`` served from a daemon thread on ``host:port``.

    ``extend(app)``, when given, may add routes or sub-applications (``--tui``) before it starts.
    :meth:`start` returns once the socket is bound (or raises what binding raised)."""

    def __init__(
        self,
        bridge: RuntimeBridge,
        auth: AuthConfig,
        host: str = "127.0.0.1",
        port: int = 8765,
        *,
        limits: Limits | None = None,
        clock: Callable[[], float] = time.time,
        allowed_origins: frozenset[str] = frozenset(),
        extend: Callable[[web.Application, ServeThread], Awaitable[None]] | None = None,
    ) -> None:
        check_bind(host, auth)
        if not 0 <= port <= 65535:
            raise ServeRefused(f"port {port} is out of range: give 0-65535 (0: any free port)")
        self.bridge = bridge
        self.auth = auth if auth.project else replace(auth, project=norm_dir(bridge.runtime.project_dir))
        """The credentials; ``project`` defaults to the served Runtime's."""
        self.host = host
        self.port = port
        self.limits = limits
        self.clock = clock
        self.allowed_origins = allowed_origins
        self.extend = extend
        self.loop: asyncio.AbstractEventLoop | None = None
        self._runner: web.AppRunner | None = None
        self._thread: threading.Thread | None = None
        self._stopped: asyncio.Event | None = None

    @property
    def url(self) -> str:
        """The base URL (``http://127.0.0.1:PORT``), valid once started."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}"

    def start(self, timeout: float = 30.0) -> str:
        """Start serving; return :attr:`url`. Raises OSError when the address cannot be bound."""
        ready: Future[None] = Future()
        self._thread = threading.Thread(target=self._main, args=(ready,), name="paragents-serve", daemon=True)
        self._thread.start()
        ready.result(timeout)
        return self.url

    def _main(self, ready: Future[None]) -> None:
        loop = asyncio.new_event_loop()
        self.loop = loop
        asyncio.set_event_loop(loop)
        try:
            loop.run_until_complete(self._serve(ready))
        except BaseException as exc:
            if not ready.done():
                ready.set_exception(exc)
        finally:
            gc.collect()  # finalize subprocess transports (textual-serve's apps) while the loop is open
            loop.close()

    async def _serve(self, ready: Future[None]) -> None:
        self._stopped = asyncio.Event()
        app = make_app(
            self.bridge,
            self.auth,
            limits=self.limits,
            clock=self.clock,
            allowed_origins=self.allowed_origins,
            loopback=is_loopback_host(self.host),
        )
        add_routes(app)
        if self.extend is not None:
            await self.extend(app, self)
        runner = web.AppRunner(app, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await runner.setup()
        self._runner = runner
        try:
            site = web.TCPSite(runner, self.host, self.port)
            await site.start()
            server = site._server
            if server is not None and getattr(server, "sockets", None):
                self.port = int(server.sockets[0].getsockname()[1])  # type: ignore[attr-defined]
            ready.set_result(None)
            await self._stopped.wait()
        finally:
            for close in app[STATE].closing:
                with contextlib.suppress(Exception):
                    await close()
            await runner.cleanup()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop serving and wait for the thread (idempotent)."""
        loop, stopped = self.loop, self._stopped
        if loop is not None and stopped is not None and not loop.is_closed():
            with contextlib.suppress(RuntimeError):
                loop.call_soon_threadsafe(stopped.set)
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None

    async def stop_async(self, timeout: float = 10.0) -> None:
        """:meth:`stop` without blocking the calling loop (the Runtime's loop may serve our last calls)."""
        await asyncio.to_thread(self.stop, timeout)
