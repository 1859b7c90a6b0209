"""Where a trial's lane runs (``eval run --on``): the one interface an execution backend implements.

A backend prepares the task set (where each task runs), opens the sessions of a trial in lanes made
from the task's base commit, brings a lane's work here, runs a command in a lane's sandbox (the hidden
tests, the oracle), and discards a lane once its diff is kept. ``local`` (:class:`LocalBackend`) is a
git worktree under the eval's state directory with the sandbox of :mod:`paragents.eval.sandbox`.
``container`` and ``k8s`` (:class:`paragents.eval.remote.PlacedBackend`) open the same sessions with
``--on``: their tool calls run in a container or a Pod of the task's image (docs/remote.md), and the
hidden tests run there too. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from paragents.eval.errors import EvalError
from paragents.eval.sandbox import CommandResult, Mount, run_in_sandbox
from paragents.eval.tasks import Task, TaskSet
from paragents.lanes import LaneError
from paragents.lanes.git import git
from paragents.sessions.view import SessionError
from paragents.store import LaneRecord, StoreError

if TYPE_CHECKING:
    from paragents.backends.base import Placement
    from paragents.backends.lane import RemoteLane
    from paragents.sessions.api import SessionsAPI
    from paragents.store.lanes import LanesRepo

BACKENDS = ("local", "container", "k8s")
"""The names ``--on`` accepts."""


@dataclass(frozen=True)
class TrialLane:
    """One session of a trial and its lane; ``place`` is the lane's open
    :class:`~paragents.backends.lane.RemoteLane` when it runs in a container or Pod."""

    session_id: str
    name: str
    lane: LaneRecord
    place: RemoteLane | None = None

    @property
    def path(self) -> Path:
        return Path(self.lane.path)


@dataclass(frozen=True)
class Opening:
    """What a backend needs to open one session of a trial: its ``name`` (also its lane's), the
    ``model`` (None: the runtime's) or external ``agent`` (an ``agents.NAME``), the permission
    ``mode``, the ``base`` branch, whether the TUI shows a panel for it, and the task's id."""

    name: str
    base: str
    model: str | None = None
    agent: str | None = None
    mode: str | None = None
    open_panel: bool = False
    task_id: str = ""


class TrialBackend(Protocol):
    """Where trials run (see the module docstring)."""

    name: str

    def note_for(self, task: Task) -> str | None:
        """A note for the report when this backend runs ``task`` differently from its own environment
        (None: faithfully)."""
        ...

    @property
    def needs_sandbox(self) -> bool:
        """True when some command runs in this machine's bubblewrap (a local lane's hidden tests)."""
        ...

    async def prepare(self, tasks: TaskSet) -> TaskSet:
        """Decide where each task runs (its notes say what differs from its own environment); return
        the tasks as they will run. EvalError when the backend cannot be used at all."""
        ...

    async def open(self, rt: SessionsAPI, opening: Opening) -> TrialLane:
        """Open a session in a new lane from ``opening.base``; EvalError when it cannot."""
        ...

    async def settle(self, lane: TrialLane) -> None:
        """Bring the lane's work into its worktree here (a remote lane's files; nothing locally)."""
        ...

    async def apply_patch(self, lane: TrialLane, patch: str) -> str | None:
        """Apply ``patch`` (a SWE task's hidden tests) to the lane's files; an error text, or None."""
        ...

    async def run(
        self,
        lane: TrialLane,
        task: Task,
        command: str,
        *,
        mounts: list[Mount],
        env: dict[str, str],
        timeout: float,
        network: bool,
    ) -> CommandResult:
        """Run ``command`` in ``lane``'s sandbox with the lane at ``task.workdir`` and ``mounts``."""
        ...

    async def discard(self, rt: SessionsAPI, lanes: LanesRepo, repo: Path, lane: TrialLane) -> None:
        """Close the session and remove its lane (its diff was kept as evidence; its row goes from
        ``lanes``)."""
        ...

    async def finish(self, repo: Path) -> None:
        """After the run's last trial: remove what :meth:`discard` left for the end."""
        ...


class LocalBackend:
    """Trials in git worktrees on this machine (see the module docstring). Lanes are added and removed
    one at a time: ``git worktree add`` reads every other worktree's metadata, which a concurrent
    ``git worktree remove`` is deleting ("failed to read .git/worktrees/X/commondir"). A discarded
    lane's branch is deleted only when the run ends: the sandbox of another lane's command binds its
    sibling branches' refs read-only (tools/sandbox_git.py), and a ref deleted between building that
    command line and bwrap starting fails the command ("Can't get type of source")."""

    name = "local"

    def __init__(self) -> None:
        self._git = asyncio.Lock()
        self._branches: list[str] = []

    def note_for(self, task: Task) -> str | None:
        return None  # the task's own notes say what its Dockerfile did not do

    @property
    def needs_sandbox(self) -> bool:
        return True

    async def prepare(self, tasks: TaskSet) -> TaskSet:
        return tasks

    async def open(self, rt: SessionsAPI, opening: Opening) -> TrialLane:
        return await self._open(rt, opening)

    async def settle(self, lane: TrialLane) -> None:
        return None

    async def apply_patch(self, lane: TrialLane, patch: str) -> str | None:
        applied = await git(
            "-c", "core.hooksPath=/dev/null", "apply", "--whitespace=nowarn", "-",
            cwd=lane.path, stdin=patch, check=False,
        )  # fmt: skip
        return None if applied.ok else applied.err

    async def _open(
        self, rt: SessionsAPI, opening: Opening, placed: tuple[str, Placement] | None = None
    ) -> TrialLane:
        """Open ``opening``'s session in a new lane, one lane at a time (see the class docstring).
        ``placed``: ``(on, placement)`` of a lane in a container or Pod: the lanes get the placement
        before the session opens its lane (taken back when that fails) and the trial's lane holds
        the lane's open place."""
        on = placed[0] if placed is not None else None
        if placed is not None:
            rt.lanes.place_lane(opening.name, placed[1])
        try:
            async with self._git:
                opened = await self._new_session(rt, opening, on)
        except BaseException:
            if placed is not None:
                rt.lanes.place_lane(opening.name, None)
            raise
        if placed is None:
            return opened
        place = rt.lanes.remote_lane(opened.lane)
        if place is None:
            raise EvalError(f"trial {opening.name}: its lane on {on} is not open")
        return TrialLane(opened.session_id, opened.name, opened.lane, place)

    async def _new_session(self, rt: SessionsAPI, opening: Opening, on: str | None) -> TrialLane:
        """The session of ``opening`` in a new lane (``on``: in a container or Pod); EvalError when
        it cannot open."""
        try:
            if opening.agent is not None:
                view = await rt.lifecycle.new_agent_session(
                    opening.agent,
                    opening.name,
                    open_panel=opening.open_panel,
                    lane=opening.name,
                    base=opening.base,
                )
            else:
                view = await rt.lifecycle.new_session(
                    opening.name,
                    model=opening.model,
                    mode=opening.mode,
                    open_panel=opening.open_panel,
                    lane=opening.name,
                    base=opening.base,
                    on=on,
                )
            lane = await rt.lanes.lane_of(view.id)
        except (SessionError, LaneError, StoreError) as exc:
            raise EvalError(f"trial {opening.name} could not open its lane: {exc}", 1) from None
        if lane is None:
            raise EvalError(f"trial {opening.name} got no lane", 1)
        return TrialLane(view.id, opening.name, lane)

    async def run(
        self,
        lane: TrialLane,
        task: Task,
        command: str,
        *,
        mounts: list[Mount],
        env: dict[str, str],
        timeout: float,
        network: bool,
    ) -> CommandResult:
        return await run_in_sandbox(
            command,
            mounts=[Mount(lane.path, task.workdir, writable=True), *mounts],
            workdir=task.workdir,
            env=env,
            timeout=timeout,
            network=network,
        )

    async def discard(self, rt: SessionsAPI, lanes: LanesRepo, repo: Path, lane: TrialLane) -> None:
        with contextlib.suppress(SessionError, StoreError, KeyError):
            await rt.lifecycle.close_session(lane.session_id)
        async with self._git:
            with contextlib.suppress(LaneError, StoreError, OSError):
                if lane.path.is_dir():
                    await git("worktree", "remove", "--force", lane.path, cwd=repo)
                else:
                    await git("worktree", "prune", cwd=repo)
                await lanes.delete(lane.lane.id)
            self._branches.append(lane.lane.branch)

    async def finish(self, repo: Path) -> None:
        async with self._git:
            branches, self._branches = self._branches, []
            if branches:
                with contextlib.suppress(LaneError, OSError):
                    await git("branch", "-D", *branches, cwd=repo, check=False)
