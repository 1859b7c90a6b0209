"""The API's routes: health, sessions, transcript pages, prompts, cancel, the inbox and its answers,
server-sent events, the OpenAPI document, pairing and the phone page's static files."""

from __future__ import annotations

import asyncio
import contextlib
import json
from importlib import resources
from typing import Any

from aiohttp import web

from paragents.serve.app import PRINCIPAL, STATE, VERDICT, ServeState
from paragents.serve.approvals import ApiError
from paragents.serve.auth import SESSION_HEADER, browser_token_id, code_hash, sign_browser_token
from paragents.serve.openapi import openapi_document
from paragents.sessions.answerer import Answerer

PAGE_SIZE = 50
MAX_PAGE = 500
KEEPALIVE = 15.0
"""Seconds between SSE comments that keep an idle /events connection open."""
MAX_JSON_DEPTH = 16
"""Deepest nesting of arrays and objects a request body may have (ours are one or two levels deep)."""
STATIC_FILES = {"inbox.css": "text/css", "inbox.js": "text/javascript", "pair.js": "text/javascript"}


def json_depth(value: Any) -> int:
    """How deeply ``value`` (parsed JSON) nests arrays and objects (a scalar: 0), without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, depth)
        if depth <= MAX_JSON_DEPTH:  # deeper is refused anyway: stop counting
            stack.extend((child, depth + 1) for child in children)
    return deepest


def _state(request: web.Request) -> ServeState:
    return request.app[STATE]


def _here(request: web.Request) -> ServeState:
    """The state, once the credential may act on this server's project (its sessions); ApiError 403
    naming both projects when it may not."""
    state = _state(request)
    projects = request[VERDICT].projects
    if state.auth.project not in projects:
        raise ApiError(
            403,
            f"this server serves the project {state.auth.project}; this credential is for "
            f"{', '.join(projects) or 'no project'}",
        )
    return state


async def json_body(request: web.Request) -> dict[str, Any]:
    """The request's JSON object body. ApiError 415 when not JSON, 400 when unreadable or not an object."""
    if request.content_type != "application/json":
        raise ApiError(415, "send the body as application/json")
    try:
        raw = await request.read()
        data = json.loads(raw)
    except web.HTTPRequestEntityTooLarge:
        raise ApiError(413, "request body too large") from None
    except RecursionError:
        data = None  # deeper than Python's parser goes: the check below says so
    except (ValueError, UnicodeDecodeError):
        raise ApiError(400, "the body is not valid JSON") from None
    if data is None or json_depth(data) > MAX_JSON_DEPTH:
        raise ApiError(400, f"the body's JSON is nested too deeply (at most {MAX_JSON_DEPTH} levels)")
    if not isinstance(data, dict):
        raise ApiError(400, "the body must be a JSON object")
    return data


def _int_query(request: web.Request, name: str, default: int | None) -> int | None:
    value = request.query.get(name)
    if value is None:
        return default
    try:
        return int(value)
    except ValueError:
        raise ApiError(400, f"{name} must be an integer") from None


async def health(request: web.Request) -> web.Response:
    return web.json_response({"ok": True})


async def sessions(request: web.Request) -> web.Response:
    return web.json_response({"sessions": await _here(request).bridge.sessions()})


async def session(request: web.Request) -> web.Response:
    limit = _int_query(request, "limit", PAGE_SIZE) or PAGE_SIZE
    offset = _int_query(request, "offset", None)
    data = await _here(request).bridge.session(
        request.match_info["sid"], offset, max(1, min(limit, MAX_PAGE))
    )
    return web.json_response(data)


async def prompt(request: web.Request) -> web.Response:
    body = await json_body(request)
    text = body.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ApiError(400, "text must be a non-empty string")
    prompt_id = await _here(request).bridge.prompt(request.match_info["sid"], text)
    return web.json_response({"prompt_id": prompt_id}, status=202)


async def cancel(request: web.Request) -> web.Response:
    cancelled = await _here(request).bridge.cancel(request.match_info["sid"])
    return web.json_response({"cancelled": cancelled})


