"""The one error type the LLM layer raises, and the mapping from HTTP status to a readable message.

Every failure of a chat request (HTTP status, broken stream, network, timeout) reaches callers as
:class:`LLMError` with a closed ``kind`` and a ``message`` that says what to do. Messages never
contain the API key or the Authorization header (callers pass text through :func:`scrub`).
"""

from __future__ import annotations

from typing import Literal
from urllib.parse import urlsplit, urlunsplit

from paragents.config import redact
from paragents.models import AssembledReply

ErrorKind = Literal[
    "auth",
    "forbidden",
    "not_found",
    "context_length",
    "rate_limit",
    "server",
    "bad_request",
    "protocol",
    "connection",
    "timeout",
]
"""Closed set of failure kinds (see :class:`LLMError`)."""

MAX_QUOTE = 300
"""Longest piece of server text (characters) quoted in a message."""

_CONTEXT_WORDS = ("context", "too long", "too many tokens", "maximum length", "max_tokens")


class LLMError(Exception):
    """A chat/models request failed.

    Attributes:
    - ``kind``: "auth" (401), "forbidden" (403), "not_found" (404: model or path), "context_length"
      (413, or a 400 whose body talks about the context/length), "rate_limit" (429), "server" (5xx),
      "bad_request" (other 4xx), "protocol" (bad SSE/JSON, an HTML page, an empty body, a stream that
      ended mid-way, an error object mid-stream), "connection" (refused, DNS, TLS), "timeout".
    - ``message``: one readable sentence or two saying what happened and what to do (also ``str(err)``).
    - ``status``: the HTTP status, or None when no response arrived.
    - ``retry_after``: seconds the server asked to wait (Retry-After), or None.
    - ``partial``: what was assembled before a mid-stream failure, or None.
    """

    def __init__(
        self,
        kind: ErrorKind,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        partial: AssembledReply | None = None,
    ) -> None:
        super().__init__(message)
        self.kind: ErrorKind = kind
        self.message = message
        self.status = status
        self.retry_after = retry_after
        self.partial = partial

    def __repr__(self) -> str:
        return f"LLMError(kind={self.kind!r}, status={self.status!r}, message={self.message!r})"


def safe_url(url: str) -> str:
    """Return ``url`` with any ``user:password@`` part and query string removed, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def scrub(text: str, api_key: str | None) -> str:
    """Return ``text`` with every occurrence of ``api_key`` replaced by its redacted form.

    Keys shorter than 6 characters (placeholders such as "x" for local servers) are left alone: replacing
    them would garble every message."""
    if api_key and len(api_key) >= 6 and api_key in text:
        text = text.replace(api_key, redact(api_key))
    return text


def quote(text: str, limit: int = MAX_QUOTE) -> str:
    """Return ``text`` on one line, cut to ``limit`` characters with '…' when longer."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[:limit] + "…"


def looks_like_context_error(text: str) -> bool:
    """True when an error body talks about the prompt being too long for the context window."""
    low = text.lower()
    return any(word in low for word in _CONTEXT_WORDS)


def kind_for_status(status: int, detail: str = "") -> ErrorKind:
    """Map an HTTP status (and the server's error text, for 400) to an :data:`ErrorKind`."""
    if status == 401:
        return "auth"
    if status == 403:
        return "forbidden"
    if status == 404:
        return "not_found"
    if status == 413 or (status == 400 and looks_like_context_error(detail)):
        return "context_length"
    if status == 429:
        return "rate_limit"
    if status >= 500:
        return "server"
    if 400 <= status < 500:
        return "bad_request"
    return "protocol"


_ADVICE: dict[str, str] = {
    "auth": "the API key was rejected; check api_key / api_key_env or run /setup",
    "forbidden": "the key is not allowed to use this model or endpoint; check the key's permissions "
    "and the model name",
    "not_found": "the model or the path does not exist; check that base_url ends in /v1 and that the "
    "model is one the server lists (/setup → test connection)",
    "context_length": "the conversation is too long for the model's context window; compact or start a "
    "new session, or lower the amount of tool output",
    "rate_limit": "the server is rate limiting requests; wait and try again",
    "server": "the server failed; try again later or check the server's logs",
    "bad_request": "the server rejected the request",
    "protocol": "the server sent an unexpected response",
}


def status_error(
    status: int,
    reason: str,
    url: str,
    detail: str,
    *,
    model: str | None = None,
    retry_after: float | None = None,
) -> LLMError:
    """Build the LLMError for an HTTP error response.

    ``reason`` is the status phrase ("Unauthorized"), ``url`` the request URL (credentials are
    stripped), ``detail`` the server's own error text (quoted, cut to :data:`MAX_QUOTE` chars;
    callers scrub it of the key first), ``model`` named in 404 messages, ``retry_after`` in seconds."""
    kind = kind_for_status(status, detail)
    advice = _ADVICE[kind]
    if kind == "not_found" and model:
        advice = f"the model '{model}' or the path does not exist; " + advice.split("; ", 1)[1]
    if kind == "rate_limit" and retry_after is not None:
        advice += f" (the server asked for {retry_after:g} s)"
    text = f"{status} {reason} from {safe_url(url)}: {advice}".replace(f"{status}  from", f"{status} from")
    if detail.strip():
        text += f". Server said: {quote(detail)}"
    return LLMError(kind, text, status=status, retry_after=retry_after)
