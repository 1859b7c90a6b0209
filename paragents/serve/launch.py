"""Start the API for a Runtime the way ``paragents serve`` and the TUI's ``/serve`` do: credentials
from the options and the environment (a key generated for this run when none is given on a loopback
address), the server thread, and ``serve.json`` for ``paragents pair``."""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from aiohttp import web

from paragents.paths import norm_dir
from paragents.serve.app import is_loopback_host
from paragents.serve.auth import AuthConfig, mask
from paragents.serve.bridge import RuntimeBridge
from paragents.serve.pairing import browser_secret, claim_info, info_path, live_info
from paragents.serve.server import ServeRefused, ServeThread, check_bind

if TYPE_CHECKING:
    from paragents.serve.pairing import AccessLog
    from paragents.sessions.api import SessionsAPI

KEY_ENV = "PARAGENTS_SERVE_KEY"
"""The environment variable holding the API key (PARAGENTS_API_KEY is the model endpoint's key)."""
JWT_SECRET_ENV = "PARAGENTS_SERVE_JWT_SECRET"
"""The environment variable holding the JWT secret (an argument would show in ``ps``)."""
DEFAULT_PORT = 8765
ACCESS_LOG_DAYS = 30
"""Days the ``api_access`` rows are kept (older ones go when a server starts)."""


@dataclass(frozen=True)
class ServeOptions:
    """What ``paragents serve`` / ``/serve`` were asked for."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT
    api_key: str | None = None
    jwt_secret: str | None = None
    jwt_secret_file: str | None = None
    jwt_issuer: str | None = None
    jwt_audience: str | None = None
    jwt_max_hours: float = 24.0
    browser_hours: float = 24 * 7
    key_projects: tuple[str, ...] = ()
    """Projects whose asks the API key (and a JWT naming none) may answer; empty: the served one."""
    allowed_origins: tuple[str, ...] = ()


@dataclass
class Running:
    """A started server: the ``thread``, its ``bridge``, ``url``, the key generated for this run (or
    None when one was given) and where ``serve.json`` is."""

    thread: ServeThread
    bridge: RuntimeBridge
    url: str
    generated_key: str | None
    info: Path | None
    """``serve.json`` when this server wrote it; None when another live server's was kept."""

    def lines(self) -> list[str]:
        """What to tell the user (keys masked; a generated key is only in the 0600 file)."""
        key = self.thread.auth.api_key
        out = [f"paragents API on {self.url}  (phone page: {self.url}/)"]
        if self.generated_key and self.info is not None:
            out.append(
                f"API key {mask(key)} generated for this run; the full key is in {self.info} (mode 0600)"
            )
        elif self.generated_key:
            out.append(
                f"API key {mask(key)} generated for this run, not written: another running paragents "
                f"serve owns {info_path()}; set {KEY_ENV} to choose a key for API clients"
            )
        elif key:
            out.append(f"API key {mask(key)}")
        if self.thread.auth.jwt_secret:
            out.append("JWT (HS256) accepted")
        out.append("the key answers asks of: " + ", ".join(self.thread.auth.scope))
        if self.info is not None:
            out.append("pair a phone: `paragents pair` (or /pair in the app); reach it with ssh -L or a VPN")
        else:
            out.append("pair a phone: /pair in the app; reach it with ssh -L or a VPN")
        return out

    async def stop(self) -> None:
        """Stop the server, stop observing the Runtime and remove ``serve.json``."""
        await self.thread.stop_async()
        self.bridge.close()
        if self.info is not None:
            self.info.unlink(missing_ok=True)


def jwt_secret_of(options: ServeOptions, env: dict[str, str]) -> str | None:
    """The JWT secret: ``--jwt-secret``, else the first line of ``--jwt-secret-file``, else
    $PARAGENTS_SERVE_JWT_SECRET, else None. Raises ServeRefused naming the file it cannot read."""
    if options.jwt_secret:
        return options.jwt_secret
    if options.jwt_secret_file:
        path = Path(options.jwt_secret_file).expanduser()
        try:
            lines = path.read_text(encoding="utf-8").splitlines()
        except (OSError, UnicodeDecodeError) as exc:
            raise ServeRefused(f"cannot read the JWT secret file {path}: {exc}") from None
        secret = lines[0].strip() if lines else ""
        if not secret:
            raise ServeRefused(f"the JWT secret file {path} is empty: put the secret on its first line")
        return secret
    return env.get(JWT_SECRET_ENV) or None


def auth_from(
    options: ServeOptions, env: dict[str, str] | None = None, project: Path | None = None
) -> tuple[AuthConfig, str | None]:
    """The credentials for ``options`` (the key from ``--api-key`` or $PARAGENTS_SERVE_KEY, the JWT
    secret from :func:`jwt_secret_of`) for the server of ``project``; on a loopback address without
    any, a random key for this run (returned second, else None). Raises ServeRefused."""
    env = dict(os.environ) if env is None else env
    key = options.api_key or env.get(KEY_ENV) or None
    jwt_secret = jwt_secret_of(options, env)
    generated = None
    if not key and not jwt_secret and is_loopback_host(options.host):
        key = generated = secrets.token_urlsafe(32)
    auth = AuthConfig(
        api_key=key,
        jwt_secret=jwt_secret,
        jwt_issuer=options.jwt_issuer,
        jwt_audience=options.jwt_audience,
        jwt_max_lifetime=options.jwt_max_hours * 3600,
        browser_secret=browser_secret(),
        browser_ttl=options.browser_hours * 3600,
        project=norm_dir(project) if project is not None else "",
        key_projects=tuple(norm_dir(p) for p in options.key_projects),
    )
    check_bind(options.host, auth)
    return auth, generated


async def start(
    runtime: SessionsAPI,
    access: AccessLog,
    options: ServeOptions,
    extend: Callable[[web.Application, ServeThread], Awaitable[None]] | None = None,
) -> Running:
    """Start the API for ``runtime`` (call on the Runtime's loop), logging requests to ``access`` (the
    store's ``api_access``). Raises ServeRefused or OSError."""
    auth, generated = auth_from(options, project=runtime.project_dir)
    await access.prune(time.time() - ACCESS_LOG_DAYS * 86400)
    bridge = RuntimeBridge(runtime, access)
    thread = ServeThread(
        bridge,
        auth,
        options.host,
        options.port,
        allowed_origins=frozenset(options.allowed_origins),
        extend=extend,
    )
    try:
        url = await asyncio.to_thread(thread.start)
    except BaseException:
        bridge.close()
        raise
    info = claim_info(url, generated)  # None: another live server's serve.json stays
    return Running(thread, bridge, url, generated, info)


def pair_base_url(explicit: str | None) -> str | None:
    """The base URL for a pairing link: ``explicit``, else the running server's (its process alive),
    else None: a link nothing serves would only fail on the phone."""
    if explicit:
        return explicit
    info = live_info()
    if info and isinstance(info.get("url"), str):
        return str(info["url"])
    return None


__all__ = [
    "JWT_SECRET_ENV",
    "KEY_ENV",
    "Running",
    "ServeOptions",
    "auth_from",
    "info_path",
    "pair_base_url",
    "start",
]
