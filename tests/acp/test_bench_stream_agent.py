"""The peer benchmark's fake ACP agent (bench/acp_stream_agent.py), driven by the SDK's client side over
its stdio pipes as a host runs it: it streams the benchmark reply as stamped, paced message chunks and
writes the send times it stamped; and the probe that matches those send times with a host's frames."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, spawn_agent_process, text_block
from acp.schema import AgentMessageChunk, ClientCapabilities

from bench.acp_stream_agent import META_KEY, reply_chunks

AGENT = Path(__file__).resolve().parents[2] / "bench" / "acp_stream_agent.py"


class Chunks:
    def __init__(self) -> None:
        self.updates: list[Any] = []

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append(update)


async def test_the_bench_agent_streams_the_reply_as_stamped_paced_chunks(tmp_path: Path) -> None:
    sent_file = tmp_path / "sent.json"
    client = Chunks()
    rate, tokens = 200, 30
    argv = [str(AGENT), "--rate", str(rate), "--tokens", str(tokens), "--sent", str(sent_file)]
    async with spawn_agent_process(client, sys.executable, *argv, cwd=str(tmp_path)) as (conn, _proc):  # type: ignore[arg-type]
        await asyncio.wait_for(
            conn.initialize(protocol_version=PROTOCOL_VERSION, client_capabilities=ClientCapabilities()), 90
        )
        session = await conn.new_session(cwd=str(tmp_path), mcp_servers=[])
        done = await asyncio.wait_for(
            conn.prompt(session_id=session.session_id, prompt=[text_block("go")]), 90
        )
    assert done.stop_reason == "end_turn"
    chunks = [u for u in client.updates if isinstance(u, AgentMessageChunk)]
    expected = reply_chunks(tokens)
    assert [c.content.text for c in chunks] == expected
    stamps = [c.field_meta[META_KEY] for c in chunks if c.field_meta]
    assert [s["seq"] for s in stamps] == list(range(len(expected)))
    sent = json.loads(sent_file.read_text())
    assert sent == [s["sent"] for s in stamps]
    assert sent[-1] - sent[0] >= (len(expected) - 1) / rate * 0.95  # paced, not sent in one burst


def test_the_peer_probe_times_each_chunk_from_its_send_to_the_first_frame_that_shows_it() -> None:
    from bench.peer_probe import PeerProbe

    class App:
        _batch_count = 0
        console = None

        def _display(self, screen: Any, renderable: Any) -> None:
            pass

    app = App()
    handed = [0]
    probe = PeerProbe(app, lambda: handed[0])
    probe.recording = True
    app._display(None, object())  # a frame before anything was handed: times nothing
    handed[0] = 2
    app._batch_count = 1
    app._display(None, object())  # held by batch_update: not a frame
    app._batch_count = 0
    app._display(None, object())
    handed[0] = 3
    app._display(None, object())
    frames = [at for at, _ in probe.frames]
    assert [count for _, count in probe.frames] == [0, 2, 3]
    sent = [frames[0] - 0.010, frames[0] - 0.005, frames[1]]
    got = probe.latencies_ms(sent)
    expected = [(frames[1] - sent[0]) * 1000, (frames[1] - sent[1]) * 1000, (frames[2] - sent[2]) * 1000]
    assert got == expected
