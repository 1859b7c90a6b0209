"""The aiohttp application of ``paragents serve``: middlewares (errors as JSON, audit, rate limit and
lock-out, Host and Origin checks, body limits, authentication) and the routes (:mod:`.routes`)."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from ipaddress import ip_address

from aiohttp import web

from paragents.serve.approvals import ApiError
from paragents.serve.auth import AuthConfig, Verdict, authenticate
from paragents.serve.bridge import RuntimeBridge
from paragents.serve.limits import Guard, Limits, network
from paragents.serve.tickets import Tickets

log = logging.getLogger("paragents.serve")

MAX_BODY = 1024 * 1024
"""Largest request body accepted (bytes); larger ones get 413 before they are read."""
PUBLIC_PATHS = ("/health", "/openapi.json", "/", "/favicon.ico", "/pair")
"""Paths served without credentials: page shells and their files hold no data (they ask the API,
which needs credentials); ``POST /pair`` checks its one-time code itself."""
PUBLIC_PREFIXES = ("/static/", "/pair/", "/tui/static/")
PUBLIC_EXACT_TUI = ("/tui/", "/tui")
"""The whole app's page shell (with ``--tui``): it holds no data; its websocket needs a ticket."""

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
STATE: web.AppKey[ServeState] = web.AppKey("paragents_serve_state")
PRINCIPAL = web.RequestKey("paragents_principal", str)
"""Who the request authenticated as ("key", "jwt:SUB", "browser:ID", "ticket:..."), "" before or
without."""
VERDICT = web.RequestKey("paragents_verdict", Verdict)
"""The passed credential's verdict (its kind and the projects it may answer asks of)."""
NOTE = web.RequestKey("paragents_note", str)
"""Why the request was refused (for the access log), "" when it was not."""
_HOST = re.compile(r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+)(?::[0-9]{1,5})?")
"""A well-formed Host header: a name, IPv4 or [IPv6] address and an optional port (nothing else)."""


@dataclass
class ServeState:
    """What the handlers share: the ``bridge`` to the Runtime, the ``auth`` config, the ``guard``
    (rate limits, lock-outs), the websocket ``tickets``, the ``clock``, the ``allowed_origins``
    besides the server's own and ``loopback`` (bound to a loopback address: the Host header must
    name one)."""

    bridge: RuntimeBridge
    auth: AuthConfig
    guard: Guard
    tickets: Tickets
    clock: Callable[[], float] = time.time
    allowed_origins: frozenset[str] = frozenset()
    loopback: bool = True
    closing: list[Callable[[], Awaitable[None]]] = field(default_factory=list)
    """Run when the server stops, before it waits for open requests: end /events streams and the
    textual-serve websockets so they finish instead of being cut."""


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    """The JSON error body every refusal uses: ``{"error": {"status": N, "message": "..."}}``."""
    return web.json_response(
        {"error": {"status": status, "message": message}}, status=status, headers=headers
    )


def is_loopback_host(host: str) -> bool:
    """True for a bind address that only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def host_name(host_header: str) -> str | None:
    """The name in a Host header without its port; None when the header is malformed (``user@``,
    paths, spaces: ``Host: 127.0.0.1:8765@evil`` is refused, not read as 127.0.0.1)."""
    if not _HOST.fullmatch(host_header):
        return None
    if host_header.startswith("["):
        return host_header[1 : host_header.index("]")]
    return host_header.rsplit(":", 1)[0] if ":" in host_header else host_header


def logged_path(path: str) -> str:
    """The path as the access log keeps it: pairing codes and tickets are replaced by ``<code>``."""
    if path.startswith("/pair/"):
        return "/pair/<code>"
    if path.startswith("/tui/ws/"):
        return "/tui/ws/<ticket>"
    return path


def _is_public(path: str) -> bool:
    return path in PUBLIC_PATHS or path in PUBLIC_EXACT_TUI or path.startswith(PUBLIC_PREFIXES)


@web.middleware
async def audit_and_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Turn every refusal into a JSON error and record every request in the access log."""
    state = request.app[STATE]
    request[PRINCIPAL] = ""
    request[NOTE] = ""
    try:
        response = await handler(request)
    except ApiError as exc:
        response = error_response(exc.status, exc.message)
        request[NOTE] = exc.message
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        response = error_response(exc.status, exc.reason if exc.status != 413 else "request body too large")
        request[NOTE] = exc.reason
    except Exception as exc:
        log.exception("serve: unexpected error")
        response = error_response(500, f"internal error: {type(exc).__name__}")
        request[NOTE] = type(exc).__name__
    try:
        await state.bridge.record_access(
            remote=request.remote or "?",
            method=request.method,
            path=logged_path(request.path),
            status=response.status,
            principal=request[PRINCIPAL],
            note=request[NOTE],
            at=state.clock(),
        )
    except Exception:  # the log must not turn a good answer into an error (a store being closed)
        log.warning("serve: could not record an access", exc_info=True)
    return response


