"""Sessions in lanes: a new session's worktree (``/new --lane``, ``run --lane``, ``lanes: auto``),
its lane attached again after a restart, and the ``/lane`` report. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, Literal, TypeVar

from paragents import events as ev
from paragents.lanes import CreatedLane, LaneError, create_lane, lane_env
from paragents.lanes.contained import LaneSandbox
from paragents.lanes.deps import changed_lockfiles, refresh_dependencies
from paragents.lanes.gc import remove_lane
from paragents.lanes.predict import Conflict, Predictor, Snapshot
from paragents.lanes.thread import LoopThread
from paragents.sessions.core import SessionsCore
from paragents.sessions.view import SessionError, SessionView
from paragents.store import LaneRecord, StoreError

T = TypeVar("T")
_LANE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")


def lane_sandbox(core: SessionsCore, lane: Path | str | LaneRecord | None = None) -> LaneSandbox:
    """How commands paragents runs in a lane of this project are confined: the config's sandbox mode,
    ``lanes.verify_network``, and the paths of the policy's Read deny rules (anchored at the lane);
    for a lane that runs in a container or Pod, that place (its runner: docs/remote.md)."""
    if isinstance(lane, LaneRecord):
        if lane.remote:
            sandbox: LaneSandbox = core.remote.sandbox(lane)
            return sandbox
        lane = lane.path
    where = Path(lane) if lane is not None else core.project_dir
    rules = core.policy.read_deny_patterns(where)
    return LaneSandbox.from_settings(core.config.sandbox, core.config.lanes, rules)


def attach_event(session_id: str, lane: LaneRecord, notes: tuple[str, ...] = ()) -> ev.LaneAttached:
    """The event that puts a session in ``lane`` (working directory, sandbox root, ports)."""
    return ev.LaneAttached(session_id, lane.name, lane.path, tuple(lane_env(lane).items()), notes)


def inside(project: Path, repo: str) -> bool:
    """True when the repository ``repo`` is ``project`` or holds it."""
    return project == Path(repo) or Path(repo) in project.parents


def wants_auto_lane(core: SessionsCore) -> bool:
    """With ``lanes: auto``: True when another open session already writes in the shared checkout."""
    if core.config.lanes.mode != "auto":
        return False
    return any(view.lane is None and view.read_only is None for view in core.sessions.values())


async def make_lane(
    core: SessionsCore, session_name: str, lane: str | bool, base: str | None, *, on: str | None = None
) -> CreatedLane:
    """Create the lane a new session will work in (``on``: where it runs, default ``lanes.backend``);
    SessionError with the readable reason on failure."""
    name = lane if isinstance(lane, str) else (session_name if _LANE_NAME.match(session_name) else None)
    stream = core.lane_setup_output
    label = name or session_name
    output: Callable[[str], None] | None = None
    if stream is not None:

        def output(line: str) -> None:
            stream(label, line)

    kind = _backend_kind(core, on)
    try:
        made = await create_lane(
            core.store,
            core.project_dir,
            name,
            base or "head",
            settings=core.config.lanes,
            on_output=output,
            sandbox=lane_sandbox(core),
            setup=kind == "local",
            backend=kind,
        )
    except LaneError as exc:
        detail = f"\n{exc.output}" if exc.output else ""
        raise SessionError(f"cannot open a lane: {exc}{detail}") from exc
    if kind == "local":
        return made
    try:  # its container/Pod from the lane's base, then the repository's setup there
        await core.remote.open(made.lane, create=True, on_output=output)
        made.notes.extend(await core.remote.setup(made.lane, output))
    except (SessionError, LaneError) as exc:
        await drop_new_lane(core, made.lane)
        detail = f"\n{exc.output}" if isinstance(exc, LaneError) and exc.output else ""
        raise SessionError(f"cannot open a lane on {kind}: {exc}{detail}") from exc
    except BaseException:
        await drop_new_lane(core, made.lane)
        raise
    return made


def _backend_kind(core: SessionsCore, on: str | None) -> str:
    """The backend ``--on`` names (the config's ``lanes.backend`` without it); SessionError otherwise."""
    if on is None:
        return core.config.lanes.backend
    # deferred: start-up time, the backends load only once a lane runs in a container or a Pod
    from paragents.backends.places import backend_kind

    try:
        return backend_kind(on)
    except ValueError as exc:
        raise SessionError(str(exc)) from None


async def auto_lane(core: SessionsCore, session_name: str, base: str | None) -> CreatedLane | None:
    """``lanes: auto``: make a lane for a new session, or (e.g. not a git repository) return None and
    note why the session shares the checkout."""
    try:
        return await make_lane(core, session_name, True, base)
    except SessionError as exc:
        core.notes.append(f"session {session_name} shares the checkout: {exc}")
        return None


async def drop_new_lane(core: SessionsCore, lane: LaneRecord) -> None:
    """Remove a lane made for a session that could not be created (it holds no work yet)."""
    try:
        await remove_lane(core.store.lanes, Path(lane.repo), lane, force=True)
    except (LaneError, StoreError) as exc:
        core.notes.append(f"lane {lane.name} could not be removed: {exc}")
    await core.remote.forget(lane)


async def join_lane(core: SessionsCore, view: SessionView, made: CreatedLane, *, notices: bool) -> None:
    """Record the new session as the lane's holder and attach it. The lane's notes travel on the
    LaneAttached event (``view.lane_notes``); with ``notices`` (a headless session, whose client
    prints them) they are also emitted as notices. A TUI shows them itself once its panel exists."""
    await core.store.lanes.update(made.lane.id, session_id=view.id)
    await core.store.lanes.hold_ports(made.lane, view.id)
    ports = f"{made.lane.port_base}-{made.lane.port_base + made.lane.port_count - 1}"
    text = f"working in lane {made.lane.name} ({made.lane.branch}) at {made.lane.path}; ports {ports}"
    remote = core.remote.get(made.lane)
    if remote is not None:
        text += (
            f"; its commands and files are in {remote.where} (the worktree here mirrors them; its ports "
            f"are forwarded to 127.0.0.1:{ports})"
        )
    notes = (text, *made.notes)
    core.emit(attach_event(view.id, made.lane, notes))
    core.remote.attach(view.id, made.lane)
    watch_lanes(core, Path(made.lane.repo))
    if notices:
        for note in notes:
            core.emit(ev.Notice(view.id, note, "info"))


async def attach_restored(core: SessionsCore, views: list[SessionView], *, startup: bool = False) -> None:
    """Attach the lanes of restored sessions (lanes survive restarts); note lanes whose worktree is
    gone and, at ``startup``, the lanes of this project whose sessions are not open."""
    wanted = {view.id: view for view in views if view.lane is None}
    if not wanted and not startup:
        return
    leftover: list[str] = []
    for lane in await core.store.lanes.all():
        view = wanted.get(lane.session_id or "")
        if view is None:
            if startup and lane.session_id not in core.sessions and inside(core.project_dir, lane.repo):
                leftover.append(lane.name)
            continue
        view.apply(attach_event(view.id, lane))
        if lane.remote:  # reached in the background; its sessions pause until then
            await core.remote.open(lane, create=False)
            core.remote.attach(view.id, lane)
        await core.store.lanes.hold_ports(lane, view.id)
        watch_lanes(core, Path(lane.repo))
        if not Path(lane.path).is_dir():
            core.notes.append(
                f"the worktree of lane {lane.name} ({lane.path}) is gone: `paragents lanes gc` says what it "
                "still holds (`--apply --force` bundles it before removing the record)"
            )
    if leftover:
        core.notes.append(
            f"{len(leftover)} lane(s) left from earlier sessions: {', '.join(leftover)} "
            "(`paragents lanes list` shows them; `paragents lanes gc` removes those whose work landed)"
        )


PREDICT_INTERVAL = 20.0
"""Seconds between prediction rounds while lanes are open (besides the rounds after writes)."""

PREDICT_DEBOUNCE = 1.5
"""Seconds after a lane session's tool call before the round it triggers (more calls join it)."""

READ_ONLY_TOOLS = frozenset({"read_file", "list_dir", "glob", "grep"})
"""Built-in tools that never change a lane's files: a call of one schedules no round (the timer's
rounds still read every lane, e.g. for what a command left running in the background wrote)."""
NOTHING_RAN = frozenset({"denied", "skipped"})
"""Statuses of tool calls that did not run: they schedule no round either."""


class LaneWatcher:
    """Predicts conflicts between the repository's lanes while they work: a round after each tool
    call of a lane session (debounced) and on a slow timer. Rounds run on a private loop in a thread
    (:class:`~paragents.lanes.thread.LoopThread`), never on the caller's loop, and nothing waits for
    them but the next round. The sessions of both lanes get a :class:`~paragents.events.LaneConflictsChanged`
    whenever what is predicted for their lane changes (inbox items and panel titles), and a warning
    notice when a conflict is newly predicted. A dismissed prediction stays hidden until it changes."""

    def __init__(
        self,
        core: SessionsCore,
        repo: Path,
        *,
        interval: float = PREDICT_INTERVAL,
        debounce: float = PREDICT_DEBOUNCE,
    ) -> None:
        self.core = core
        self.repo = repo
        self.interval = interval
        self.debounce = debounce
        self.predictor = Predictor(repo)
        self.seen: set[tuple[str, str, tuple[str, ...]]] = set()
        self.current: list[Conflict] = []
        self.dismissed: set[str] = set()
        """Keys of predictions the user dismissed (forgotten once the prediction changes)."""
        self._shown: dict[str, tuple[ev.PredictedConflict, ...]] = {}
        """What each session was last told is predicted for its lane."""
        self._thread: LoopThread | None = None
        self._wrote: set[str] = set()
        """Lanes whose sessions finished a tool call since the last debounced round."""
        self._deps_seen: dict[int, tuple[str, ...]] = {}
        """Lane id -> the lockfile hashes its install was run (or offered) for."""
        self._deps_tasks: set[asyncio.Task[None]] = set()
        self._timer: asyncio.Task[None] | None = None
        self._pending: asyncio.Task[None] | None = None
        self._lock = asyncio.Lock()

    def start(self) -> None:
        self._thread = LoopThread("paragents lane predictions")
        self.core.observers.append(self.observe)
        self._timer = asyncio.get_running_loop().create_task(self._tick(), name="lane predictions")

    async def stop(self) -> None:
        with contextlib.suppress(ValueError):
            self.core.observers.remove(self.observe)
        for task in (self._timer, self._pending, *self._deps_tasks):
            if task is not None:
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
        if self._thread is not None:
            self._thread.close()
        self.predictor.close()

    def observe(self, event: ev.Event) -> None:
        """Observer: a finished tool call in a lane session schedules a round (debounced)."""
        if not isinstance(event, ev.ToolCallFinished):
            return
        view = self.core.sessions.get(event.session_id)
        if view is None or view.lane is None:
            return
        if event.call.name in READ_ONLY_TOOLS or event.status in NOTHING_RAN:
            return
        self._wrote.add(view.lane)
        if self._pending is None or self._pending.done():
            self._pending = asyncio.get_running_loop().create_task(self._soon(), name="lane prediction")

    async def _soon(self) -> None:
        await asyncio.sleep(self.debounce)
        wrote, self._wrote = frozenset(self._wrote), set()
        await self.run_round(only=wrote)

    async def _tick(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            await self.run_round()

    async def _off_loop(self, coro: Coroutine[Any, Any, T]) -> T:
        if self._thread is None:
            return await coro
        return await self._thread.run(coro)

    async def snapshot(self, lane: LaneRecord) -> Snapshot:
        """The lane's working tree now, as a snapshot with its tree and commit written."""
        async with self._lock:
            return await self._off_loop(self.predictor.fresh(lane))

    @staticmethod
    def key(conflict: Conflict) -> str:
        """The key of a prediction: its sides and files (it changes when they do)."""
        return "\0".join([conflict.a, conflict.b, str(conflict.against_base), *conflict.files])

    async def run_round(self, only: frozenset[str] | None = None) -> list[Conflict]:
        """Run one prediction round now (re-reading only the lanes named in ``only`` when given: a
        round after tool calls; the timer's rounds read every lane); tell both lanes' sessions what
        changed; return all current conflicts."""
        async with self._lock:
            try:
                lanes = await self.core.store.lanes.all(str(self.repo))
                # remote lanes' files come here first; the round takes their trees as fetched
                trees = await self.core.remote.sync(str(self.repo), only)
                conflicts = await self._off_loop(self.predictor.round(lanes, local_only(lanes, only), trees))
            except (LaneError, StoreError, OSError):
                return self.current
            by_lane = {view.lane: view for view in self.core.sessions.values() if view.lane}
            keys = set()
            for conflict in conflicts:
                key = (conflict.a, conflict.b, conflict.files)
                keys.add(key)
                if key in self.seen:
                    continue
                for name in (conflict.a, conflict.b):
                    view = by_lane.get(name)
                    if view is not None:
                        text = f"conflict predicted: {conflict.describe()} {conflict.not_merged()}"
                        self.core.emit(ev.Notice(view.id, text, "warning"))
            self.seen = keys
            self.current = conflicts
            self.dismissed &= {self.key(c) for c in conflicts}
            self._publish()
        self._check_dependencies(lanes)
        return conflicts

    def _check_dependencies(self, lanes: list[LaneRecord]) -> None:
        """A lockfile that changed in a lane whose dependency folder is linked: run (or offer) the
        install once per lockfile state, in the background (see :mod:`paragents.lanes.deps`)."""
        for lane in lanes:
            if lane.remote or not Path(lane.path).is_dir():  # a container's installs run in it
                continue
            state = tuple(changed_lockfiles(lane))
            if not state or self._deps_seen.get(lane.id) == state:
                continue
            self._deps_seen[lane.id] = state
            task = asyncio.get_running_loop().create_task(self._refresh(lane), name="lane install")
            self._deps_tasks.add(task)
            task.add_done_callback(self._deps_tasks.discard)

    async def _refresh(self, lane: LaneRecord) -> None:
        try:
            sandbox = lane_sandbox(self.core, lane.path)
            done = await self._off_loop(
                refresh_dependencies(self.repo, lane, self.core.config.lanes, sandbox=sandbox)
            )
            if done is None:
                return
            if done.ok:
                await self.core.store.lanes.update(lane.id, lockfiles=done.lockfiles)
        except (LaneError, StoreError, OSError) as exc:
            text = f"lane {lane.name}: checking its dependencies failed: {exc}"
            level: Literal["info", "warning", "error"] = "error"
        else:
            text = done.text + (
                f"\n{done.output[-2000:]}" if done.ran and not done.ok and done.output else ""
            )
            level = "info" if done.ok else ("error" if done.ran else "warning")
        for view in list(self.core.sessions.values()):
            if view.lane == lane.name:
                self.core.emit(ev.Notice(view.id, text, level))

    def dismiss(self, key: str) -> bool:
        """Hide the prediction ``key`` until it changes; False when it is not predicted now."""
        if not any(self.key(c) == key for c in self.current):
            return False
        self.dismissed.add(key)
        self._publish()
        return True

    def _publish(self) -> None:
        """Emit LaneConflictsChanged to each lane session whose visible predictions changed."""
        shown = [
            ev.PredictedConflict(self.key(c), c.a, c.b, c.files, c.against_base)
            for c in self.current
            if self.key(c) not in self.dismissed
        ]
        for view in list(self.core.sessions.values()):
            if view.lane is None:
                continue
            mine = tuple(p for p in shown if view.lane == p.a or (view.lane == p.b and not p.against_base))
            if self._shown.get(view.id, ()) != mine:
                self._shown[view.id] = mine
                self.core.emit(ev.LaneConflictsChanged(view.id, view.lane, mine))


def local_only(lanes: list[LaneRecord], only: frozenset[str] | None) -> frozenset[str] | None:
    """The lanes a round re-reads from their worktree: ``only``'s local lanes (every local lane when
    ``only`` is None). A remote lane is read from its fetched tree (``trees`` of the round) or keeps
    its last snapshot: its worktree here holds what was fetched, nothing newer."""
    if not any(lane.remote for lane in lanes):
        return only
    local = frozenset(lane.name for lane in lanes if not lane.remote)
    return local if only is None else only & local


def watch_lanes(core: SessionsCore, repo: Path) -> LaneWatcher:
    """Start the core's lane watcher (once); return it."""
    if core.lane_watcher is None:
        core.lane_watcher = LaneWatcher(core, repo)
        core.lane_watcher.start()
    watcher: LaneWatcher = core.lane_watcher
    return watcher
