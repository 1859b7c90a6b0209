"""The lanes facet of the session layer (:class:`Lanes`): ``/lane`` and its report, the Lanes review
screen's actions, the overview's lane lines, the predicted conflicts between lanes (both sides, adapt,
dismiss), where paragents' own commands in a lane run, a new lane's setup output, and the lanes that
run in a container or a Pod. Nothing here imports Textual."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from paragents.lanes import LaneError
from paragents.lanes.contained import LaneSandbox
from paragents.lanes.gc import gc
from paragents.lanes.git import git
from paragents.lanes.overview import lane_rows
from paragents.lanes.predict import Conflict
from paragents.sessions.core import SessionsCore
from paragents.sessions.lane_actions import LaneActions
from paragents.sessions.lanes import LaneWatcher, inside, lane_sandbox, watch_lanes
from paragents.sessions.view import SessionError
from paragents.store import LaneRecord, StoreError

if TYPE_CHECKING:  # the backends load when a lane runs elsewhere (sessions/remote_lanes.py)
    from paragents.backends.base import Placement
    from paragents.backends.lane import RemoteLane


class Lanes(Protocol):
    """The lanes of the project as clients see them (``runtime.lanes``)."""

    async def lane_report(self, sid: str) -> str: ...
    async def lane_gc(self) -> str: ...
    def lane_actions(self) -> LaneActions: ...
    async def adapt_lane(self, sid: str, other: str | None = None) -> str: ...
    def lane_question(self) -> list[str]: ...
    async def lane_overview(self) -> list[str]: ...
    def lane_sandbox(self, lane: LaneRecord) -> LaneSandbox: ...
    async def refresh_lane(self, lane: LaneRecord) -> None: ...
    def dismiss_lane_conflict(self, key: str) -> bool: ...
    async def lane_conflict_sides(self, key: str) -> list[tuple[str, str]]: ...
    async def lane_of(self, sid: str) -> LaneRecord | None: ...
    def watch_setup(self, output: Callable[[str, str], object] | None) -> None: ...
    def place_lane(self, name: str, placement: Placement | None) -> None: ...
    def remote_lane(self, lane: LaneRecord) -> RemoteLane | None: ...


ADAPT_DIFF_LIMIT = 8000
"""Characters of the other side's diff put into an "adapt" prompt."""


def _no_lane(sid: str) -> LaneRecord:
    raise SessionError(f"session {sid} has no lane record")


