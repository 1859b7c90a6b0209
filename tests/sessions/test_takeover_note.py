"""``/takeover`` says what it did, never an older note of the start (fresh-user finding: taking a
session back printed "2 sessions 's8', 's9': taken over from pid … (its process is gone)", a note of
the previous start, because it showed the last of the runtime's notes whatever made it)."""

from __future__ import annotations

import os
import subprocess
import sys

from paragents import events as ev
from paragents.store import Store
from tests.patience import HANG_GUARD_S
from tests.runtime_env import Env


def last_notice(env: Env, sid: str) -> str:
    return str(env.sink.of(ev.Notice, sid)[-1].text)


async def test_takeover_shows_its_own_note_not_one_left_from_the_start(env: Env) -> None:
    rt = await env.runtime()
    crashed = await rt.lifecycle.new_session("s8")
    mine = await rt.lifecycle.new_session("a")
    await rt.shutdown()
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(timeout=HANG_GUARD_S)
    async with await Store.open(env.db) as store:  # s8 was held by a process that died
        await store.holders.acquire(crashed.id, take_over=True, pid=gone.pid)
    tui = await env.runtime()
    views = {v.name: v for v in await tui.opening.restore()}
    assert any("'s8': taken over from" in n and "its process is gone" in n for n in tui.notes)
    view = views["a"]
    assert view.id == mine.id and view.read_only is None

    # `paragents run --session a --take-over` in another terminal takes "a", then ends
    other = os.getppid()  # alive, and not this process
    await tui.store.holders.acquire(view.id, take_over=True, pid=other)
    assert await tui.holding.check_holds() == [view.id] and view.read_only
    await tui.store.holders.release(view.id, pid=other)
    await tui.lifecycle.take_over(view.id)
    assert view.read_only is None
    assert last_notice(env, view.id) == "session 'a': taken over (no other process held it any more)"

    # taken from a live holder: the note names that holder
    await tui.store.holders.acquire(view.id, take_over=True, pid=other)
    assert await tui.holding.check_holds() == [view.id]
    await tui.lifecycle.take_over(view.id)
    said = last_notice(env, view.id)
    assert said.startswith(f"session 'a': taken over from pid {other} ") and said.endswith(
        "(at your request)"
    )
    await tui.shutdown()


async def test_taking_over_a_session_this_process_holds_says_so(env: Env) -> None:
    """Fresh-user finding: `/takeover` of a session this window already held printed nothing."""
    rt = await env.runtime()
    try:
        view = await rt.lifecycle.new_session("mine")
        before = len(env.sink.of(ev.Notice, view.id))
        await rt.lifecycle.take_over(view.id)
        assert view.read_only is None
        assert len(env.sink.of(ev.Notice, view.id)) == before + 1
        assert (
            last_notice(env, view.id) == "session 'mine' is already held by this window: nothing to take over"
        )
    finally:
        await rt.shutdown()


async def test_takeover_loads_the_usage_and_spend_the_holder_left(env: Env) -> None:
    """Fresh-user finding: after /takeover the title said ``0 tok ∙ ctx 0%`` and f3 spend ``-``
    though the store had what the holder's turns used; a reopen read it, /takeover did not."""
    from paragents.models import Usage

    rt = await env.runtime()
    view = await rt.lifecycle.new_session("held")
    other = os.getppid()  # alive, and not this process: `paragents run --session held`
    await rt.store.holders.acquire(view.id, take_over=True, pid=other)
    assert await rt.holding.check_holds() == [view.id] and view.read_only
    turn = await rt.store.turns.start(view.id, "go", pid=other)  # the holder's turn spends
    await rt.store.turns.add_usage(view.id, turn, "m", Usage(1200, 300, 1500), cost_usd=0.25)
    assert view.usage.total_tokens == 0
    await rt.lifecycle.take_over(view.id)
    assert view.read_only is None
    assert view.usage.total_tokens == 1500 and view.context_tokens == 1200
    (last,) = env.sink.of(ev.UsageUpdated, view.id)[-1:]
    assert last.spend is not None and last.spend.tokens == 1500  # what f3 and the title read
    await rt.shutdown()
