"""Scripted replies shared by the test packages (the loopback replay server's responses)."""

from __future__ import annotations

import asyncio

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
