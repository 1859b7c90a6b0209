"""A private asyncio loop in a daemon thread: prediction rounds run there, off the UI's loop.

The git processes of a round are spawned, awaited and parsed on this loop, so neither a busy UI loop
delays a round nor a round's process spawning and parsing delays the UI or a turn. Callers on their
own loop ``await thread.run(coro)``; cancelling that await cancels the coroutine on this loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

T = TypeVar("T")


class LoopThread:
    """One event loop running forever in a daemon thread named ``name``."""

    def __init__(self, name: str) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self.loop.run_forever, name=name, daemon=True)
        self._thread.start()

    async def run(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run ``coro`` on the thread's loop and return its result to the caller's loop."""
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(coro, self.loop))

    def close(self) -> None:
        """Stop the loop and the thread (pending work is dropped)."""
        if self.loop.is_closed():
            return

        def stop() -> None:
            for task in asyncio.all_tasks(self.loop):
                task.cancel()
            self.loop.stop()

        self.loop.call_soon_threadsafe(stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self.loop.close()
