"""In-app probes of the streaming benchmark: a 10 ms loop-lag ticker and a frame/latency recorder.

Token→frame latency: every streamed token is timestamped when the client hands it to the app (the
runtime's event sink, or the baseline's ``on_delta``); the app marks, per panel, how many tokens it
has *handed to a widget* (a flush of the tail view, a final Markdown render, or a ``Log.write``); each
frame (a wrapped ``App._display`` call that is not held by ``batch_update``) records, for every panel
on screen, the latency of the tokens handed over since that panel's previous frame. Headless Textual
skips turning the compositor update into terminal bytes, so the wrapper does that too
(``render_segments``), making a frame cost what it costs in a terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import defaultdict
from typing import Any

from bench.common import cpu_s, percentile, rss_mb


class LagTicker:
    """A 10 ms asyncio ticker; ``lags_ms`` holds how late each tick woke up."""

    def __init__(self, period: float = 0.01) -> None:
        self.period = period
        self.lags_ms: list[float] = []
        self._task: asyncio.Task[None] | None = None

    def start(self) -> None:
        """Start ticking on the running loop."""
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def _run(self) -> None:
        while True:
            due = time.perf_counter() + self.period
            await asyncio.sleep(self.period)
            self.lags_ms.append((time.perf_counter() - due) * 1000)

    def stop(self) -> None:
        """Stop ticking."""
        if self._task is not None:
            self._task.cancel()


class FrameProbe:
    """Records frames and token→frame latency; ``visible(key)`` says whether panel ``key`` is on screen."""

    def __init__(self, app: Any, visible: Any) -> None:
        self.app = app
        self.visible = visible
        self.arrived: dict[str, list[float]] = defaultdict(list)
        """Arrival times (perf_counter s) of each panel's tokens."""
        self.handed: dict[str, int] = defaultdict(int)
        """How many of each panel's tokens were handed to a widget."""
        self.shown: dict[str, int] = defaultdict(int)
        self.latencies_ms: list[float] = []
        self.frame_times: list[float] = []
        self.frame_cost_ms: list[float] = []
        self.bytes = 0
        self.offscreen = 0
        """Tokens handed to a widget while its panel was scrolled off screen (no latency recorded)."""
        self.recording = False
        self.hidden_at: dict[str, float] = {}
        """Per panel, the last frame (perf_counter s) at which it was scrolled off screen."""
        original = app._display

        def display(screen: Any, renderable: Any) -> None:
            started = time.perf_counter()
            original(screen, renderable)
            if renderable is None or app._batch_count:
                return
            with contextlib.suppress(Exception):
                self.bytes += len(renderable.render_segments(app.console))
            now = time.perf_counter()
            if not self.recording:
                return
            self.frame_times.append(now)
            self.frame_cost_ms.append((now - started) * 1000)
            if screen is not app.screen_stack[0]:
                return
            for key in self.arrived:
                if not self.visible(key):
                    self.hidden_at[key] = now
            for key, handed in self.handed.items():
                shown = self.shown[key]
                if handed <= shown:
                    continue
                if self.visible(key):
                    # A token that arrived while its panel was scrolled off screen could not be shown
                    # before the panel came back: its latency counts from then.
                    since = self.hidden_at.get(key, 0.0)
                    arrived = self.arrived[key]
                    self.latencies_ms.extend(
                        (now - max(arrived[i], since)) * 1000 for i in range(shown, handed)
                    )
                else:  # scrolled off screen: not displayable, so not counted
                    self.offscreen += handed - shown
                self.shown[key] = handed

        app._display = display

    def token(self, key: str) -> None:
        """A token of panel ``key`` arrived now."""
        self.arrived[key].append(time.perf_counter())

    def hand(self, key: str, count: int | None = None) -> None:
        """Panel ``key`` handed its first ``count`` tokens (default: all arrived) to a widget."""
        self.handed[key] = len(self.arrived[key]) if count is None else count


class Window:
    """CPU/RSS/time window of a scenario."""

    def start(self) -> None:
        """Open the window now."""
        self.t0, self.cpu0, self.rss0 = time.perf_counter(), cpu_s(), rss_mb()

    def stop(self) -> None:
        """Close the window now."""
        self.t1, self.cpu1, self.rss1 = time.perf_counter(), cpu_s(), rss_mb()

    @property
    def wall(self) -> float:
        """Seconds between start and stop."""
        return self.t1 - self.t0

    @property
    def cpu(self) -> float:
        """CPU seconds between start and stop."""
        return self.cpu1 - self.cpu0


def summarize(
    probe: FrameProbe, lag: LagTicker, window: Window, tokens: int, rss_after: float
) -> dict[str, Any]:
    """Return the per-scenario metrics dict (times in ms, CPU % of one core, MB)."""
    from bench.common import r

    frames = [t for t in probe.frame_times if window.t0 <= t <= window.t1]
    return {
        "tokens": tokens,
        "tok_shown": len(probe.latencies_ms),
        "tok_offscreen": probe.offscreen,
        "tok_to_frame_p50_ms": r(percentile(probe.latencies_ms, 50)),
        "tok_to_frame_p99_ms": r(percentile(probe.latencies_ms, 99)),
        "loop_lag_p99_ms": r(percentile(lag.lags_ms, 99)),
        "loop_lag_max_ms": r(max(lag.lags_ms, default=0.0)),
        "cpu_ms_per_1k_tokens": r(window.cpu * 1000 / max(tokens, 1) * 1000, 0),
        "cpu_pct": r(100 * window.cpu / window.wall),
        "fps": r(len(frames) / window.wall),
        "frame_cost_p99_ms": r(percentile(probe.frame_cost_ms, 99)),
        "rss_growth_mb": r(window.rss1 - window.rss0),
        "rss_growth_after_mb": r(rss_after - window.rss0),
        "wall_s": r(window.wall, 2),
    }
