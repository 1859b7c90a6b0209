"""One streaming scenario in this (fresh) process: ``python -m bench.stream --mode app|log --n N
--rate R --tokens K --url URL [--keys]`` prints one JSON object of metrics (see bench/probes.py).

``app`` runs the real paragents app (``make_app`` + ``App.run_test(size=(200, 50))``) with a real
Runtime against the benchmark's replay server; ``log`` is the baseline: a bare Textual app with one
``Log`` widget per panel, fed by the same ChatClient and stream (one ``write`` per token).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import time
from collections import defaultdict
from typing import Any

from bench.common import bench_root, percentile, r, rss_mb
from bench.probes import FrameProbe, LagTicker, Window, summarize

SIZE = (200, 50)
SETTLE_S = 0.5
"""Seconds the window stays open after the last reply ended (final frames, Markdown render)."""


def _visible(app: Any, widget: Any) -> bool:
    try:
        return widget in app.screen._compositor.visible_widgets
    except Exception:
        return False


FOCUS_EVERY = 10
"""In the key scenario every this many-th key is f6 (focus the next panel); the others type a letter."""


async def _press_keys(app: Any, stop: asyncio.Event, typing_ms: list[float], focus_ms: list[float]) -> None:
    """Send a key every 0.1 s the way a terminal does (the driver posts a Key event; nothing waits for
    the app to be idle): a letter typed into the focused prompt box, and every :data:`FOCUS_EVERY`-th
    key f6 (focus the next panel, which scrolls the grid). ``typing_ms`` gets key sent → the prompt
    editor inserting the letter; ``focus_ms`` gets key sent → the focus action starting."""
    from textual import events

    from paragents.ui.widgets.prompt_area import PromptArea

    sent: dict[str, list[float]] = {"focus": []}
    typed: dict[str, float] = {}
    """Letter → when it was sent (letters cycle a-z, so each one identifies its key press)."""
    original_focus = app.action_focus_offset
    original_insert = PromptArea._replace_via_keyboard

    def focus(offset: int) -> None:
        if sent["focus"]:
            focus_ms.append((time.perf_counter() - sent["focus"].pop(0)) * 1000)
        original_focus(offset)

    def insert(self: PromptArea, text: str, start: Any, end: Any) -> Any:
        at = typed.pop(text, None)
        if at is not None:
            typing_ms.append((time.perf_counter() - at) * 1000)
        return original_insert(self, text, start, end)

    app.action_focus_offset = focus
    PromptArea._replace_via_keyboard = insert  # type: ignore[method-assign,assignment]
    count = 0
    try:
        while not stop.is_set():
            count += 1
            if count % FOCUS_EVERY == 0:
                key = events.Key("f6", None)
                sent["focus"].append(time.perf_counter())
            else:
                letter = chr(ord("a") + count % 26)
                key = events.Key(letter, letter)
                typed[letter] = time.perf_counter()
            key.set_sender(app)
            app._driver.send_message(key)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), 0.1)
    finally:
        PromptArea._replace_via_keyboard = original_insert  # type: ignore[method-assign]


def markdown_rendered(block: Any) -> bool:
    """True when a finished reply (an ``AssistantBlock``) shows the corpus as Markdown: the code fence
    highlighted (its ``def`` line has several coloured spans) and the table laid out (header cells on
    one row without pipes, a rule below it)."""
    from paragents.ui.widgets.markdown_reply import MarkdownReply

    replies = list(block.query(MarkdownReply))
    if not replies:
        return False
    text = replies[-1].rendered(100)
    lines = text.split("\n")
    code = next((line for line in lines if "def parse_args" in line.plain), None)
    colours = {str(span.style) for span in code.spans} if code is not None else set()
    header = next((i for i, line in enumerate(lines) if "risk" in line.plain), None)
    table = (
        header is not None
        and "|" not in lines[header].plain
        and header + 1 < len(lines)
        and set(lines[header + 1].plain.strip()) <= set("─━-")
    )
    return len(colours) >= 3 and table


async def run_app(args: argparse.Namespace) -> dict[str, Any]:
    """The real app: N sessions, one prompt each, all streaming at once."""
    from paragents.events import MessageAdded, TextDelta, TurnFinished
    from paragents.sessions.runtime import Runtime
    from paragents.ui.app import make_app
    from paragents.ui.widgets.session_panel import SessionPanel
    from paragents.ui.widgets.transcript import AssistantBlock

    root = bench_root()
    overrides = {"base_url": args.url, "model": "m", "max_retries": 0, "max_parallel_turns": max(args.n, 4)}
    runtime = await Runtime.create(root / "project", cli_overrides=overrides, db_path=root / "state" / "b.db")
    sids = [(await runtime.lifecycle.new_session(f"p{i + 1}")).id for i in range(args.n)]
    app = make_app(runtime, tune_gc=True)  # as the CLI does
    probe = FrameProbe(app, lambda sid: sid in app.panels and _visible(app, app.panels[sid]))
    received: dict[str, list[str]] = defaultdict(list)
    applied: dict[str, int] = defaultdict(int)
    original_sink = app._sink

    def sink(event: Any) -> None:
        if isinstance(event, TextDelta):
            probe.token(event.session_id)
            received[event.session_id].append(event.text)
        original_sink(event)

    app._sink = sink  # type: ignore[method-assign]
    original_apply, original_flush = SessionPanel.apply, SessionPanel.flush

    async def apply(self: SessionPanel, event: Any) -> None:
        await original_apply(self, event)
        if isinstance(event, TextDelta):
            applied[self.session_id] += event.pieces  # the app joins queued deltas
        elif isinstance(event, MessageAdded | TurnFinished):
            probe.hand(self.session_id, applied[self.session_id])

    def flush(self: SessionPanel) -> bool:
        count = applied[self.session_id]
        done = original_flush(self)
        if done:
            probe.hand(self.session_id, count)
        return done

    SessionPanel.apply = apply  # type: ignore[method-assign]
    SessionPanel.flush = flush  # type: ignore[method-assign]
    lag, window = LagTicker(), Window()
    typing_ms: list[float] = []
    focus_ms: list[float] = []
    async with app.run_test(size=SIZE) as pilot:
        while not (app.ready and len(app.panels) == args.n):
            await pilot.pause(0.05)
        await pilot.pause(0.3)
        lag.start()
        probe.recording = True
        window.start()
        for sid in sids:
            runtime.submit(sid, "go")
        stop = asyncio.Event()
        keys = None
        if args.keys:
            # Keys start once every session streams (the 16 turns all start in the same instant here).
            while len(received) < args.n:
                await asyncio.sleep(0.01)
            keys = asyncio.create_task(_press_keys(app, stop, typing_ms, focus_ms))
        await asyncio.sleep(0.2)
        await asyncio.wait_for(runtime.wait_idle(), timeout=args.tokens / args.rate * 4 + 30)
        stop.set()
        if keys is not None:
            await keys
        await asyncio.sleep(SETTLE_S)
        window.stop()
        lag.stop()
        # Checks: every token reached the transcript; finished replies are rendered Markdown.
        dropped = 0
        markdown_ok = True
        for sid in sids:
            text = "".join(received[sid])
            dropped += max(0, args.tokens - len(received[sid]))
            blocks = list(app.panels[sid].query(AssistantBlock))
            final = blocks[-1].entry.content if blocks else ""
            dropped += 0 if final == text else 1
            markdown_ok &= (bool(blocks) and markdown_rendered(blocks[-1])) or args.tokens < 300
        gc.collect()
        await asyncio.sleep(1.0)
        rss_after = rss_mb()
    total = sum(len(v) for v in received.values())
    result = summarize(probe, lag, window, total, rss_after)
    result.update(tokens_dropped=dropped, markdown_ok=markdown_ok)
    if args.keys:
        result.update(
            key_p50_ms=r(percentile(typing_ms, 50)),
            key_p99_ms=r(percentile(typing_ms, 99)),
            key_presses=len(typing_ms),
            focus_key_p99_ms=r(percentile(focus_ms, 99)),
            focus_presses=len(focus_ms),
        )
    await runtime.shutdown()
    return result


async def run_log(args: argparse.Namespace) -> dict[str, Any]:
    """The baseline: a bare Textual app, one ``Log`` per panel, the same client and stream."""
    from textual.app import App, ComposeResult
    from textual.containers import Grid
    from textual.widgets import Log

    from paragents.llm import ChatClient
    from paragents.llm.stream import StreamTextDelta

    class Baseline(App[None]):
        CSS = """
        Grid { grid-size: 2; grid-rows: 1fr; }
        Grid.-many { grid-rows: 24; overflow-y: auto; }
        Grid.-one { grid-size: 1; }
        Log { border: round $panel-lighten-2; }
        """

        def compose(self) -> ComposeResult:
            cls = "-one" if args.n == 1 else "-many" if args.n > 4 else ""
            with Grid(classes=cls):
                for i in range(args.n):
                    yield Log(id=f"p{i}")

    app = Baseline()
    probe = FrameProbe(app, lambda key: _visible(app, app.query_one(f"#{key}")))
    client = ChatClient(args.url, None, max_retries=0)
    lag, window = LagTicker(), Window()
    counts: dict[str, int] = defaultdict(int)

    async def stream(key: str) -> None:
        log = app.query_one(f"#{key}", Log)

        def on_delta(delta: Any) -> None:
            if isinstance(delta, StreamTextDelta):
                probe.token(key)
                counts[key] += 1
                log.write(delta.text)
                probe.hand(key)

        await client.stream_chat(
            model="m", messages=[{"role": "user", "content": "go"}], tools=None, on_delta=on_delta
        )

    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause(0.3)
        lag.start()
        probe.recording = True
        window.start()
        await asyncio.gather(*(stream(f"p{i}") for i in range(args.n)))
        await asyncio.sleep(SETTLE_S)
        window.stop()
        lag.stop()
        gc.collect()
        await asyncio.sleep(1.0)
        rss_after = rss_mb()
    await client.aclose()
    total = sum(counts.values())
    result = summarize(probe, lag, window, total, rss_after)
    result["tokens_dropped"] = sum(max(0, args.tokens - counts[f"p{i}"]) for i in range(args.n))
    return result


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.stream")
    parser.add_argument("--mode", choices=("app", "log"), required=True)
    parser.add_argument("--n", type=int, required=True)
    parser.add_argument("--rate", type=float, required=True)
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--url", required=True)
    parser.add_argument(
        "--keys", action="store_true", help="type into the prompt box (and f6 now and then), timing each key"
    )
    args = parser.parse_args()
    run = run_app if args.mode == "app" else run_log
    print(json.dumps(asyncio.run(run(args))), flush=True)


if __name__ == "__main__":
    main()
