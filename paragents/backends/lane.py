"""One lane on a remote backend as the user's paragents process sees it: :class:`RemoteLane`.

It holds the lane's backend, the mirror of its files in the worktree here (:mod:`paragents.backends.
mirror`) and whether its place answers:

- ``ready``: calls go through;
- ``unreachable``: a call met a lost connection, a stopped engine or a cluster that does not answer.
  Every call fails at once with that reason (no waiting for connection timeouts), the sessions in the
  lane pause before their next model request (:meth:`wait_ready`), and a probe asks the place's
  health with growing intervals. When it answers again, a stopped container/Pod is started with its
  files and a deleted or evicted one is recreated from the last fetched snapshot (with a note saying
  so), then the lane is ``ready`` again and the paused sessions resume;
- a call that finds its container/Pod gone (``LaneGone``) recreates it at once the same way and is
  tried once more;
- ``discarded`` (:meth:`RemoteLane.discard`) or closed: its place is never recovered or recreated
  again. The flag is set and read under the lock recoveries hold, so a call still in flight (a
  prediction round's sync that met the deleted Pod) cannot bring the place back after its removal,
  and a recovery already running ends before the removal starts.

Nothing fetched is lost on the way: snapshots live in the user's repository. Core code: no Textual;
everything runs on the loop the backend's client was made on."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Literal, TypeVar

from paragents.backends.base import BackendError, BackendUnreachable, ExecutionBackend, LaneGone, Snapshot
from paragents.backends.mirror import Mirror, SyncResult

T = TypeVar("T")
LaneState = Literal["ready", "unreachable"]
Listener = Callable[["RemoteLane", LaneState, "str | None"], None]
"""Called with (lane, its new state, a note for people or None) when the state changes or a
recovery happened."""

PROBE_FIRST = 1.0
"""Seconds before the first health probe of an unreachable lane (then doubled up to PROBE_MAX)."""
PROBE_MAX = 15.0


class RemoteLane:
    """See the module docstring."""

    def __init__(
        self,
        backend: ExecutionBackend,
        worktree: Path,
        *,
        on_change: Listener | None = None,
        probe_first: float = PROBE_FIRST,
        probe_max: float = PROBE_MAX,
    ) -> None:
        self.backend = backend
        self.mirror = Mirror(backend, worktree)
        self.on_change = on_change
        self.state: LaneState = "ready"
        self.detail = ""
        """Why the lane is unreachable (the backend's sentence), "" while ready."""
        self.last_note: str | None = None
        self.probe_first = probe_first
        self.probe_max = probe_max
        self._ready = asyncio.Event()
        self._ready.set()
        self._probe: asyncio.Task[None] | None = None
        self._recovering = asyncio.Lock()
        self._recovery: asyncio.Future[str | None] | None = None
        self.ended: str | None = None
        """Why the lane's place must never be made again ("discarded", "closed"), None while in use."""

    @property
    def name(self) -> str:
        return self.backend.spec.name

    @property
    def where(self) -> str:
        return self.backend.where

    @property
    def ready(self) -> bool:
        return self.state == "ready"

    async def wait_ready(self) -> None:
        """Return once the lane answers (at once while it does)."""
        await self._ready.wait()

    async def call(self, op: Callable[[], Awaitable[T]]) -> T:
        """Run ``op`` (a backend call) while the lane answers: at once BackendUnreachable while it does
        not; a lost connection makes it unreachable; a gone container/Pod is recreated, then ``op``
        runs once more."""
        if self.state != "ready":
            raise BackendUnreachable(self.detail)
        try:
            return await op()
        except LaneGone:
            await self._recover()
            try:
                return await op()
            except BackendUnreachable as exc:
                self.lost(str(exc))
                raise
        except BackendUnreachable as exc:
            self.lost(str(exc))
            raise

    async def sync(self, *, fast: bool = False) -> SyncResult:
        """Bring the lane's files and this machine's worktree in step (:meth:`Mirror.sync`; ``fast``
        in prediction rounds)."""
        done = await self.call(lambda: self.mirror.sync(fast=fast))
        if done.note:
            self._tell("ready", done.note)
        return done

    def lost(self, why: str) -> None:
        """Mark the lane unreachable (once) and start probing it."""
        if self.state == "unreachable":
            return
        self.state = "unreachable"
        self.detail = why
        self._ready.clear()
        self._tell("unreachable", why)
        self._start_probing()

    def _start_probing(self) -> None:
        self._probe = asyncio.get_running_loop().create_task(self._probing(), name=f"probe lane {self.name}")

    async def _probing(self) -> None:
        delay = self.probe_first
        while self.ended is None:
            await asyncio.sleep(delay)
            delay = min(delay * 2, self.probe_max)
            health = await self.backend.health()
            if not health.reachable:
                self.detail = health.detail or self.detail
                continue
            try:
                note = await self._recover_now()
            except BackendUnreachable as exc:
                self.detail = str(exc)
                continue
            except BackendError as exc:  # the place answers but cannot be made again: say so, retry
                if self.ended is not None:
                    return
                self.detail = f"lane {self.name} answers but could not be recovered: {exc}"
                continue
            self.state = "ready"
            self.detail = ""
            self._ready.set()
            self._probe = None
            self._tell("ready", note or f"lane {self.name} ({self.where}) answers again")
            return

    async def _recover(self) -> None:
        try:
            note = await self._recover_now()
        except BackendUnreachable as exc:
            self.lost(str(exc))
            raise
        if note:
            self._tell("ready", note)

    async def _recover_now(self) -> str | None:
        async with self._recovering:
            if self.ended is not None:
                raise self._ended_error()
            self._recovery = asyncio.ensure_future(self.backend.recover())
            try:
                return await self._recovery
            except asyncio.CancelledError:
                me = asyncio.current_task()
                if self.ended is not None and me is not None and not me.cancelling():
                    raise self._ended_error() from None  # ended under it: its caller was not cancelled
                raise
            finally:
                self._recovery = None

    def _ended_error(self) -> LaneGone:
        return LaneGone(
            f"lane {self.name}'s {self.where} is gone and the lane was {self.ended}: it is not made again"
        )

    async def _end(self, why: str) -> None:
        """No recovery from now on: the probe stops, a recovery running is cancelled (what it made is
        removed by the backend's create) and has ended when this returns."""
        self.ended = self.ended or why
        await self._stop_probing()
        if self._recovery is not None:
            self._recovery.cancel()
        async with self._recovering:
            pass

    async def _stop_probing(self) -> None:
        if self._probe is not None and self._probe is not asyncio.current_task():
            self._probe.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._probe
        self._probe = None

    async def discard(self, *, force: bool = False) -> Snapshot | None:
        """Remove the lane's place for good: from now on nothing recovers or recreates it (a sync in
        flight that meets the removed place fails with LaneGone). Without ``force`` its work is
        fetched here first (refused, with the backend's error, when that fails; a place already gone
        has nothing more to fetch). Returns :meth:`~paragents.backends.base.ExecutionBackend.destroy`'s
        last snapshot."""
        before = self.ended
        await self._end("discarded")
        try:
            if not force:
                with contextlib.suppress(LaneGone):
                    await self.sync()
            async with self._recovering:
                return await self.backend.destroy(force=force)
        except BaseException:
            if before is None:  # not removed: the lane is in use again (and probed while unreachable)
                self.ended = None
                if self.state == "unreachable" and self._probe is None:
                    self._start_probing()
            raise

    def _tell(self, state: LaneState, note: str | None) -> None:
        self.last_note = note
        if self.on_change is not None:
            self.on_change(self, state, note)

    async def close(self) -> None:
        """Stop probing and release the backend's connections (the place itself stays, and this
        object never recovers it again: a call still in flight that finds it gone fails)."""
        await self._end("closed")
        await self.backend.close()
