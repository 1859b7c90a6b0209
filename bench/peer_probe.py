"""The probe both hosts of the peer benchmark use (paragents in ``bench/peer_paragents.py``, Toad in
``bench/toad_driver.py``); standard library only, so Toad's Python 3.14 can import it without paragents.

How each number is taken, the same way in both hosts (both are Textual apps):

- **token→frame**: the fake agent (``bench/acp_stream_agent.py``) stamps chunk *i* with its send time
  (``time.monotonic()``, CLOCK_MONOTONIC, shared by every process) and writes the list to a file when the
  turn ends. In the host, ``handed()`` says how many chunks its reply widget has been *given and has
  finished taking in* (paragents: the chunks its session panel flushed into the transcript; Toad: the
  characters whose ``Markdown.update``/``append`` on its ``AgentResponse`` widget completed, as chunks).
  Every frame (a wrapped ``App._display`` not held by ``batch_update``, which also turns the update into
  terminal bytes as a terminal would need, as ``bench/probes.py`` does) records ``(time, handed())``.
  Afterwards chunk *i*'s latency is the first frame time whose count covers it minus its send time, so
  it includes the pipe, JSON-RPC parsing, the host's queues, rendering and the frame. The one panel of
  each host stays scrolled to its end, so every chunk is on screen when it is drawn.
- **loop lag**: :class:`bench.probes.LagTicker`, a 10 ms asyncio ticker in the host's event loop.
- **CPU per 1k tokens**: the host process's CPU time (``time.process_time``, all its threads) from just
  before the prompt is sent until 0.5 s after both the turn ended and a frame showed the last chunk
  (:meth:`PeerProbe.until_shown`), per 1,000 chunks. The agent subprocess is
  not counted (it is the same program for both hosts).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable
from typing import Any

from bench.common import percentile, r
from bench.probes import LagTicker, Window


class PeerProbe:
    """Records ``(frame time, chunks handed)`` for every frame of ``app`` while :attr:`recording`."""

    def __init__(self, app: Any, handed: Callable[[], int]) -> None:
        self.handed = handed
        self.frames: list[tuple[float, int]] = []
        self.frame_count = 0
        self.recording = False
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            original(screen, renderable)
            if renderable is None or app._batch_count:
                return
            with contextlib.suppress(Exception):
                renderable.render_segments(app.console)
            if self.recording:
                self.frame_count += 1
                self.frames.append((time.monotonic(), self.handed()))

        app._display = display

    async def until_shown(self, total: int, bound: float = 60.0) -> None:
        """Wait (checking every 50 ms, at most ``bound`` s) until a frame showed all ``total`` chunks."""
        deadline = time.monotonic() + bound
        while (not self.frames or self.frames[-1][1] < total) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)

    def latencies_ms(self, sent: list[float]) -> list[float]:
        """Chunk send → first frame that showed it, for every chunk shown (ms)."""
        out: list[float] = []
        shown = 0
        for at, count in self.frames:
            count = min(count, len(sent))
            out.extend((at - sent[i]) * 1000 for i in range(shown, count))
            shown = max(shown, count)
        return out


def summarize(probe: PeerProbe, lag: LagTicker, window: Window, sent: list[float]) -> dict[str, Any]:
    """The metrics of one host run (times in ms, CPU in ms per 1,000 chunks and % of one core)."""
    latencies = probe.latencies_ms(sent)
    tokens = len(sent)
    return {
        "tokens": tokens,
        "tok_shown": len(latencies),
        "tok_to_frame_p50_ms": r(percentile(latencies, 50)),
        "tok_to_frame_p99_ms": r(percentile(latencies, 99)),
        "loop_lag_p99_ms": r(percentile(lag.lags_ms, 99)),
        "loop_lag_max_ms": r(max(lag.lags_ms, default=0.0)),
        "cpu_ms_per_1k_tokens": r(window.cpu * 1000 / max(tokens, 1) * 1000, 0),
        "cpu_pct": r(100 * window.cpu / window.wall),
        "fps": r(probe.frame_count / window.wall),
        "wall_s": r(window.wall, 2),
    }