def _refuse(request: web.Request, status: int, message: str, **headers: str) -> web.Response:
    request[NOTE] = message
    return error_response(status, message, headers or None)


@web.middleware
async def guard(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Host and Origin checks, body limits, authentication and the limits of :mod:`.limits`: a valid
    credential counts only against its own rate and is never locked out by others' failures."""
    state = request.app[STATE]
    if request.path == "/health":
        return await handler(request)
    name = host_name(request.host)
    if name is None:
        return _refuse(request, 400, "malformed Host header")
    if state.loopback and not is_loopback_host(name):
        return _refuse(request, 421, "this server answers only to localhost names (Host header)")
    origin = request.headers.get("Origin")
    if (
        origin is not None
        and origin != f"{request.scheme}://{request.host}"
        and origin not in state.allowed_origins
    ):
        return _refuse(request, 403, "cross-origin request refused")
    length = request.content_length
    if length is not None and length > MAX_BODY:
        return _refuse(request, 413, "request body too large")
    net = f"net:{network(request.remote or '?')}"
    if _is_public(request.path):
        if request.method == "POST" and (wait := state.guard.hit(net)):  # POST /pair: a guess
            return _refuse(request, 429, "too many requests", **{"Retry-After": str(int(wait) + 1)})
        return await handler(request)
    verdict = authenticate(request.headers, state.auth, state.clock())
    ticket = request.match_info.get("ticket")
    if verdict.error is None and not verdict.ok and ticket is not None:
        verdict = state.tickets.use(ticket)
    if verdict.ok:
        wait = state.guard.hit(f"principal:{verdict.principal}")
        if wait:
            return _refuse(request, 429, "too many requests", **{"Retry-After": str(int(wait) + 1)})
        request[PRINCIPAL] = verdict.principal
        request[VERDICT] = verdict
        return await handler(request)
    wait = state.guard.hit(net)
    if wait:
        return _refuse(request, 429, "too many requests", **{"Retry-After": str(int(wait) + 1)})
    if verdict.error is None:
        message = "authentication required: a key, a token or a paired browser"
        return _refuse(request, 401, message, **{"WWW-Authenticate": "Bearer"})
    locked = state.guard.failed(verdict.kind or "key")
    if locked:
        message = (
            f"too many failed {verdict.kind} credentials: refused for {int(locked) + 1} s "
            f"(a valid one is still accepted); last: {verdict.error}"
        )
        return _refuse(request, 429, message, **{"Retry-After": str(int(locked) + 1)})
    return _refuse(request, 401, verdict.error, **{"WWW-Authenticate": "Bearer"})


async def common_headers(request: web.Request, response: web.StreamResponse) -> None:
    """On every answer: ``X-Content-Type-Options: nosniff`` and, unless the handler chose otherwise,
    ``Cache-Control: no-store`` (answers hold approvals, commands and transcripts: nothing to keep)."""
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    response.headers.setdefault("Cache-Control", "no-store")


def make_app(
    bridge: RuntimeBridge,
    auth: AuthConfig,
    *,
    limits: Limits | None = None,
    clock: Callable[[], float] = time.time,
    allowed_origins: frozenset[str] = frozenset(),
    loopback: bool = True,
) -> web.Application:
    """Build the API application over ``bridge`` with the credentials ``auth``: the middlewares and the
    shared state (the routes are added by :func:`paragents.serve.routes.add_routes`)."""
    app = web.Application(middlewares=[audit_and_errors, guard], client_max_size=MAX_BODY)
    app.on_response_prepare.append(common_headers)
    app[STATE] = ServeState(
        bridge=bridge,
        auth=auth,
        guard=Guard(limits or Limits(), clock),
        tickets=Tickets(clock),
        clock=clock,
        allowed_origins=allowed_origins,
        loopback=loopback,
    )
    return app
