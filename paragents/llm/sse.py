"""Server-sent-events decoding of a streaming httpx response, with the raw reads kept for recording.

Decoding is done by ``httpx-sse`` (https://github.com/florimondmanca/httpx-sse), which follows the
WHATWG event-stream rules: lines end in ``\\n``, ``\\r\\n`` or a bare ``\\r`` (also when a CR and its
LF arrive in different reads), ``:`` comment lines and unknown fields are ignored, ``data:`` is
accepted with or without one space, and text is decoded incrementally so a UTF-8 character split
across reads is joined. Each of those cases is exercised by the fixtures in ``tests/llm``.

What this module adds: the raw bytes of every network read are kept (for cassettes), the body is
checked to be valid UTF-8 (a stream that ends inside a character is an error rather than a silent
U+FFFD), and servers that stream SSE under another content type are still decoded.
"""

from __future__ import annotations

import base64
import codecs
from collections.abc import AsyncIterator
from typing import Any

import httpx
from httpx_sse import EventSource, ServerSentEvent

_DROP_HEADERS = {"content-encoding", "content-length", "transfer-encoding", "content-type"}


class _RecordingStream(httpx.AsyncByteStream):
    """The decoded body bytes of ``source``, read by read, appended to ``reads`` and checked to be
    valid UTF-8 (raises UnicodeDecodeError otherwise, at the end for a cut-off character)."""

    def __init__(self, source: httpx.Response, reads: list[bytes]) -> None:
        self._source = source
        self._reads = reads
        self._utf8 = codecs.getincrementaldecoder("utf-8")("strict")

    async def __aiter__(self) -> AsyncIterator[bytes]:
        async for chunk in self._source.aiter_bytes():
            self._reads.append(chunk)
            self._utf8.decode(chunk)
            yield chunk
        self._utf8.decode(b"", final=True)

    async def aclose(self) -> None:
        await self._source.aclose()


async def iter_events(response: httpx.Response, reads: list[bytes]) -> AsyncIterator[ServerSentEvent]:
    """Yield the SSE events of ``response`` as they arrive; every raw read is appended to ``reads``.

    The response is decoded as an event stream whatever its content type (callers reject HTML and
    handle JSON first). Raises httpx transport errors (ReadTimeout, RemoteProtocolError...) as they
    happen, and UnicodeDecodeError when the body is not valid UTF-8."""
    headers = [(k, v) for k, v in response.headers.items() if k.lower() not in _DROP_HEADERS]
    headers.append(("content-type", "text/event-stream; charset=utf-8"))
    wrapped = httpx.Response(
        response.status_code,
        headers=headers,
        stream=_RecordingStream(response, reads),
        request=response.request,
    )
    events = EventSource(wrapped).aiter_sse()
    try:
        async for event in events:
            yield event
    finally:
        await events.aclose()


def reads_for_record(reads: list[bytes]) -> dict[str, Any]:
    """Return ``{"reads": [str, ...]}`` when every read is valid UTF-8 on its own, else
    ``{"reads_b64": [base64 str, ...]}`` (the two fixture formats of ``tests/fixtures_shared/README.md``)."""
    try:
        return {"reads": [r.decode("utf-8") for r in reads]}
    except UnicodeDecodeError:
        return {"reads_b64": [base64.b64encode(r).decode("ascii") for r in reads]}
