"""The paragents host of the peer benchmark: ``python -m bench.peer_paragents --rate R --tokens K --sent F``
prints one JSON object (see :func:`bench.peer_probe.summarize`).

It runs the real app headless (``make_app`` + ``App.run_test`` at 200x50, as ``bench/stream.py`` does)
with one session run by the external agent ``bench`` (an ``AcpAgent``: the ``/new --agent bench`` path),
whose command is the fake agent ``bench/acp_stream_agent.py``. It waits until the agent is ready,
submits the prompt as the prompt box does (``Runtime.submit``) and waits until the session is idle.
The chunks its panel has taken in are counted the way ``bench/stream.py`` counts them: the deltas its
``SessionPanel`` applied, at each flush of its tail view (and at the final Markdown render).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from pathlib import Path
from typing import Any

from bench.acp_stream_agent import reply_chunks
from bench.common import bench_root
from bench.peer_probe import PeerProbe, summarize
from bench.probes import LagTicker, Window

SIZE = (200, 50)
SETTLE_S = 0.5
AGENT = Path(__file__).with_name("acp_stream_agent.py")


async def run(args: argparse.Namespace) -> dict[str, Any]:
    from paragents.sessions.runtime import Runtime

    root = bench_root()
    chunks = reply_chunks(args.tokens)
    argv = [str(AGENT), "--rate", str(args.rate), "--tokens", str(args.tokens), "--sent", str(args.sent)]
    agent = {"command": sys.executable, "args": argv}
    overrides = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "agents": {"bench": agent}}
    runtime = await Runtime.create(root / "project", cli_overrides=overrides, db_path=root / "state" / "b.db")
    try:
        return await _measure(runtime, args, chunks)
    finally:
        await runtime.shutdown()  # also on errors: the store's thread would keep the process alive


async def _measure(runtime: Any, args: argparse.Namespace, chunks: list[str]) -> dict[str, Any]:
    from paragents.events import MessageAdded, TextDelta, TurnFinished
    from paragents.ui.app import make_app
    from paragents.ui.widgets.session_panel import SessionPanel
    from paragents.ui.widgets.transcript import AssistantBlock

    sid = (await runtime.lifecycle.new_agent_session("bench", "peer")).id
    app = make_app(runtime, tune_gc=True)  # as the CLI does
    applied = [0]
    handed = [0]
    original_apply, original_flush = SessionPanel.apply, SessionPanel.flush

    async def apply(self: SessionPanel, event: Any) -> None:
        await original_apply(self, event)
        if self.session_id != sid:
            return
        if isinstance(event, TextDelta):
            applied[0] += event.pieces  # the app joins queued deltas
        elif isinstance(event, MessageAdded | TurnFinished):
            handed[0] = applied[0]

    def flush(self: SessionPanel) -> bool:
        count = applied[0]
        done = original_flush(self)
        if done and self.session_id == sid:
            handed[0] = count
        return done

    SessionPanel.apply = apply  # type: ignore[method-assign]
    SessionPanel.flush = flush  # type: ignore[method-assign]
    probe = PeerProbe(app, lambda: handed[0])
    lag, window = LagTicker(), Window()
    async with app.run_test(size=SIZE) as pilot:
        deadline = asyncio.get_running_loop().time() + 90
        while not (app.ready and sid in app.panels and _agent_ready(runtime, sid)):
            if asyncio.get_running_loop().time() > deadline:
                raise TimeoutError("the ACP agent did not become ready")
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        lag.start()
        probe.recording = True
        window.start()
        runtime.submit(sid, "go")
        await asyncio.sleep(0.2)
        await asyncio.wait_for(runtime.wait_idle(sid), timeout=args.tokens / args.rate * 20 + 60)
        await probe.until_shown(len(chunks))
        await asyncio.sleep(SETTLE_S)
        window.stop()
        lag.stop()
        blocks = list(app.panels[sid].query(AssistantBlock))
        text_ok = bool(blocks) and blocks[-1].entry.content == "".join(chunks)
    sent = json.loads(args.sent.read_text())
    result = summarize(probe, lag, window, sent)
    result.update(text_ok=text_ok, host="paragents", python=sys.version.split()[0])
    return result


def _agent_ready(runtime: Any, sid: str) -> bool:
    """True once the session's ACP agent runs with an open session (``initialize`` answered)."""
    from paragents.sessions.acp import agent_of

    agent = agent_of(runtime, sid)
    return agent is not None and agent.link.running and agent.link.remote_id is not None


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.peer_paragents")
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--sent", type=Path, required=True, help="where the agent writes its send times")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(run(args))), flush=True)


if __name__ == "__main__":
    main()
