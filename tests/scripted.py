"""Scripted replies shared by the test packages (the loopback replay server's responses)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence

from paragents.llm.replay import ReplayServer
from paragents.llm.replay_script import ScriptedResponse


def gated(text: str, gate: asyncio.Event, at: int = 3) -> ScriptedResponse:
    """A streamed reply of ``text`` (4-character chunks) that stops before read ``at`` until ``gate``
    is set: the turn is mid-stream for as long as the test needs."""

    async def before(i: int) -> None:
        if i == at:
            await gate.wait()

    response = ScriptedResponse.from_message(text, chunk_size=4)
    response.before_read = before
    return response


def _chunk(delta: dict[str, str]) -> str:
    """One chunk as llama.cpp's Python server streams it (its own fields, ``finish_reason`` null)."""
    body = {
        "id": "chatcmpl-208836ee-2f4c-4dd4-a36b-6a84361b5ffd",
        "model": "smollm2",
        "created": 1796160752,
        "object": "chat.completion.chunk",
        "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": None}],
    }
    return f"data: {json.dumps(body)}\n\n"


def cut_by_next_request(
    other_arrived: Callable[[], Awaitable[object]], content: Sequence[str] = ()
) -> ScriptedResponse:
    """What a one-request-at-a-time server sends the running streamed request when another arrives,
    as measured against llama-cpp-python 0.3.36 (``../shared/tools/local-model``, its default
    ``interrupt_requests``; /work/captures/leftovers-single-slot-raw.txt): status 200, its role chunk
    and the ``content`` streamed so far, then ``data: [DONE]`` with no finish_reason. The cut waits
    for ``other_arrived()`` (the other request reaching the server)."""
    reads: list[bytes | str] = [_chunk({"role": "assistant"}), *(_chunk({"content": c}) for c in content)]
    cut_at = len(reads)

    async def before(i: int) -> None:
        if i == cut_at:
            await other_arrived()

    return ScriptedResponse(reads=[*reads, "data: [DONE]\n\n"], before_read=before)


def posts(server: ReplayServer, n: int) -> Callable[[], Awaitable[None]]:
    """An ``other_arrived`` for :func:`cut_by_next_request`: once ``server`` got ``n`` chat requests."""
    return lambda: server.wait_for(lambda: sum(r.method == "POST" for r in server.requests) >= n)
