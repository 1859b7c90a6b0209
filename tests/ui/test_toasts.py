"""Toasts stay readable: many sessions taken over after a crash are one digest, an error naming a
huge name is cut, ctrl+c says how to quit in plain words (no raw markup)."""

from __future__ import annotations

import subprocess
import sys
from typing import Any

from paragents.ui.app import TOAST_LINE_CHARS, TOAST_LINES, make_app, toast_text
from tests.ui.conftest import SIZE, wait_until
from tests.ui.helpers import started


def messages(app: Any) -> list[str]:
    return [n.message for n in app._notifications]


async def test_sessions_taken_over_from_one_dead_process_are_one_toast(make_runtime: Any) -> None:
    runtime = await make_runtime()
    names = [f"s{i}" for i in range(9)]
    views = [await runtime.new_session(name) for name in names]
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()  # reaped: its pid names no process
    for view in views:
        await runtime.store.holders.acquire(view.id, take_over=True, pid=dead.pid)
    runtime.holds.clear()  # this process forgets them, as a crashed one would
    await runtime.shutdown()

    app = make_app(await make_runtime())
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await started(pilot, app, len(names))
        await wait_until(pilot, lambda: any("taken over" in m for m in messages(app)), "the digest")
        taken = [m for m in messages(app) if "taken over" in m]
        assert len(taken) == 1, taken
        assert taken[0].startswith("9 sessions 's0', 's1', 's2', 's3', 's4' and 4 more: taken over from")
        assert f"pid {dead.pid}" in taken[0] and "its process is gone" in taken[0]
        await app.action_quit()


def test_a_huge_name_is_cut_in_an_error_toast_and_long_ones_are_counted() -> None:
    name = "n" * 10_000
    text = toast_text(f"session {name!r} is held elsewhere: use /takeover")
    assert len(text) <= TOAST_LINE_CHARS + 1 and text.endswith("use /takeover")
    many = toast_text("\n".join(f"line {i}" for i in range(40)))
    assert many.count("\n") == TOAST_LINES - 1 and many.endswith("… 27 more lines")


async def test_ctrl_c_says_how_to_quit_without_raw_markup(make_runtime: Any) -> None:
    app = make_app(await make_runtime())
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await started(pilot, app)
        await pilot.press("ctrl+c")
        await wait_until(pilot, lambda: any("quit" in m for m in messages(app)), "the hint")
        (hint,) = [m for m in messages(app) if "quit" in m]
        assert hint == "Press ctrl+q to quit the app." and "[b]" not in hint
        await app.action_quit()


async def test_many_notes_at_the_start_are_one_toast(tmp_path: Any) -> None:
    from tests.ui.fake_runtime import FakeRuntime, make_view

    runtime = FakeRuntime([make_view("s1", "api")], tmp_path)
    runtime.notes.extend(
        f"session 's{i}': the turn started 17:20 was interrupted when pid 9 stopped" for i in range(8)
    )
    app = make_app(runtime)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_until(pilot, lambda: bool(messages(app)), "the digest")
        (digest,) = messages(app)
        assert digest.count("interrupted") == 8 and digest.count("\n") == 7
        assert [n.title for n in app._notifications] == ["paragents: 8 notes from the start"]