async def inbox(request: web.Request) -> web.Response:
    return web.json_response({"items": await _state(request).bridge.inbox(request[VERDICT].projects)})


async def whole_call(request: web.Request) -> web.Response:
    """The whole call of a pending ask: what its bounded preview leaves out."""
    data = await _state(request).bridge.whole_call(request.match_info["rid"], request[VERDICT].projects)
    return web.json_response(data)


async def _choice(request: web.Request, extra: str | None = None) -> tuple[str, str | None]:
    """The body's ``answer`` and, when ``extra`` names one, that optional field; both strings, else 400."""
    body = await json_body(request)
    choice = body.get("answer")
    more = body.get(extra) if extra else None
    if not isinstance(choice, str) or (more is not None and not isinstance(more, str)):
        also = f" (and {extra}, when given, a string)" if extra else ""
        raise ApiError(400, f"answer must be a string{also}")
    return choice, more


async def answer(request: web.Request) -> web.Response:
    choice, note = await _choice(request, "note")
    verdict = request[VERDICT]
    who = await _person(request)
    result = await _state(request).bridge.answer(
        request.match_info["rid"], choice, note, who, verdict.projects
    )
    return web.json_response(result)


async def answer_conflict(request: web.Request) -> web.Response:
    """Answer a conflict with one of its choices (wait, run_anyway, skip, reread)."""
    choice, _ = await _choice(request)
    who = await _person(request)
    result = await _state(request).bridge.answer_conflict(
        request.match_info["cid"], choice, who, request[VERDICT].projects
    )
    return web.json_response(result)


async def answer_pause(request: web.Request) -> web.Response:
    """Answer a budget or loop-guard pause: raise (with ``value``, the new cap), one_more, stop."""
    choice, value = await _choice(request, "value")
    who = await _person(request)
    result = await _state(request).bridge.answer_pause(
        request.match_info["pid"], choice, value, who, request[VERDICT].projects
    )
    return web.json_response(result)


async def _person(request: web.Request) -> str:
    """Who answers through this request (``answered_by``); ApiError 403 when it is a session's own
    tool or sandboxed: a session never answers its own asks, conflicts or pauses."""
    who = await _answerer(request, f"web:{request[VERDICT].principal}")
    if who.refused is not None:
        raise ApiError(403, f"refused: {who.refused}")
    return who.label


async def _answerer(request: web.Request, by: str) -> Answerer:
    """Who answers through this request (its credential and client), and whether it may: a client on
    this host that is a session's tool or sandboxed is refused (``paragents.sessions.answerer``)."""
    transport = request.transport
    server = transport.get_extra_info("sockname") if transport is not None else None
    client = transport.get_extra_info("peername") if transport is not None else None
    if not (isinstance(server, tuple) and isinstance(client, tuple)):
        return Answerer(f"{by} (client {request.remote or 'unknown'})")
    bridge = _state(request).bridge
    return await bridge.call(lambda: bridge.runtime.approvals.http_answerer(server[:2], client[:2], by))


async def events(request: web.Request) -> web.StreamResponse:
    """Server-sent events: one ``data:`` JSON line per session change (type, session_id, state)."""
    state = _here(request)
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue(maxsize=1000)

    def deliver(data: dict[str, Any]) -> None:  # on the Runtime's loop: hand over only
        def put() -> None:
            with contextlib.suppress(asyncio.QueueFull):
                queue.put_nowait(data)

        with contextlib.suppress(RuntimeError):  # our loop closed
            loop.call_soon_threadsafe(put)

    async def close() -> None:
        queue.put_nowait(None)

    state.closing.append(close)
    stop = await state.bridge.run(lambda: state.bridge.listen(deliver))
    response = web.StreamResponse(
        headers={"Content-Type": "text/event-stream", "Cache-Control": "no-cache", "X-Accel-Buffering": "no"}
    )
    try:
        await response.prepare(request)
        await response.write(b": connected\n\n")
        while True:
            try:
                data = await asyncio.wait_for(queue.get(), KEEPALIVE)
            except TimeoutError:
                await response.write(b": keep-alive\n\n")
                continue
            if data is None:
                break
            await response.write(f"event: {data['type']}\ndata: {json.dumps(data)}\n\n".encode())
    except (ConnectionResetError, asyncio.CancelledError):
        pass
    finally:
        with contextlib.suppress(
            RuntimeError
        ):  # never wait on the Runtime's loop here (it may be stopping us)
            state.bridge.loop.call_soon_threadsafe(stop)
    return response


