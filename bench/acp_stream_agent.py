"""The fake ACP agent of the peer benchmark (``bench/peer.py``), written with the SDK's agent side and
run as a subprocess by both hosts (paragents and Toad) with paragents' python:
``python bench/acp_stream_agent.py --rate R --tokens K [--sent FILE]``.

Each ``session/prompt`` is answered with the benchmark's synthetic Markdown reply
(:func:`bench.common.corpus`, seed 0, ``K`` tokens of 4 characters): one ``agent_message_chunk`` per
token, paced on an absolute schedule at ``R`` tokens/s, then the turn ends (``end_turn``). Every chunk
carries ``_meta.bench = {"seq": i, "sent": t}`` (``t``: ``time.monotonic()``, CLOCK_MONOTONIC, which
every process on the machine shares). When ``--sent`` is given, the send times of the last turn are
written there as a JSON list (one per chunk, in order) before the turn ends, so a host's frame times can
be matched with them afterwards without the host reading anything extra while it streams.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
import time
import uuid
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script by a host (its cwd is the project, not this repo)
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from acp import PROTOCOL_VERSION, run_agent
from acp.schema import (
    AgentCapabilities,
    AgentMessageChunk,
    InitializeResponse,
    NewSessionResponse,
    PromptResponse,
    TextContentBlock,
)

from bench.common import CHARS_PER_TOKEN, corpus, pieces

META_KEY = "bench"
"""The ``_meta`` key of every chunk's stamp."""


def reply_chunks(tokens: int) -> list[str]:
    """The chunks the agent streams for one prompt (the same for every host)."""
    return pieces(corpus(tokens * CHARS_PER_TOKEN, 0))


class StreamAgent:
    """Streams :func:`reply_chunks` at ``rate`` tokens/s for every prompt."""

    def __init__(self, rate: float, tokens: int, sent_file: Path | None) -> None:
        self.rate = rate
        self.chunks = reply_chunks(tokens)
        self.sent_file = sent_file
        self.conn: Any = None

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, **kwargs: Any) -> InitializeResponse:
        return InitializeResponse(protocol_version=PROTOCOL_VERSION, agent_capabilities=AgentCapabilities())

    async def new_session(self, cwd: str, **kwargs: Any) -> NewSessionResponse:
        return NewSessionResponse(session_id=f"bench-{uuid.uuid4().hex[:8]}")

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        return None

    async def prompt(self, prompt: list[Any], session_id: str, **kwargs: Any) -> PromptResponse:
        sent: list[float] = []
        start = time.monotonic()
        for i, text in enumerate(self.chunks):
            if self.rate > 0:
                delay = start + i / self.rate - time.monotonic()
                if delay > 0:
                    await asyncio.sleep(delay)
            now = time.monotonic()
            sent.append(now)
            chunk = AgentMessageChunk(
                session_update="agent_message_chunk",
                content=TextContentBlock(type="text", text=text),
                field_meta={META_KEY: {"seq": i, "sent": now}},
            )
            await self.conn.session_update(session_id, chunk)
        if self.sent_file is not None:
            self.sent_file.write_text(json.dumps(sent))
        return PromptResponse(stop_reason="end_turn")


def main() -> None:
    parser = argparse.ArgumentParser(prog="acp_stream_agent.py")
    parser.add_argument("--rate", type=float, default=50, help="tokens per second (0: unpaced)")
    parser.add_argument("--tokens", type=int, default=400, help="tokens per reply")
    parser.add_argument("--sent", type=Path, default=None, help="write the last turn's send times here")
    args = parser.parse_args()
    asyncio.run(run_agent(StreamAgent(args.rate, args.tokens, args.sent)))  # type: ignore[arg-type]


if __name__ == "__main__":
    main()
