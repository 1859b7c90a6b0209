"""The lanes of this process that run on a remote backend (``--on container|k8s``, ``lanes.backend``;
docs/remote.md), as the session layer sees them: :class:`RemoteLanes`.

It opens each such lane's place (creating its container/Pod for a new lane, finding it again after a
restart), hands its sessions the execution facet their tool calls go through, runs its setup there,
keeps its worktree here in step for the prediction rounds, forwards its block of ports, and tells the
lane's sessions when it stops or starts answering (``LanePlaceChanged`` plus a notice; the agent
pauses the turn meanwhile). The backends and their client libraries load only when such a lane is
opened. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol

from paragents import events as ev
from paragents.lanes.contained import LaneSandbox, run_commands
from paragents.lanes.create import lane_env
from paragents.lanes.errors import LaneError
from paragents.lanes.places import places_for, use_places
from paragents.lanes.setup import find_setup
from paragents.sessions.view import SessionError
from paragents.store import LaneRecord

if TYPE_CHECKING:
    from paragents.backends.base import Placement
    from paragents.backends.facet import LaneExecution, UnopenedExecution
    from paragents.backends.forward import PortForwards
    from paragents.backends.lane import LaneState, RemoteLane
    from paragents.backends.rounds import RoundSyncer
    from paragents.config import RuntimeConfig
    from paragents.lanes.contained import LaneRunner
    from paragents.sessions.view import SessionView

USAGE_TIMEOUT = 5.0
"""Seconds the overview waits for a lane's usage figures."""


@dataclass
class _Pending:
    """A lane found after a restart, being reached in the background."""

    record: LaneRecord
    ready: asyncio.Event
    why: str
    task: asyncio.Task[None] | None = None


def _why(pending: _Pending) -> str:
    return pending.why


class _Core(Protocol):
    """What the remote lanes use of ``SessionsCore`` (a protocol, so the modules form no cycle)."""

    sessions: dict[str, SessionView]
    notes: list[str]

    @property
    def config(self) -> RuntimeConfig: ...
    def emit(self, event: ev.Event) -> None: ...


