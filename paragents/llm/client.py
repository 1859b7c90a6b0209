"""OpenAI-compatible chat client over httpx: streaming, retries, timeouts and readable errors.

Speaks ``POST {base_url}/chat/completions`` with ``stream: true`` and ``GET {base_url}/models`` as
documented at https://platform.openai.com/docs/api-reference/chat; works with OpenAI, vLLM,
llama.cpp, Ollama, LM Studio, OpenRouter and proxies that follow that shape. Every failure is an
:class:`~paragents.llm.errors.LLMError`; the API key never appears in messages or recordings.
"""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote as percent_encode

import httpx

from paragents.llm.errors import LLMError, quote, safe_url, scrub, status_error
from paragents.llm.sse import iter_events, reads_for_record
from paragents.llm.stream import (
    StreamAssembler,
    StreamDelta,
    error_detail,
    parse_context_windows,
    parse_model_list,
    parse_props_context,
)
from paragents.llm.transport import parse_retry_after, transport_error
from paragents.models import AssembledReply

RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
"""HTTP statuses that are retried with backoff."""

SESSION_HEADER = "X-Paragents-Session"


def header_label(label: str) -> str:
    """``label`` as an HTTP header value: HTTP headers are ASCII, and session names may hold any
    letters and emoji, so a name that is not plain printable ASCII is percent-encoded (UTF-8)."""
    if label.isascii() and label.isprintable() and "%" not in label:
        return label
    return percent_encode(label, safe="")


"""Request header naming the session; the replay server routes scripted responses by it."""

_SECRET_HEADERS = {"authorization", "proxy-authorization", "cookie", "set-cookie", "x-api-key", "api-key"}
_MAX_ERROR_BODY = 64 * 1024


@dataclass
class _Retry(Exception):
    """Internal: an attempt failed in a way worth retrying."""

    error: LLMError
    reason: str


@dataclass
class _Fallback(Exception):
    """Internal: a 400 that may be caused by ``stream_options``; retry once without it."""

    error: LLMError
    certain: bool


