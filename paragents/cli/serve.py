"""``paragents serve`` (the Runtime and its HTTP API, headless; ``--tui`` adds the whole app through
textual-serve) and ``paragents pair`` (a one-time link and QR code for a phone)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import signal
import sys
from collections.abc import Callable
from typing import Any

from paragents.cli.open_runtime import OpenFailed, open_runtime, project_dir_of

DEFAULT_PORT = 8765
"""The API's default port (``paragents.serve.launch.DEFAULT_PORT``; not imported: parsing stays light)."""


def add_parsers(sub: Any, add_common: Callable[[argparse.ArgumentParser], None]) -> None:
    """Add ``serve`` and ``pair`` to the CLI's subparsers ``sub`` (``add_common``: the parser's shared
    options, passed in so that this module does not import the parser back)."""
    serve = sub.add_parser("serve", help="serve the HTTP API and the phone inbox page (docs/serve.md)")
    add_common(serve)
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}, 0: any)"
    )
    serve.add_argument(
        "--api-key", metavar="KEY", help="API key (prefer $PARAGENTS_SERVE_KEY: arguments show in ps)"
    )
    serve.add_argument(
        "--jwt-secret",
        metavar="SECRET",
        help="also accept HS256 JWTs signed with SECRET (prefer --jwt-secret-file or "
        "$PARAGENTS_SERVE_JWT_SECRET: arguments show in ps)",
    )
    serve.add_argument("--jwt-secret-file", metavar="PATH", help="read the JWT secret from PATH's first line")
    serve.add_argument("--jwt-issuer", metavar="ISS", help="required JWT issuer (iss)")
    serve.add_argument("--jwt-audience", metavar="AUD", help="required JWT audience (aud)")
    serve.add_argument(
        "--jwt-max-hours", type=float, default=24.0, help="refuse JWTs that live longer (default 24)"
    )
    serve.add_argument(
        "--browser-hours",
        "--cookie-hours",
        dest="browser_hours",
        type=float,
        default=24 * 7,
        help="how long a paired browser stays signed in (default a week)",
    )
    serve.add_argument(
        "--key-project",
        action="append",
        default=[],
        metavar="DIR",
        help="a project whose asks the API key may answer (repeat; default: the project served)",
    )
    serve.add_argument(
        "--allow-origin", action="append", default=[], metavar="URL", help="another origin allowed to call"
    )
    serve.add_argument("--pair", action="store_true", help="print a pairing link and QR code at start")
    serve.add_argument("--tui", action="store_true", help="also serve the whole app in a browser at /tui/")
    pair = sub.add_parser("pair", help="print a one-time link and QR code that signs a phone in")
    pair.add_argument(
        "--url", help="the server's base URL as the phone reaches it (default: the running one)"
    )


def print_pairing(link: str, ttl: float) -> None:
    """Print the pairing link, its QR code and how long it works (plain text)."""
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.serve.pairing import qr_text

    print(qr_text(link))
    print(link)
    print(
        f"works once, for {int(ttl // 60)} minutes; reach this machine with ssh -L or a VPN (docs/serve.md)"
    )


async def _pair(args: argparse.Namespace) -> int:
    # deferred: start-up (`paragents --help` imports this module)
    from paragents.serve.launch import pair_base_url
    from paragents.serve.pairing import PAIRING_TTL, new_pairing
    from paragents.store import Store, StoreError

    base = pair_base_url(args.url)
    if base is None:
        print(
            "paragents pair: no paragents serve is running here (its serve.json is missing or its "
            "process is gone): start one with `paragents serve` (or /serve in the app), or give the "
            "server's address with --url",
            file=sys.stderr,
        )
        return 1
    try:
        async with await Store.open() as store:
            link = await new_pairing(store.api_access, base)
    except StoreError as exc:
        print(f"paragents pair: {exc}", file=sys.stderr)
        return 1
    print_pairing(link, PAIRING_TTL)
    return 0


def run_pair(args: argparse.Namespace) -> int:
    """``paragents pair``: a one-time pairing link for the running server."""
    return asyncio.run(_pair(args))


async def _serve(args: argparse.Namespace) -> int:
    # deferred: start-up (`paragents --help` imports this module)
    from paragents import events as ev
    from paragents.serve.launch import ServeOptions, auth_from, start
    from paragents.serve.pairing import PAIRING_TTL, new_pairing
    from paragents.serve.server import ServeRefused

    options = ServeOptions(
        host=args.host,
        port=args.port,
        api_key=args.api_key,
        jwt_secret=args.jwt_secret,
        jwt_secret_file=args.jwt_secret_file,
        jwt_issuer=args.jwt_issuer,
        jwt_audience=args.jwt_audience,
        jwt_max_hours=args.jwt_max_hours,
        browser_hours=args.browser_hours,
        key_projects=tuple(args.key_project),
        allowed_origins=tuple(args.allow_origin),
    )
    try:
        auth_from(options)  # refuse a non-loopback address without credentials before opening anything
    except ServeRefused as exc:
        print(f"paragents serve: {exc}", file=sys.stderr)
        return 2
    try:
        project_dir = project_dir_of(args, "paragents serve")
        opened = await open_runtime(args, project_dir, prog="paragents serve")
    except OpenFailed as exc:
        return exc.code
    runtime = opened.api

    def sink(event: ev.Event) -> None:
        if isinstance(event, ev.PermissionRequested):
            name = runtime.sessions[event.session_id].name if event.session_id in runtime.sessions else "?"
            print(f"waiting for you: [{name}] {event.summary} (id {event.request_id})", flush=True)

    runtime.set_sink(sink)
    extend = None
    if args.tui:
        # deferred: start-up (`paragents --help` imports this module)
        from paragents.ui.serve.tui_web import tui_extension

        extend = tui_extension(project_dir, extra=_tab_arguments(args))
    try:
        await runtime.opening.restore()
        running = await start(runtime, opened.store.api_access, options, extend)
    except (ServeRefused, OSError) as exc:
        print(f"paragents serve: {exc}", file=sys.stderr)
        await runtime.shutdown()
        return 2
    for line in running.lines():
        print(line, flush=True)
    if args.tui:
        print(f"the whole app: {running.url}/tui/ (a paired browser)", flush=True)
    if args.pair:
        print_pairing(await new_pairing(opened.store.api_access, running.url), PAIRING_TTL)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        with contextlib.suppress(NotImplementedError):
            loop.add_signal_handler(sig, stop.set)
    try:
        await stop.wait()
    finally:
        await running.stop()
        await runtime.shutdown()
    return 0


def _tab_arguments(args: argparse.Namespace) -> list[str]:
    """The options each ``--tui`` browser tab's app gets from this command line (same endpoint,
    model, mode and rules)."""
    out: list[str] = []
    for flag, value in (("--endpoint", args.endpoint), ("--model", args.model), ("--mode", args.mode)):
        if value:
            out += [flag, value]
    if args.no_tools:
        out.append("--no-tools")
    for kind in ("allow", "ask", "deny"):
        for rule in getattr(args, kind, []) or []:
            out += [f"--{kind}", rule]
    return out


def run_serve(args: argparse.Namespace) -> int:
    """``paragents serve``: run the Runtime headless with its API until SIGINT/SIGTERM."""
    return asyncio.run(_serve(args))