class RemoteLanes:
    """See the module docstring. One per runtime (``core.remote``)."""

    def __init__(self, core: _Core) -> None:
        self.core = core
        self.lanes: dict[tuple[str, str], RemoteLane] = {}
        """(repository, lane name) -> the open lane."""
        self.forwards: dict[tuple[str, str], PortForwards] = {}
        self.pending: dict[tuple[str, str], _Pending] = {}
        """Lanes found after a restart and not reached yet (their sessions pause meanwhile)."""
        self.placements: dict[str, Placement] = {}
        """Lane name -> what its place gets beyond the config (:meth:`place`)."""
        self._installed = False
        self._rounds: RoundSyncer | None = None

    # --- opening ----------------------------------------------------------------------------------

    def install(self) -> None:
        """Make the lane commands (gc, merge, discard) reach remote lanes through this process."""
        if self._installed:
            return
        # deferred: start-up time, the backends load only once a lane runs in a container or a Pod
        from paragents.backends.places import BackendPlaces

        use_places(
            BackendPlaces(lambda: self.core.config.lanes, lambda repo, name: self.lanes.get((repo, name)))
        )
        self._installed = True

    def place(self, name: str, placement: Placement | None) -> None:
        """Give the lane named ``name``, when it is opened, ``placement`` (its image, aliases of its
        workspace, empty directories: ``paragents eval`` places a trial's lane so); None forgets it."""
        if placement is None:
            self.placements.pop(name, None)
        else:
            self.placements[name] = placement

    def get(self, lane: LaneRecord) -> RemoteLane | None:
        return self.lanes.get((lane.repo, lane.name))

    async def open(
        self, record: LaneRecord, *, create: bool, on_output: Callable[[str], None] | None = None
    ) -> None:
        """Open the lane of ``record``: made now when ``create`` (its container/Pod created from its
        base; SessionError when that fails); else (a restart) reached in the background: found again,
        started when stopped, recreated from its last fetched snapshot when gone, retried while its
        engine or cluster does not answer. Until then its sessions' calls fail at once and their
        turns pause (:class:`~paragents.backends.facet.UnopenedExecution`): never run here."""
        key = (record.repo, record.name)
        if key in self.lanes:
            return
        self.install()
        if not create:
            self._reach_later(record)
            return
        # deferred: start-up time, the backends load only once a lane runs in a container or a Pod
        from paragents.backends.base import BackendError
        from paragents.backends.lane import RemoteLane
        from paragents.backends.places import backend_of

        try:
            backend = await backend_of(record, self.core.config.lanes, self.placements.get(record.name))
        except BackendError as exc:
            raise SessionError(f"lane {record.name} cannot run on {record.backend}: {exc}") from exc
        try:
            if on_output is not None:
                on_output(f"creating lane {record.name}'s {record.backend} from {record.base_commit[:12]}")
            await backend.create()
        except BackendError as exc:
            await backend.close()
            raise SessionError(f"lane {record.name}'s {record.backend} could not be made: {exc}") from exc
        self.lanes[key] = RemoteLane(backend, Path(record.path), on_change=self._changed)
        await self._forward(record, self.lanes[key])

    def _reach_later(self, record: LaneRecord) -> None:
        key = (record.repo, record.name)
        if key in self.pending:
            return
        pending = _Pending(record, asyncio.Event(), f"lane {record.name}'s {record.backend} is being reached")
        self.pending[key] = pending
        pending.task = asyncio.get_running_loop().create_task(
            self._reach(pending), name=f"reach {record.name}"
        )

    async def _reach(self, pending: _Pending) -> None:
        """Open a lane found after a restart (see :meth:`open`), retrying with growing pauses."""
        # deferred: start-up time, the backends load only once a lane runs in a container or a Pod
        from paragents.backends.base import BackendError
        from paragents.backends.lane import PROBE_MAX, RemoteLane
        from paragents.backends.places import backend_of

        record = pending.record
        delay, told = 1.0, False
        while True:
            backend = None
            try:
                backend = await backend_of(record, self.core.config.lanes, self.placements.get(record.name))
                note = await backend.recover()
                break
            except BackendError as exc:
                if backend is not None:
                    await backend.close()
                pending.why = (
                    f"lane {record.name} is unreachable: its {record.backend} could not be reached ({exc}); "
                    "it is tried again, and its sessions resume when it answers"
                )
                if not told:
                    told = True
                    self._tell(record.name, "unreachable", pending.why)
                await asyncio.sleep(delay)
                delay = min(delay * 2, PROBE_MAX)
        key = (record.repo, record.name)
        lane = RemoteLane(backend, Path(record.path), on_change=self._changed)
        self.lanes[key] = lane
        self.pending.pop(key, None)
        await self._forward(record, lane)
        pending.ready.set()
        if note or told:
            self._changed(lane, "ready", note or f"lane {record.name} ({lane.where}) answers")
        else:
            self._tell(record.name, "ready", "", where=lane.where)

    async def setup(self, record: LaneRecord, on_output: Callable[[str], None] | None) -> list[str]:
        """Run the repository's lane setup commands (``.paragents/worktree.toml`` ...) in the new
        lane's place, then bring its files here; return notes. LaneError when a command fails."""
        notes = []
        spec = find_setup(Path(record.repo), Path(record.path), record.port_base)
        if (Path(record.repo) / ".worktreeinclude").is_file():
            notes.append(
                f"lane {record.name} runs on {record.backend}: the ignored files .worktreeinclude names are "
                "not copied there (they would leave this machine; put what the lane needs in its image)"
            )
        if spec.setup:
            env = {**lane_env(record)}
            timeout = spec.timeout or self.core.config.lanes.setup_timeout
            label = f"lane setup from {spec.source}"
            await run_commands(
                spec.setup, Path(record.path), self.sandbox(record), env, timeout, on_output, label
            )
            notes.append(f"ran the setup from {spec.source} in lane {record.name}'s {record.backend}")
        lane = self.get(record)
        if lane is not None:
            # deferred: start-up time, the backends load only once a lane runs in a container or a Pod
            from paragents.backends.base import BackendError

            try:
                await lane.sync()
            except BackendError as exc:
                raise LaneError(
                    f"lane {record.name}'s files could not be fetched after its setup: {exc}"
                ) from exc
        return notes

    async def refresh(self, record: LaneRecord) -> None:
        """Bring a remote lane's work into its worktree here and this machine's commits to it (a
        local lane: nothing). SessionError when its place does not answer."""
        if not record.remote:
            return

        self.install()
        try:
            await places_for(record).fetch(record)
        except LaneError as exc:
            raise SessionError(str(exc)) from exc

    def sandbox(self, record: LaneRecord) -> Any:
        """The lane sandbox of paragents' own commands in ``record`` (its runner: the container/Pod)."""
        return LaneSandbox(runner=self.runner(record))

    def runner(self, record: LaneRecord) -> LaneRunner:
        self.install()
        return places_for(record).runner(record)

    # --- sessions ---------------------------------------------------------------------------------

    def facet(self, sid: str) -> LaneExecution | UnopenedExecution | None:
        """The execution facet of session ``sid``'s lane when it runs remotely (one that refuses every
        call while the lane is not reached: never None for a remote lane), else None."""
        view = self.core.sessions.get(sid)
        if view is None or view.lane is None or view.lane_where is None:
            return None
        # deferred: start-up time, the backends load only once a lane runs in a container or a Pod
        from paragents.backends.facet import LaneExecution, UnopenedExecution

        for (_, name), lane in self.lanes.items():
            if name == view.lane and str(lane.mirror.worktree) == str(view.workdir):
                confined = getattr(getattr(lane.backend, "settings", None), "network", "none") == "none"
                return LaneExecution(lane, view.workdir, confined=confined)
        for (_, name), pending in self.pending.items():
            if name == view.lane and pending.record.path == str(view.workdir):
                return UnopenedExecution(name, view.workdir, functools.partial(_why, pending), pending.ready)
        never = asyncio.Event()
        why = f"lane {view.lane} runs on another machine and is not open in this process: reopen the session"
        return UnopenedExecution(view.lane, view.workdir, lambda: why, never)

    def attach(self, sid: str, record: LaneRecord) -> None:
        """Tell session ``sid`` where its lane runs (its tool calls go there from now on)."""
        lane = self.get(record)
        if lane is not None:
            self.core.emit(ev.LanePlaceChanged(sid, record.name, lane.where, lane.state, lane.detail))
            return
        pending = self.pending.get((record.repo, record.name))
        if pending is not None:
            where = f"{record.backend} (not reached yet)"
            self.core.emit(ev.LanePlaceChanged(sid, record.name, where, "unreachable", pending.why))

    def _tell(self, name: str, state: str, note: str, *, where: str | None = None) -> None:
        """Tell the sessions of lane ``name`` its state (a lane not open yet: no RemoteLane)."""
        for view in list(self.core.sessions.values()):
            if view.lane != name or view.lane_where is None:
                continue
            self.core.emit(ev.LanePlaceChanged(view.id, name, where or view.lane_where, state, note))
            if note:
                level: Literal["info", "warning"] = "warning" if state == "unreachable" else "info"
                self.core.emit(ev.Notice(view.id, note, level))

    async def release(self, sid: str) -> None:
        """Session ``sid`` closed: close its lane's connections when no other open session works in it
        (its container/Pod stays: the lane is kept until gc or discard)."""
        view = self.core.sessions.get(sid)
        name = view.lane if view is not None else None
        if name is None:
            return
        others = [v for v in self.core.sessions.values() if v.id != sid and v.lane == name]
        if others:
            return
        for key in [k for k in self.lanes if k[1] == name]:
            await self._close(key)

    def _changed(self, lane: RemoteLane, state: LaneState, note: str | None) -> None:
        level: Literal["info", "warning"] = "warning" if state == "unreachable" else "info"
        for view in list(self.core.sessions.values()):
            if view.lane != lane.name or view.lane_where is None:
                continue
            self.core.emit(ev.LanePlaceChanged(view.id, lane.name, lane.where, state, note or ""))
            if note:
                text = note
                if state == "unreachable":
                    text = f"{note} (this session pauses before its next request until the lane answers)"
                self.core.emit(ev.Notice(view.id, text, level))

    # --- rounds, overview, ports ------------------------------------------------------------------

    async def sync(self, repo: str, only: frozenset[str] | None = None) -> dict[str, str]:
        """Bring the files of this repository's remote lanes (those named in ``only``) here, a few at
        a time (:class:`~paragents.backends.rounds.RoundSyncer`; a prediction round reads them next);
        return lane name -> the tree of its files here for each lane synced (the round takes it as
        it is). A lane that does not answer keeps its last fetched files (and pauses); one that takes
        long keeps syncing while the round goes on."""
        todo = [
            lane for (r, name), lane in self.lanes.items()
            if r == repo and lane.ready and lane.ended is None and (only is None or name in only)
        ]  # fmt: skip
        if not todo and not self._rounds:
            return {}
        done = await self.rounds.sync(todo)
        by_name = {lane.name: lane for lane in todo}
        for name, exc in done.failed.items():
            lane = by_name.get(name) or next((v for (r, n), v in self.lanes.items() if n == name), None)
            if lane is not None and lane.ready:
                self._changed(lane, "ready", f"lane {name}'s files could not be fetched: {exc}")
        return done.trees

    @property
    def rounds(self) -> RoundSyncer:
        """The remote part of prediction rounds (made on first use)."""
        if self._rounds is None:
            # deferred: start-up time, the backends load only once a lane runs in a container or a Pod
            from paragents.backends.rounds import RoundSyncer

            self._rounds = RoundSyncer()
        return self._rounds

    async def usage(self) -> dict[tuple[str, str], str]:
        """(repository, lane) -> "where · state · cpu · mem" for the overview."""
        # deferred: start-up time, the backends load only once a lane runs in a container or a Pod
        from paragents.backends.base import BackendError

        async def one(lane: RemoteLane) -> str:
            if not lane.ready:
                return f"{lane.where} · unreachable"
            try:
                used = await asyncio.wait_for(lane.backend.usage(), USAGE_TIMEOUT)
            except (BackendError, TimeoutError):
                return f"{lane.where} · ready"
            return f"{lane.where} · ready · {used.describe()}"

        keys = list(self.lanes)
        found = await asyncio.gather(*(one(self.lanes[k]) for k in keys))
        return dict(zip(keys, found, strict=True))

    async def _forward(self, record: LaneRecord, lane: RemoteLane) -> None:
        # deferred: start-up time, the backends load only once a lane runs in a container or a Pod
        from paragents.backends.forward import PortForwards

        forwards = PortForwards(lane, list(record.ports))
        self.forwards[(record.repo, record.name)] = forwards
        busy = await forwards.start()
        if busy:
            self.core.notes.append(
                f"lane {record.name}: port(s) {', '.join(map(str, busy))} are in use on this machine and "
                "are not forwarded to its place"
            )

    async def forget(self, record: LaneRecord) -> None:
        """Close lane ``record``'s connections and forwarded ports (removed, or never opened)."""
        await self._close((record.repo, record.name))

    async def _close(self, key: tuple[str, str]) -> None:
        forwards = self.forwards.pop(key, None)
        if forwards is not None:
            await forwards.close()
        lane = self.lanes.pop(key, None)
        if lane is not None:
            await lane.close()

    async def shutdown(self) -> None:
        """Close every lane's connections and forwarded ports (their places stay)."""
        for pending in list(self.pending.values()):
            if pending.task is not None:
                pending.task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await pending.task
        self.pending.clear()
        if self._rounds is not None:
            await self._rounds.close()
        for key in list(self.lanes):
            with contextlib.suppress(Exception):
                await self._close(key)
        if self._installed:
            use_places(None)