async def openapi(request: web.Request) -> web.Response:
    return web.json_response(openapi_document())


async def pair_page(request: web.Request) -> web.Response:
    """A pairing link's page: plain HTML whose script posts the code (``POST /pair``) and keeps the
    browser token it gets in this origin's ``localStorage`` (never a cookie). Opening the link does
    not use the code: a link preview that fetches it pairs nothing."""
    return web.Response(text=_static_text("pair.html"), content_type="text/html", headers=SECURITY_HEADERS)


async def pair(request: web.Request) -> web.Response:
    """Use a one-time pairing code: answer the browser token for this server's project."""
    state = _state(request)
    body = await json_body(request)
    code = body.get("code")
    if not isinstance(code, str) or not code:
        raise ApiError(400, "code must be the pairing link's code")
    now = state.clock()
    outcome = await state.bridge.use_pairing_code(code_hash(code), now)
    if outcome != "ok":
        locked = state.guard.failed("pairing")
        if locked:
            raise ApiError(429, f"too many failed pairing links: refused for {int(locked) + 1} s")
        status, message = {
            "used": (410, "this pairing link was already used: run `paragents pair` for a new one"),
            "expired": (410, "this pairing link expired: run `paragents pair` for a new one"),
        }.get(outcome, (404, "unknown pairing link"))
        raise ApiError(status, message)
    auth = state.auth
    token = sign_browser_token(auth.browser_secret, now, auth.project)
    request[PRINCIPAL] = f"pairing:browser:{browser_token_id(token)}"
    return web.json_response(
        {
            "token": token,
            "header": SESSION_HEADER,
            "expires_at": now + auth.browser_ttl,
            "project": auth.project,
        }
    )


async def ws_ticket(request: web.Request) -> web.Response:
    """A one-time ticket for a websocket (``/tui/ws/TICKET``): browsers cannot send headers with one."""
    state = _here(request)
    return web.json_response({"ticket": state.tickets.issue(request[VERDICT]), "ttl": state.tickets.ttl})


def _static_text(name: str) -> str:
    return resources.files("paragents.serve").joinpath("static", name).read_text(encoding="utf-8")


SECURITY_HEADERS = {
    "Content-Security-Policy": "default-src 'self'; script-src 'self'; style-src 'self'; "
    "img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'",
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-store",
}


async def page(request: web.Request) -> web.Response:
    return web.Response(text=_static_text("index.html"), content_type="text/html", headers=SECURITY_HEADERS)


async def static(request: web.Request) -> web.Response:
    name = request.match_info["name"]
    if name not in STATIC_FILES:
        raise ApiError(404, "not found")
    return web.Response(text=_static_text(name), content_type=STATIC_FILES[name], headers=SECURITY_HEADERS)


def add_routes(app: web.Application) -> None:
    """Add every route of the API and the page to ``app``."""
    app.add_routes(
        [
            web.get("/health", health),
            web.get("/openapi.json", openapi),
            web.get("/sessions", sessions),
            web.get("/sessions/{sid}", session),
            web.post("/sessions/{sid}/prompt", prompt),
            web.post("/sessions/{sid}/cancel", cancel),
            web.get("/inbox", inbox),
            web.get("/inbox/{rid}/call", whole_call),
            web.post("/inbox/{rid}/answer", answer),
            web.post("/conflicts/{cid}/answer", answer_conflict),
            web.post("/pauses/{pid}/answer", answer_pause),
            web.get("/events", events),
            web.get("/pair/{code}", pair_page),
            web.post("/pair", pair),
            web.post("/ws-ticket", ws_ticket),
            web.get("/", page),
            web.get("/static/{name}", static),
        ]
    )