class LaneCommands:
    """The :class:`Lanes` facet of the sessions of one project."""

    def __init__(self, core: SessionsCore) -> None:
        self.core = core

    def lane_actions(self) -> LaneActions:
        """The Lanes review screen's actions."""
        return LaneActions(self.core)

    async def adapt_lane(self, sid: str, other: str | None = None) -> str:
        """Queue a prompt asking the session's agent to adapt to the conflicts predicted for its lane
        (with ``other`` only); return the prompt's id."""
        return self.core.submit(sid, await self._adapt_prompt(sid, other))

    def lane_sandbox(self, lane: LaneRecord) -> LaneSandbox:
        """Where paragents' own commands in ``lane`` run: its sandbox here, or its container/Pod."""
        return lane_sandbox(self.core, lane)

    async def refresh_lane(self, lane: LaneRecord) -> None:
        """Bring a remote lane's work into its worktree here and this machine's commits to it (a
        local lane: nothing). SessionError when its place does not answer."""
        await self.core.remote.refresh(lane)

    def dismiss_lane_conflict(self, key: str) -> bool:
        """Hide the predicted lane conflict ``key`` until the prediction changes."""
        watcher = self.core.lane_watcher
        return bool(watcher is not None and watcher.dismiss(key))

    async def lane_of(self, sid: str) -> LaneRecord | None:
        """The lane session ``sid`` works in (None: the shared checkout)."""
        return await self.core.store.lanes.of_session(sid)

    def watch_setup(self, output: Callable[[str, str], object] | None) -> None:
        """Send (lane name, line) of each new lane's setup output to ``output`` while it runs (the TUI
        and ``paragents run`` stream it); None stops."""
        self.core.lane_setup_output = output

    def place_lane(self, name: str, placement: Placement | None) -> None:
        """The lane named ``name`` (made next) runs where ``placement`` says (None: forget it)."""
        self.core.remote.place(name, placement)

    def remote_lane(self, lane: LaneRecord) -> RemoteLane | None:
        """The open container or Pod of ``lane`` (None: a local lane, or not open)."""
        return self.core.remote.get(lane)

    def lane_question(self) -> list[str]:
        """With ``lanes: ask``: the names of the open sessions that write in the shared checkout (the user
        is asked whether a new session opens in a lane when there are any); [] otherwise."""
        core = self.core
        if core.config.lanes.mode != "ask":
            return []
        return [view.name for view in core.sessions.values() if view.lane is None and view.read_only is None]

    async def lane_overview(self) -> list[str]:
        """One line per lane of this project for the overview: name, branch, ports, and the open session
        working in it, or "leftover" (no open session: `lanes gc` says whether it can go), or "worktree
        gone". Reads the store only (no git)."""
        core = self.core
        try:
            lanes = [lane for lane in await core.store.lanes.all() if inside(core.project_dir, lane.repo)]
        except StoreError:
            return []
        names = {sid: view.name for sid, view in core.sessions.items()}
        places = await core.remote.usage()
        lines = []
        for lane in lanes:
            ports = f"ports {lane.port_base}-{lane.port_base + lane.port_count - 1}"
            holder = names.get(lane.session_id or "")
            who = f"session {holder}" if holder else "leftover: no open session (`paragents lanes gc`)"
            if not Path(lane.path).is_dir():
                who += ", worktree gone"
            setup = f", setup {lane.setup_state}" if lane.setup_state != "ready" else ""
            place = places.get((lane.repo, lane.name)) or (
                "local" if not lane.remote else f"{lane.backend} (not open)"
            )
            lines.append(f"{lane.name:16} {lane.branch:24} {ports}  {who}{setup}  [{place}]")
        return lines

    async def _adapt_prompt(self, sid: str, other: str | None = None) -> str:
        """The prompt that asks a lane session's agent to adapt to the conflicts predicted for its lane
        (only the one with lane or base branch ``other`` when given): the files, the other lane's (or the
        base branch's) change to them. SessionError when the session is not in a lane or no conflict is
        predicted for it."""
        core = self.core
        view = core.view(sid)
        if view.lane is None:
            raise SessionError("this session works in the shared checkout, not in a lane")
        watcher = watch_lanes(core, Path((await core.store.lanes.of_session(sid) or _no_lane(sid)).repo))
        conflicts = [c for c in await watcher.run_round() if view.lane in (c.a, c.b)]
        if other is not None:
            conflicts = [c for c in conflicts if other in (c.a, c.b)]
        if not conflicts:
            raise SessionError(f"no conflict is predicted for lane {view.lane} right now")
        parts = [f"Your lane {view.lane} is predicted to conflict with other work before either is merged."]
        for conflict in conflicts:
            other = conflict.b if conflict.a == view.lane else conflict.a
            theirs = await self._their_change(watcher, conflict, other)
            where = f"its base branch {conflict.b}" if conflict.against_base else f"lane {other}"
            parts.append(
                f"\nConflicting file(s) with {where}: {', '.join(conflict.files)}. Their change to them:\n"
                f"```diff\n{theirs[:ADAPT_DIFF_LIMIT]}\n```"
            )
        parts.append(
            "\nAdapt your change to these files so that it keeps both intents and merges cleanly with "
            "theirs; do not undo their change. Say briefly what you changed."
        )
        return "\n".join(parts)

    async def _their_change(self, watcher: LaneWatcher, conflict: Conflict, other: str) -> str:
        core = self.core
        if conflict.against_base:
            mine = await core.store.lanes.get(str(watcher.repo), conflict.a)
            if mine is None:
                return ""
            old, new = mine.base_commit, conflict.b
        else:
            lane = await core.store.lanes.get(str(watcher.repo), other)
            if lane is None:
                return ""
            old, new = lane.base_commit, (await watcher.snapshot(lane)).commit
        out = await git("diff", "--no-color", old, new, "--", *conflict.files, cwd=watcher.repo, check=False)
        return out.out.strip()

    async def lane_conflict_sides(self, key: str) -> list[tuple[str, str]]:
        """Both sides of the predicted conflict ``key``: (title, diff of the conflicting files against
        the lane's base) for each lane, or the base branch's change since the lane's base commit."""
        core = self.core
        watcher: LaneWatcher | None = core.lane_watcher
        conflict = next((c for c in watcher.current if watcher.key(c) == key), None) if watcher else None
        if watcher is None or conflict is None:
            raise SessionError("this conflict is no longer predicted")
        sides = []
        for name in (conflict.a, conflict.b):
            if conflict.against_base and name == conflict.b:
                title = f"base branch {name} (since lane {conflict.a} was made)"
                sides.append((title, await self._their_change(watcher, conflict, name)))
                continue
            lane = await core.store.lanes.get(str(watcher.repo), name)
            if lane is None:
                sides.append((f"lane {name}", "(this lane is gone)"))
                continue
            snap = await watcher.snapshot(lane)
            out = await git(
                "diff", "--no-color", lane.base_commit, snap.commit, "--", *conflict.files,
                cwd=watcher.repo, check=False,
            )  # fmt: skip
            sides.append((f"lane {name} ({lane.branch}, working tree)", out.out.strip() or "(no change)"))
        return sides

    async def lane_gc(self) -> str:
        """``/lane gc``: remove the lanes whose work landed (never with force); say why others stay."""
        core = self.core
        try:
            decisions = await gc(core.store, core.project_dir, apply=True)
        except (LaneError, StoreError) as exc:
            return f"lanes: {exc}"
        lines = [
            f"{d.action} {d.lane}" + (f": {'; '.join(d.reasons)}" if d.reasons else "") for d in decisions
        ]
        return "\n".join(lines) or "no lanes in this repository"

    async def lane_report(self, sid: str) -> str:
        """Plain text for ``/lane``: this session's lane, then every lane of the repository."""
        core = self.core
        view = core.view(sid)
        try:
            rows = await lane_rows(core.store.lanes, core.project_dir)
        except LaneError as exc:
            return f"lanes: {exc}"
        head = (
            f"this session works in lane {view.lane}"
            if view.lane
            else "this session works in the shared checkout"
        )
        if not rows:
            return head + "\nno lanes in this repository (/new --lane opens a session in one)"
        return "\n".join([head, *(row["line"] for row in rows)])
