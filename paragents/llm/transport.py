"""HTTP-level helpers of the chat client: Retry-After parsing and httpx transport-error mapping."""

from __future__ import annotations

import time
from email.utils import parsedate_to_datetime

import httpx

from paragents.llm.errors import LLMError, quote, safe_url
from paragents.models import AssembledReply


def parse_retry_after(headers: httpx.Headers, now: float | None = None) -> float | None:
    """Return the wait in seconds asked by ``retry-after-ms`` or ``Retry-After`` (delta-seconds or an
    HTTP-date, RFC 9110 §10.2.3), never negative; None when absent or unreadable. ``now`` is a UNIX
    time (defaults to the current time)."""
    raw_ms = headers.get("retry-after-ms")
    if raw_ms:
        try:
            return max(0.0, float(raw_ms) / 1000)
        except ValueError:
            pass
    raw = headers.get("retry-after")
    if not raw:
        return None
    try:
        return max(0.0, float(raw))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def transport_error(
    exc: httpx.HTTPError,
    url: str,
    partial: AssembledReply | None,
    *,
    connect_timeout: float,
    read_timeout: float,
    got_data: bool = False,
) -> LLMError:
    """Map an httpx transport error to an LLMError: ConnectTimeout/other timeouts -> "timeout",
    ConnectError/bad URL -> "connection", a break after the response started (``partial`` given) ->
    "protocol" with ``partial``. ``url`` is shown without credentials; timeouts are in seconds."""
    where = safe_url(url)
    if isinstance(exc, httpx.ConnectTimeout):
        return LLMError(
            "timeout",
            f"could not connect to {where} within {connect_timeout:g} s; "
            "check that the server is running and base_url is right",
        )
    if isinstance(exc, httpx.TimeoutException):
        what = "more data" if got_data else "a response"
        return LLMError(
            "timeout",
            f"waited {read_timeout:g} s for {what} from {where} (read_timeout); "
            "the server may be overloaded — try again or raise read_timeout",
            partial=partial,
        )
    if isinstance(exc, httpx.ConnectError):
        return LLMError(
            "connection",
            f"could not connect to {where} ({quote(str(exc), 120)}); check that the "
            "server is running and that base_url (host, port, http/https) is right",
        )
    if isinstance(exc, httpx.UnsupportedProtocol | httpx.InvalidURL):
        return LLMError(
            "connection",
            f"cannot use base_url {where}: {quote(str(exc), 120)}; it must look "
            "like http://127.0.0.1:8080/v1",
        )
    if partial is not None:
        return LLMError(
            "protocol",
            f"the connection to {where} broke before the reply finished "
            f"({quote(str(exc) or type(exc).__name__, 120)}); the partial reply was kept — "
            "try again",
            partial=partial,
        )
    return LLMError(
        "connection",
        f"the connection to {where} failed before a response "
        f"({quote(str(exc) or type(exc).__name__, 120)}); try again",
    )
