"""Idle cost (``python -m bench.idle``): 16 open sessions, nothing streaming, for ``--seconds`` (10).

Seeds 16 sessions of a few messages, starts the real app headless as the CLI does (``tune_gc=True``),
waits until every panel shows its history and one more second for the start-up to settle, then
measures over the idle window: the process CPU (user + system) as % of one core, how often each
Textual timer fired (``Timer._tick``, counted per owner and interval) and how many frames were drawn.
Prints ``{"cpu_pct", "frames", "timers": {"Owner@interval": fires}, "seconds", "sessions"}``.

``--read-only N`` (``"read_only": N`` in the output): a child process holds the first N sessions
(one writer per session), so the app shows them read-only and follows them (sessions/follow.py).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections import Counter
from typing import Any

from bench.startup import SIZE, _runtime, seed

SESSIONS = 16

HOLDER = """
import asyncio, sys
from paragents import paths
from paragents.store import Store

async def main() -> None:
    store = await Store.open(paths.db_path())
    for sid in sys.argv[1:]:
        await store.holders.acquire(sid)
    print("held", flush=True)
    await asyncio.to_thread(sys.stdin.readline)
    for sid in sys.argv[1:]:
        await store.holders.release(sid)
    await store.close()

asyncio.run(main())
"""
"""A child process holding the sessions named on its command line until its stdin ends."""


async def _hold(count: int) -> subprocess.Popen[str] | None:
    """Start a child process holding the first ``count`` sessions (None when ``count`` is 0)."""
    if not count:
        return None
    from paragents import paths
    from paragents.store import Store

    async with await Store.open(paths.db_path()) as store:
        ids = [rec.id for rec in (await store.sessions.all(open_only=True))[:count]]
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLDER, *ids], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


async def idle(seconds: float, read_only: int = 0) -> dict[str, Any]:
    from textual.timer import Timer

    from paragents.ui.app import make_app

    await seed(SESSIONS, 6, closed=False, prefix="idle")
    holder = await _hold(read_only)
    runtime = await _runtime("http://127.0.0.1:9/v1")
    app = make_app(runtime, tune_gc=True)
    fires: Counter[str] = Counter()
    counting = False
    original_tick = Timer._tick

    async def tick(self: Timer, *, next_timer: float, count: int) -> None:
        if counting:
            owner = type(self.target).__name__
            fires[f"{owner}@{self._interval:g}s"] += 1
        await original_tick(self, next_timer=next_timer, count=count)

    Timer._tick = tick  # type: ignore[method-assign]
    frames = 0
    original_display = app._display

    def display(screen: Any, renderable: Any) -> None:
        nonlocal frames
        original_display(screen, renderable)
        if counting and renderable is not None:
            frames += 1

    app._display = display  # type: ignore[method-assign]
    result: dict[str, Any] = {}
    async with app.run_test(size=SIZE) as pilot:
        while not (app.ready and len(app.panels) == SESSIONS):
            await pilot.pause(0.05)
        while not all(p.history_shown and not p.transcript.restore_pending for p in app.panels.values()):
            await pilot.pause(0.05)
        await asyncio.sleep(1.0)  # let start-up work (layout, repaints, GC) finish
        counting = True
        cpu0, wall0 = os.times(), time.perf_counter()
        await asyncio.sleep(seconds)
        cpu1, wall1 = os.times(), time.perf_counter()
        counting = False
        used = (cpu1.user - cpu0.user) + (cpu1.system - cpu0.system)
        result = {
            "cpu_pct": round(100 * used / (wall1 - wall0), 2),
            "frames": frames,
            "timers": dict(sorted(fires.items())),
            "seconds": seconds,
            "sessions": SESSIONS,
            "read_only": sum(1 for view in runtime.sessions.values() if view.read_only),
        }
    Timer._tick = original_tick  # type: ignore[method-assign]
    await runtime.shutdown()
    if holder is not None:
        holder.communicate("", timeout=60)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.idle")
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--read-only", type=int, default=0, help="sessions another process holds")
    args = parser.parse_args()
    print(json.dumps(asyncio.run(idle(args.seconds, args.read_only))), flush=True)


if __name__ == "__main__":
    main()
