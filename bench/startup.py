"""Startup and reopen, each in a fresh process (``python -m bench.startup seed|start|reopen ...``).

- ``seed --sessions S --messages M [--closed]``: write S sessions of M messages each (alternating user
  prompts and Markdown replies) into the default store of this environment (see common.isolated_env).
- ``start --t0 EPOCH``: build the Runtime and the real app as the CLI does, run it headless and print
  ``{"first_frame_s", "ready_frame_s", "history_frame_s", "all_history_s"}``: seconds from ``EPOCH``
  (the parent's clock just before it spawned this process) to the first frame, to the first frame
  showing every persisted session's panel, to the first frame where the panels on screen show their
  restored history, and to the frame where every panel has it.
- ``reopen --name NAME``: start the app, then reopen the closed session NAME and print the seconds
  from the reopen call to the first frame showing its panel, and the process RSS before/after.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import bench_root, corpus, rss_mb

SIZE = (200, 50)


async def seed(sessions: int, messages: int, closed: bool, prefix: str) -> None:
    """Write the sessions straight through the Store API (one transaction per message)."""
    from paragents import paths
    from paragents.store import Store

    project = bench_root() / "project"
    async with await Store.open(paths.db_path()) as store:
        for s in range(sessions):
            rec = await store.sessions.create(
                name=f"{prefix}{s + 1}", project_dir=project, workdir=project, model="m"
            )
            for i in range(messages // 2):
                await store.messages.append(
                    rec.id, {"role": "user", "content": f"Question {i}: fix test {i}?"}
                )
                await store.messages.append(rec.id, {"role": "assistant", "content": corpus(400, i)})
            if closed:
                await store.sessions.update(rec.id, is_open=False)


async def _runtime(url: str) -> Any:
    from paragents.sessions.runtime import Runtime

    overrides = {"base_url": url, "model": "m", "max_retries": 0}
    return await Runtime.create(bench_root() / "project", cli_overrides=overrides)


async def start(t0: float, url: str) -> dict[str, Any]:
    """Time the CLI's path: imports, Runtime.create, make_app, first frame."""
    from paragents.ui.app import make_app

    runtime = await _runtime(url)
    expected = len(await runtime.store.sessions.all(runtime.project_dir, open_only=True))
    app = make_app(runtime, tune_gc=True)  # as the CLI does
    marks: dict[str, float] = {}
    original = app._display

    def filled(panel: Any) -> bool:  # its stored history is loaded and mounted
        return bool(panel.history_shown) and not panel.transcript.restore_pending

    def display(screen: Any, renderable: Any) -> None:
        original(screen, renderable)
        if renderable is None or app._batch_count:
            return
        now = time.time()
        if "first_frame_s" not in marks:
            marks["first_frame_s"] = now - t0
            app.set_interval(0.01, poll)
        if not (app.ready and len(app.panels) >= max(expected, 1)):
            return
        marks.setdefault("ready_frame_s", now - t0)
        panels = list(app.panels.values())
        visible = [p for p in panels if p in screen._compositor.visible_widgets]
        if all(filled(p) for p in visible):
            marks.setdefault("history_frame_s", now - t0)

    def poll() -> None:  # panels off screen fill without a frame: poll for the last one
        if "history_frame_s" in marks and all(filled(p) for p in app.panels.values()):
            marks.setdefault("all_history_s", time.time() - t0)
            app.exit()

    app._display = display  # type: ignore[method-assign]
    await app.run_async(headless=True, size=SIZE)
    await runtime.shutdown()
    return marks


async def reopen(name: str, url: str) -> dict[str, Any]:
    """Time reopening a persisted (closed) session to the first frame showing its panel."""
    from paragents.ui.app import make_app

    runtime = await _runtime(url)
    rec = await runtime.lifecycle.find_session(name)
    app = make_app(runtime, tune_gc=True)  # as the CLI does
    shown = asyncio.Event()
    target: list[Any] = []
    original = app._display

    def display(screen: Any, renderable: Any) -> None:
        original(screen, renderable)
        if renderable is None or app._batch_count or not target:
            return
        panel = app.panels.get(target[0])
        if panel is not None and panel in screen._compositor.visible_widgets:
            shown.set()

    app._display = display  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        while not app.ready:
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        gc.collect()
        rss0 = rss_mb()
        started = time.perf_counter()
        target.append(rec.id)
        await app.reopen(rec.id)
        await asyncio.wait_for(shown.wait(), 30)
        elapsed = time.perf_counter() - started
        await pilot.pause(1.0)
        gc.collect()
        rss1 = rss_mb()
        mounted = app.panels[rec.id].transcript.mounted_count
    await runtime.shutdown()
    return {"reopen_s": elapsed, "rss_before_mb": rss0, "rss_after_mb": rss1, "mounted": mounted}


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.startup")
    parser.add_argument("what", choices=("seed", "start", "reopen"))
    parser.add_argument("--sessions", type=int, default=0)
    parser.add_argument("--messages", type=int, default=0)
    parser.add_argument("--closed", action="store_true")
    parser.add_argument("--prefix", default="s")
    parser.add_argument("--name", default="")
    parser.add_argument("--t0", type=float, default=0.0)
    parser.add_argument("--url", default="http://127.0.0.1:9/v1")
    args = parser.parse_args()
    if args.what == "seed":
        asyncio.run(seed(args.sessions, args.messages, args.closed, args.prefix))
        result: dict[str, Any] = {}
    elif args.what == "start":
        result = asyncio.run(start(args.t0, args.url))
    else:
        result = asyncio.run(reopen(args.name, args.url))
    print(json.dumps(result), flush=True)
    sys.stdout.flush()


if __name__ == "__main__":
    _ = Path
    main()
