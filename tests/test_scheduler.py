"""Scheduler: per-session FIFO queues under a global cap, edit/remove of queued prompts, cancel."""

from __future__ import annotations

import asyncio

import pytest

from paragents.scheduler import QueuedPrompt, Scheduler


class Gated:
    """A fake turn runner whose turns end only when the test releases them."""

    def __init__(self) -> None:
        self.started: list[tuple[str, str]] = []
        self.gates: dict[str, asyncio.Event] = {}
        self.changed: list[str] = []
        self.started_event = asyncio.Event()
        self.cancelled: list[str] = []

    async def run(self, sid: str, prompt: QueuedPrompt) -> None:
        self.started.append((sid, prompt.text))
        gate = self.gates.setdefault(prompt.text, asyncio.Event())
        self.started_event.set()
        try:
            await gate.wait()
        except asyncio.CancelledError:
            self.cancelled.append(prompt.text)
            raise

    def release(self, text: str) -> None:
        self.gates.setdefault(text, asyncio.Event()).set()


async def wait_started(g: Gated, n: int) -> None:
    while len(g.started) < n:
        g.started_event.clear()
        await asyncio.wait_for(g.started_event.wait(), 2)


async def test_global_cap_and_fifo_across_sessions() -> None:
    g = Gated()
    s = Scheduler(2, g.run, g.changed.append)
    s.submit("a", "a1")
    s.submit("b", "b1")
    s.submit("c", "c1")
    s.submit("a", "a2")
    await wait_started(g, 2)
    assert g.started == [("a", "a1"), ("b", "b1")]
    assert s.running_count == 2
    assert [p.text for p in s.queue("c")] == ["c1"]
    assert s.waiting_sessions() == ["c"]  # a has a2 queued but is running
    g.release("b1")
    await wait_started(g, 3)
    assert g.started[2] == ("c", "c1")
    g.release("a1")
    await wait_started(g, 4)
    assert g.started[3] == ("a", "a2")
    for t in ("c1", "a2"):
        g.release(t)
    await asyncio.wait_for(s.wait_idle(), 2)
    assert s.running_count == 0


async def test_queued_prompt_can_be_edited_and_removed_until_it_starts() -> None:
    g = Gated()
    s = Scheduler(1, g.run, g.changed.append)
    s.submit("a", "first")
    p2 = s.submit("a", "second")
    p3 = s.submit("a", "third")
    await wait_started(g, 1)
    assert s.edit("a", p2.id, "second, edited")
    assert s.remove("a", p3.id)
    g.release("first")
    await wait_started(g, 2)
    assert g.started[1] == ("a", "second, edited")
    assert not s.edit("a", p2.id, "too late")
    assert not s.remove("a", p2.id)
    g.release("second, edited")
    await asyncio.wait_for(s.wait_idle(), 2)
    assert [t for _, t in g.started] == ["first", "second, edited"]


async def test_cancel_stops_the_running_turn_and_the_next_one_starts() -> None:
    g = Gated()
    s = Scheduler(1, g.run, g.changed.append)
    s.submit("a", "long")
    s.submit("a", "next")
    await wait_started(g, 1)
    assert s.cancel("a")
    await wait_started(g, 2)
    assert g.cancelled == ["long"]
    assert g.started[1] == ("a", "next")
    assert not s.cancel("b")
    g.release("next")
    await asyncio.wait_for(s.wait_idle(), 2)


async def test_drop_clears_queue_and_cancels() -> None:
    g = Gated()
    s = Scheduler(4, g.run, g.changed.append)
    s.submit("a", "x")
    s.submit("a", "y")
    await wait_started(g, 1)
    await s.drop("a")
    assert g.cancelled == ["x"]
    assert s.queue("a") == []
    await asyncio.wait_for(s.wait_idle(), 2)
    assert [t for _, t in g.started] == ["x"]


def test_cap_must_be_positive() -> None:
    with pytest.raises(ValueError):
        Scheduler(0, Gated().run, lambda _sid: None)
