"""Opening a huge stored reply, in this (fresh) process: ``python -m bench.huge`` prints one JSON object.

A session whose history holds one 390 KB reply (200 code blocks, 50 tables) is persisted, then the real
app starts on it (``make_app`` as the CLI does, headless, 200x50) while a key is typed into the prompt
box every 50 ms (sent the way the terminal driver sends them). Reports key sent → inserted latency
(``key_p50_ms``/``key_p99_ms``, target p99 <= 100 ms), the loop lag, when the placeholder and the
rendered reply showed (seconds after the app was ready) and how many times the reply was rendered
(``renders``: 1 is the target).

Then a second app starts on the same store (the huge session closed: one new session opens) and two
stored closed sessions are opened as ``/sessions`` does (``app.reopen``), each from one panel to two
and closed again: a 2-message one (the baseline, measured in the same run, before and after: the
mean) and one whose stored reply is ~400 KB. For each: ``*_panel_ms``,
request → the first frame showing its panel, and ``*_reply_ms``, → the first frame showing its reply
(the placeholder of a long one). ``open_ratio`` is the 400 KB session's panel time over the 2-message
one's (target: first frame with the panel <= 100 ms whatever the size).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from typing import Any

from bench.common import bench_root, huge_markdown, percentile, r
from bench.probes import LagTicker

SIZE = (200, 50)
KEY_EVERY_S = 0.05
SETTLE_S = 0.5


async def seed(source: str) -> dict[str, str]:
    """Persist one open session (a prompt and the huge reply) and two closed ones to reopen: "small"
    (2 messages) and "big" (a ~400 KB reply); return the closed ones' ids by name."""
    from paragents import paths
    from paragents.store import Store

    project = bench_root() / "project"
    closed: dict[str, str] = {}
    async with await Store.open(paths.db_path()) as store:
        rec = await store.sessions.create(name="huge", project_dir=project, workdir=project, model="m")
        await store.messages.append(rec.id, {"role": "user", "content": "Explain everything."})
        await store.messages.append(rec.id, {"role": "assistant", "content": source})
        for name, reply in (("small", "A short answer."), ("big", huge_markdown(400_000))):
            other = await store.sessions.create(name=name, project_dir=project, workdir=project, model="m")
            await store.messages.append(other.id, {"role": "user", "content": "Explain."})
            await store.messages.append(other.id, {"role": "assistant", "content": reply})
            await store.sessions.update(other.id, is_open=False)
            closed[name] = other.id
    return closed


async def time_reopen(app: Any, sid: str) -> tuple[float, float]:
    """Open the stored session ``sid`` as ``/sessions`` does; return milliseconds from the request to
    the first frame showing its panel, and to the first frame showing its reply."""
    from paragents.ui.widgets.transcript import AssistantBlock

    marks: dict[str, float] = {}
    start = time.perf_counter()

    def framed(key: str) -> None:
        marks.setdefault(key, (time.perf_counter() - start) * 1000)

    app.run_worker(app.reopen(sid), group="bench-reopen")
    asked: set[str] = set()
    while len(marks) < 2:
        panel = app.panels.get(sid)
        if panel is not None and panel.is_mounted and "panel" not in asked:
            asked.add("panel")
            app.screen.call_after_refresh(framed, "panel")  # runs once a frame with it was drawn
        if panel is not None and "reply" not in asked and panel.query(AssistantBlock):
            asked.add("reply")
            app.screen.call_after_refresh(framed, "reply")
        if time.perf_counter() - start > 60:
            raise RuntimeError("the stored session did not open within 60 s")
        await asyncio.sleep(0.001)
    return marks["panel"], marks["reply"]


def _watch_typing(typed: dict[str, float], latencies: list[float]) -> contextlib.ExitStack:
    """Record key sent → text inserted, for the prompt box as an Input or a TextArea."""
    from textual.widgets import Input, TextArea

    stack = contextlib.ExitStack()

    def record(text: str) -> None:
        at = typed.pop(text, None)
        if at is not None:
            latencies.append((time.perf_counter() - at) * 1000)

    original_input = Input.insert_text_at_cursor
    original_area = TextArea._replace_via_keyboard

    def insert(self: Input, text: str) -> None:
        record(text)
        original_input(self, text)

    def replace(self: TextArea, insert: str, *args: Any) -> Any:
        record(insert)
        return original_area(self, insert, *args)

    Input.insert_text_at_cursor = insert  # type: ignore[method-assign]
    TextArea._replace_via_keyboard = replace  # type: ignore[method-assign,assignment]
    stack.callback(setattr, Input, "insert_text_at_cursor", original_input)
    stack.callback(setattr, TextArea, "_replace_via_keyboard", original_area)
    return stack


