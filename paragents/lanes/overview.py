"""One row per lane for ``lanes list``, ``/lane`` and startup: state, ports, work held, setup."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paragents.lanes.errors import LaneError
from paragents.lanes.repo import toplevel
from paragents.lanes.setup import lockfile_hashes
from paragents.lanes.status import LaneStatus, lane_status
from paragents.store.lanes import LanesRepo
from paragents.store.records import LaneRecord


def stale_dependencies(lane: LaneRecord) -> list[str]:
    """Lockfiles that changed in the lane since its environment was built (or last installed): its
    ``.venv`` / ``node_modules`` may not match them until the install runs."""
    path = Path(lane.path)
    if not path.is_dir():
        return []
    now = lockfile_hashes(path)
    return sorted(
        name for name in set(now) | set(lane.lockfiles) if now.get(name) != lane.lockfiles.get(name)
    )


async def lane_rows(lanes: LanesRepo, where: Path) -> list[dict[str, Any]]:
    """Return a dict per lane of the repository at ``where``; ``line`` is a plain-text summary."""
    repo = await toplevel(where)
    rows: list[dict[str, Any]] = []
    for lane in await lanes.all(str(repo)):
        try:
            status = await lane_status(repo, lane)
        except LaneError as exc:  # one unreadable lane never hides the others
            status = LaneStatus(
                lane, Path(lane.path).is_dir(), broken=f"{exc}; its files stay in {lane.path}"
            )
        ports = f"{lane.port_base}-{lane.port_base + lane.port_count - 1}"
        if status.broken:
            state = "broken"
        elif not status.exists:
            state = "worktree gone"
        elif status.dirty:
            state = f"{len(status.dirty)} uncommitted"
        else:
            state = "clean"
        stale = [] if lane.remote else stale_dependencies(lane)
        if stale:
            state += " deps stale"
        work = f"{len(status.ahead)} ahead of {lane.base_ref}"
        if status.ahead and not status.unlanded:
            work += " (landed)"
        line = f"{lane.name:16} {lane.branch:24} {state:16} {work:28} ports {ports}  {lane.path}"
        if lane.setup_state != "ready":
            line += f"  [setup {lane.setup_state}]"
        if lane.remote:  # the worktree mirrors its container/Pod as last fetched
            line += f"  [on {lane.backend}, as last fetched]"
        if status.broken:
            line += f"\n  {status.broken}"
        rows.append(
            {
                "name": lane.name,
                "branch": lane.branch,
                "path": lane.path,
                "exists": status.exists,
                "base_ref": lane.base_ref,
                "base_commit": lane.base_commit,
                "ports": [lane.port_base, lane.port_base + lane.port_count - 1],
                "dirty": len(status.dirty),
                "ahead": len(status.ahead),
                "unlanded": len(status.unlanded),
                "setup_state": lane.setup_state,
                "stale_dependencies": stale,
                "broken": status.broken,
                "session_id": lane.session_id,
                "backend": lane.backend,
                "line": line,
            }
        )
    return rows