class ChatClient:
    """A client for one OpenAI-compatible endpoint; share it between sessions, close it with
    :meth:`aclose`.

    - ``base_url``: up to and including ``/v1`` (e.g. ``http://127.0.0.1:8080/v1``).
    - ``api_key``: sent as ``Authorization: Bearer``; None sends no Authorization header.
    - ``connect_timeout`` / ``read_timeout``: seconds for the TCP/TLS connect and for the first byte
      and each gap between stream chunks.
    - ``max_retries``: retries on connect errors, 429, 500/502/503/504 and a stream the server
      dropped (it ended, or the connection closed, with no text and no finish_reason), never after
      any delta.
    - ``max_retry_wait``: longest single wait in seconds, from Retry-After or backoff; a longer
      Retry-After is reported as LLMError(kind="rate_limit", retry_after=...) instead of slept.
    - ``retry_base_delay``: first backoff in seconds (doubled per retry, plus up to 25 % jitter).
    - ``extra_headers``: sent with every request (non-secret).
    - ``recorder``: called per HTTP response with ``{"request": body, "path", "status", "headers"
      (minus auth/cookies), "reads": [str per network read]}`` (``"reads_b64"`` instead when a read
      is not valid UTF-8 on its own) — the cassette format of ``tests/fixtures_shared``.
    """

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        connect_timeout: float = 10,
        read_timeout: float = 120,
        max_retries: int = 3,
        max_retry_wait: float = 60,
        retry_base_delay: float = 1.0,
        extra_headers: dict[str, str] | None = None,
        recorder: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        self.base_url = base_url.rstrip("/")
        self._api_key = api_key or None
        self.connect_timeout = connect_timeout
        self.read_timeout = read_timeout
        self.max_retries = max_retries
        self.max_retry_wait = max_retry_wait
        self.retry_base_delay = retry_base_delay
        self._extra_headers = dict(extra_headers or {})
        self._recorder = recorder
        self.include_usage = True
        """False once the server refused ``stream_options``; then it is no longer sent."""
        self._http_client: httpx.AsyncClient | None = None
        self._closed = False

    @property
    def _http(self) -> httpx.AsyncClient:
        """The connection pool, created on first use (building its TLS context costs ~80 ms, which
        startup does not need). Raises RuntimeError once :meth:`aclose` was called."""
        if self._http_client is None:
            if self._closed:
                raise RuntimeError("ChatClient is closed")
            timeout = httpx.Timeout(
                connect=self.connect_timeout,
                read=self.read_timeout,
                write=self.read_timeout,
                pool=self.read_timeout,
            )
            self._http_client = httpx.AsyncClient(timeout=timeout)
        return self._http_client

    def __repr__(self) -> str:
        return f"ChatClient(base_url={safe_url(self.base_url)!r})"

    async def aclose(self) -> None:
        """Close the connection pool (if one was opened). The client cannot be used afterwards."""
        self._closed = True
        if self._http_client is not None:
            await self._http_client.aclose()

    # -- helpers ---------------------------------------------------------------------------------
    def _headers(self, session_label: str | None, accept: str) -> dict[str, str]:
        headers = {"Accept": accept, **self._extra_headers}
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        if session_label:
            headers[SESSION_HEADER] = header_label(session_label)
        return headers

    def _scrub(self, error: LLMError) -> LLMError:
        error.message = scrub(error.message, self._api_key)
        error.args = (error.message,)
        return error

    def _record(
        self, body: dict[str, Any] | None, path: str, response: httpx.Response, reads: list[bytes]
    ) -> None:
        if self._recorder is None:
            return
        headers = {k: v for k, v in response.headers.items() if k.lower() not in _SECRET_HEADERS}
        record: dict[str, Any] = {
            "request": body,
            "path": path,
            "status": response.status_code,
            "headers": headers,
        }
        record.update(reads_for_record(reads))
        self._recorder(json.loads(scrub(json.dumps(record), self._api_key)))

    async def _error_from_response(
        self, response: httpx.Response, url: str, body: dict[str, Any] | None, path: str, model: str | None
    ) -> LLMError:
        reads: list[bytes] = []
        async for chunk in response.aiter_bytes():
            reads.append(chunk)
            if sum(map(len, reads)) > _MAX_ERROR_BODY:
                break
        self._record(body, path, response, reads)
        text = scrub(b"".join(reads).decode("utf-8", "replace"), self._api_key)
        return status_error(
            response.status_code,
            response.reason_phrase,
            url,
            error_detail(text),
            model=model,
            retry_after=parse_retry_after(response.headers),
        )

    # -- chat ------------------------------------------------------------------------------------
    async def stream_chat(
        self,
        *,
        model: str,
        messages: list[dict[str, Any]],
        tools: list[dict[str, Any]] | None,
        on_delta: Callable[[StreamDelta], None] | None = None,
        on_retry: Callable[[str, float, int], None] | None = None,
        session_label: str | None = None,
    ) -> AssembledReply:
        """Stream one chat completion and return the assembled reply (``complete`` is True).

        ``messages`` are OpenAI-format message dicts; ``tools`` OpenAI function tool specs (sent
        with ``tool_choice: "auto"``) or None. ``on_delta`` receives each text/reasoning/tool-call
        delta as it arrives; ``on_retry(reason, delay_seconds, attempt)`` is called before each
        retry wait; ``session_label`` is sent as the ``X-Paragents-Session`` header.

        Raises LLMError (see its kinds); after a mid-stream failure ``partial`` holds what arrived.
        Cancelling the task closes the connection at once and propagates CancelledError."""
        delivered = [False]

        def deliver(deltas: list[StreamDelta]) -> None:
            if deltas:
                delivered[0] = True
                if on_delta is not None:
                    for delta in deltas:
                        on_delta(delta)

        retries = 0
        fallback_done = False
        while True:
            body: dict[str, Any] = {"model": model, "messages": messages, "stream": True}
            if self.include_usage and not fallback_done:
                body["stream_options"] = {"include_usage": True}
            if tools:
                body["tools"] = tools
                body["tool_choice"] = "auto"
            try:
                reply = await self._attempt(body, model, session_label, deliver)
            except _Fallback as fb:
                if fallback_done:
                    raise self._scrub(fb.error) from None
                fallback_done = True
                if fb.certain:
                    self.include_usage = False
                continue
            except _Retry as rt:
                error = self._scrub(rt.error)
                if delivered[0]:
                    raise error from None
                if retries >= self.max_retries:
                    if retries:
                        error.message += f" (gave up after {retries} retries)"
                        error.args = (error.message,)
                    raise error from None
                delay = self._retry_delay(retries, error)
                retries += 1
                if on_retry is not None:
                    on_retry(rt.reason, delay, retries)
                await asyncio.sleep(delay)
                continue
            except LLMError as error:
                raise self._scrub(error) from None
            if fallback_done and "stream_options" not in body:
                self.include_usage = False
            return reply

    def _retry_delay(self, retries: int, error: LLMError) -> float:
        """Seconds to wait before retry number ``retries + 1``; raises ``error`` (as rate_limit for a
        429) when the server asks for longer than ``max_retry_wait``."""
        if error.retry_after is not None:
            if error.retry_after > self.max_retry_wait:
                error.message += (
                    f"; the server asked to wait {error.retry_after:g} s, longer than max_retry_wait "
                    f"({self.max_retry_wait:g} s), so paragents did not wait — try again later"
                )
                error.args = (error.message,)
                raise error
            return error.retry_after
        backoff = self.retry_base_delay * (2.0**retries)
        return min(self.max_retry_wait, backoff * (1 + random.uniform(0, 0.25)))

    async def _attempt(
        self,
        body: dict[str, Any],
        model: str,
        session_label: str | None,
        deliver: Callable[[list[StreamDelta]], None],
    ) -> AssembledReply:
        url = f"{self.base_url}/chat/completions"
        path = "/chat/completions"
        assembler = StreamAssembler()
        started = [False]
        reads: list[bytes] = []
        try:
            async with self._http.stream(
                "POST", url, json=body, headers=self._headers(session_label, "text/event-stream")
            ) as response:
                started[0] = True
                if response.status_code >= 300:
                    error = await self._error_from_response(response, url, body, path, model)
                    if response.status_code == 400 and "stream_options" in body:
                        detail = error.message.lower()
                        certain = "stream_options" in detail or "include_usage" in detail
                        if certain or error.kind != "context_length":
                            raise _Fallback(error, certain)
                    if response.status_code in RETRY_STATUSES:
                        what = "rate limited" if response.status_code == 429 else "server error"
                        raise _Retry(error, f"{what} ({response.status_code})")
                    raise error
                try:
                    return await self._read_reply(response, url, assembler, reads, deliver)
                finally:
                    self._record(body, path, response, reads)
        except httpx.HTTPError as exc:
            partial = assembler.snapshot() if started[0] else None
            error = transport_error(
                exc,
                url,
                partial,
                connect_timeout=self.connect_timeout,
                read_timeout=self.read_timeout,
                got_data=bool(reads),
            )
            if not started[0] and isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout):
                raise _Retry(error, "connection failed") from None
            if assembler.empty and isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
                raise _Retry(error, "the server closed the connection without a reply") from None
            raise error from None

    async def _read_reply(
        self,
        response: httpx.Response,
        url: str,
        assembler: StreamAssembler,
        reads: list[bytes],
        deliver: Callable[[list[StreamDelta]], None],
    ) -> AssembledReply:
        ctype = response.headers.get("content-type", "").partition(";")[0].strip().lower()
        where = safe_url(url)
        if "html" in ctype:
            async for chunk in response.aiter_bytes():
                reads.append(chunk)
                if sum(map(len, reads)) > 2000:
                    break
            page = quote(b"".join(reads).decode("utf-8", "replace"), 120)
            raise LLMError(
                "protocol",
                f"{where} answered with an HTML page instead of an event stream "
                f"(page starts: {page}); check that base_url points at the API and ends in /v1",
                status=response.status_code,
            )
        if ctype == "application/json":
            raw = await response.aread()
            reads.append(raw)
            if not raw:
                raise self._empty(where, response.status_code)
            try:
                data = json.loads(raw)
            except ValueError:
                raise LLMError(
                    "protocol",
                    f"{where} sent a JSON reply that does not parse: "
                    f"{quote(raw.decode('utf-8', 'replace'), 200)}",
                    status=response.status_code,
                ) from None
            deliver(assembler.feed_completion(data))
            return assembler.finish(done=True)
        done = False
        try:
            async for event in iter_events(response, reads):
                data_text = event.data
                if data_text.strip() == "[DONE]":
                    done = True
                    break
                if not data_text.strip():
                    continue
                try:
                    chunk = json.loads(data_text)
                except ValueError:
                    raise LLMError(
                        "protocol",
                        f"{where} sent a stream line that is not JSON: "
                        f"'data: {quote(data_text, 200)}'; the server or a proxy in between "
                        "broke the event stream",
                        partial=assembler.snapshot(),
                    ) from None
                deliver(assembler.feed(chunk))
        except UnicodeDecodeError:
            raise LLMError(
                "protocol",
                f"{where} sent a stream that is not valid UTF-8 (or ended in the middle "
                "of a character); the partial reply was kept — try again",
                partial=assembler.snapshot(),
            ) from None
        if not reads or not any(reads):
            raise self._empty(where, response.status_code)
        if assembler.finish_reason is None and assembler.empty:  # nothing came: not a reply
            raise _Retry(self._dropped(where, response.status_code), "the server dropped the request")
        return assembler.finish(done)

    @staticmethod
    def _dropped(where: str, status: int) -> LLMError:
        """A stream that ended (``[DONE]``, or its end) with nothing in it and no finish_reason: the
        server gave the request up. llama.cpp's Python server (``llama_cpp.server``: one request at
        a time) ends the running request so when another arrives; it is retried like a 503."""
        return LLMError(
            "server",
            f"{where} ended the stream with no reply and no finish_reason: the server dropped the "
            "request. A server that runs one request at a time does this when another request "
            "arrives (llama.cpp's Python server: start it with --interrupt_requests False to queue "
            "them); run fewer sessions at once against it",
            status=status,
        )

    @staticmethod
    def _empty(where: str, status: int) -> LLMError:
        return LLMError(
            "protocol",
            f"{where} answered {status} with an empty body (0 bytes) instead of an "
            "event stream; check the server's logs, and that base_url is the API's /v1 address",
            status=status,
        )

    # -- models ----------------------------------------------------------------------------------
    async def list_models(self) -> list[str]:
        """Return the model ids served at ``GET {base_url}/models`` (OpenAI ``{"data": [{"id"}]}``).

        One attempt, no retries (used for quick connection checks). Raises LLMError."""
        url = f"{self.base_url}/models"
        try:
            async with self._http.stream(
                "GET", url, headers=self._headers(None, "application/json")
            ) as response:
                if response.status_code >= 300:
                    raise await self._error_from_response(response, url, None, "/models", None)
                raw = await response.aread()
                self._record(None, "/models", response, [raw])
        except httpx.HTTPError as exc:
            raise self._scrub(
                transport_error(
                    exc, url, None, connect_timeout=self.connect_timeout, read_timeout=self.read_timeout
                )
            ) from None
        except LLMError as error:
            raise self._scrub(error) from None
        try:
            return parse_model_list(json.loads(raw))
        except ValueError as exc:
            text = quote(scrub(raw.decode("utf-8", "replace"), self._api_key), 200)
            raise LLMError(
                "protocol",
                f"{safe_url(url)} did not return a model list ({exc}); got: {text}",
                status=response.status_code,
            ) from None

    async def context_windows(self) -> tuple[dict[str, int], str]:
        """Return the context window of each model the server says it runs with, and where that was
        read: the ``/models`` entries' context fields, else llama.cpp's ``GET /props`` (the server's
        ``n_ctx``, for every model it lists). ``({}, "")`` when the server does not say. One attempt
        each, never raises (used by setup)."""
        body = await self._get_json(f"{self.base_url}/models")
        windows = parse_context_windows(body)
        if windows:
            return windows, "the server's /models"
        root = self.base_url.removesuffix("/v1")
        n_ctx = parse_props_context(await self._get_json(f"{root}/props"))
        if n_ctx is None:
            return {}, ""
        try:
            names = parse_model_list(body)
        except ValueError:
            names = []
        return {name: n_ctx for name in names} or {"": n_ctx}, "the server's /props (n_ctx)"

    async def _get_json(self, url: str) -> Any:
        """``GET url`` as JSON (one attempt, at most 1 MB), or None when it failed or is not JSON."""
        try:
            async with self._http.stream("GET", url, headers=self._headers(None, "application/json")) as r:
                if r.status_code >= 300:
                    return None
                raw = b""
                async for chunk in r.aiter_bytes():
                    raw += chunk
                    if len(raw) > 1_000_000:
                        return None
            return json.loads(raw)
        except (httpx.HTTPError, ValueError):
            return None

    async def check_connection(self, model: str) -> tuple[bool, str]:
        """Check the endpoint by listing its models; return ``(ok, plain sentence)``.

        ``ok`` is True when the server answered and ``model`` is listed (or ``model`` is "").
        Never raises LLMError; the sentence says what worked or what to fix."""
        where = safe_url(self.base_url)
        try:
            models = await self.list_models()
        except LLMError as error:
            return False, error.message
        shown = ", ".join(models[:8]) + (f" … ({len(models)} in all)" if len(models) > 8 else "")
        if not model:
            return True, f"Connected to {where}; it serves {len(models)} model(s): {shown or '(none)'}."
        if model in models:
            return True, f"Connected to {where}; model '{model}' is available."
        return False, (
            f"Connected to {where}, but it does not list model '{model}'. Available: {shown or '(none)'}; "
            "pick one of them."
        )