async def run(source: str) -> dict[str, Any]:
    from textual import events

    from paragents.sessions.runtime import Runtime
    from paragents.ui.app import make_app
    from paragents.ui.widgets import markdown_reply
    from paragents.ui.widgets.markdown_reply import MarkdownReply

    renders: list[int] = []
    iter_rows = markdown_reply.iter_rows

    def counted(text: str, width: int, *args: Any) -> Any:
        if len(text) == len(source):
            renders.append(width)
        return iter_rows(text, width, *args)

    markdown_reply.iter_rows = counted  # type: ignore[assignment]
    overrides = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "max_retries": 0}
    runtime = await Runtime.create(bench_root() / "project", cli_overrides=overrides)
    app = make_app(runtime, tune_gc=True)  # as the CLI does
    typed: dict[str, float] = {}
    latencies: list[float] = []
    lag = LagTicker()
    marks: dict[str, float] = {}
    with _watch_typing(typed, latencies):
        async with app.run_test(size=SIZE):
            while not app.ready:
                await asyncio.sleep(0.01)
            ready = time.perf_counter()
            lag.start()
            count = 0
            settle_until = None
            while settle_until is None or time.perf_counter() < settle_until:
                replies = [w for w in app.query(MarkdownReply) if len(w.source) == len(source)]
                if replies and "placeholder_s" not in marks and replies[0].pending:
                    marks["placeholder_s"] = time.perf_counter() - ready
                if replies and not replies[0].pending and settle_until is None:
                    marks["rendered_s"] = time.perf_counter() - ready
                    settle_until = time.perf_counter() + SETTLE_S
                if time.perf_counter() - ready > 120:
                    raise RuntimeError("the huge reply was not rendered within 120 s")
                count += 1
                letter = chr(ord("a") + count % 26)
                key = events.Key(letter, letter)
                key.set_sender(app)
                typed[letter] = time.perf_counter()
                assert app._driver is not None
                app._driver.send_message(key)
                await asyncio.sleep(KEY_EVERY_S)
            lag.stop()
    await runtime.shutdown()
    return {
        "reply_kb": r(len(source) / 1000),
        "key_p50_ms": r(percentile(latencies, 50)),
        "key_p99_ms": r(percentile(latencies, 99)),
        "key_max_ms": r(max(latencies, default=0.0)),
        "key_presses": len(latencies),
        "loop_lag_p99_ms": r(percentile(lag.lags_ms, 99)),
        "loop_lag_max_ms": r(max(lag.lags_ms, default=0.0)),
        "placeholder_s": r(marks.get("placeholder_s"), 3),
        "rendered_s": r(marks.get("rendered_s"), 2),
        "renders": len(renders),
    }


async def run_reopen(closed: dict[str, str]) -> dict[str, Any]:
    """Start the app again (the huge session closed) and open the two stored sessions of ``closed``
    as ``/sessions`` does, the 2-message one first; report both times and their ratio."""
    from paragents import paths
    from paragents.sessions.runtime import Runtime
    from paragents.store import Store
    from paragents.ui.app import make_app

    async with await Store.open(paths.db_path()) as store:
        for rec in await store.sessions.all(project_dir=bench_root() / "project"):
            await store.sessions.update(rec.id, is_open=False)
    overrides = {"base_url": "http://127.0.0.1:9/v1", "model": "m", "max_retries": 0}
    runtime = await Runtime.create(bench_root() / "project", cli_overrides=overrides)
    app = make_app(runtime, tune_gc=True)
    async with app.run_test(size=SIZE):
        while not app.ready or not app.panels:
            await asyncio.sleep(0.01)
        times: dict[str, list[tuple[float, float]]] = {"small": [], "big": []}
        for name in ("small", "big", "small"):  # each from one panel to two, then closed again
            await asyncio.sleep(SETTLE_S)
            times[name].append(await time_reopen(app, closed[name]))
            await asyncio.sleep(SETTLE_S)
            await app.close_session(closed[name])
    await runtime.shutdown()
    small_panel = sum(t[0] for t in times["small"]) / 2
    small_reply = sum(t[1] for t in times["small"]) / 2
    big_panel, big_reply = times["big"][0]
    return {
        "small_panel_ms": r(small_panel),
        "small_reply_ms": r(small_reply),
        "big_panel_ms": r(big_panel),
        "big_reply_ms": r(big_reply),
        "open_ratio": r(big_panel / small_panel if small_panel else None, 2),
    }


def main() -> None:
    source = huge_markdown()
    closed = asyncio.run(seed(source))
    report = asyncio.run(run(source))
    report.update(asyncio.run(run_reopen(closed)))
    print(json.dumps(report), flush=True)


if __name__ == "__main__":
    main()
