"""A lockfile changed in a lane while its dependency folder (``.venv``, ``node_modules``) is still
the main checkout's, linked: the setup's ``install`` command runs in the lane (the link is removed
first, never the folder it points to), or, with no ``install`` configured, the usual install command
is offered. Nothing here imports Textual."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from paragents.config import LaneSettings
from paragents.lanes.create import lane_env
from paragents.lanes.errors import LaneError
from paragents.lanes.overview import stale_dependencies
from paragents.lanes.setup import DEPENDENCY_DIRS, find_setup, lockfile_hashes, run_commands
from paragents.store import LaneRecord

USUAL_INSTALL: dict[str, str] = {
    "uv.lock": "uv sync",
    "poetry.lock": "poetry install",
    "package-lock.json": "npm ci",
    "pnpm-lock.yaml": "pnpm install --frozen-lockfile",
    "yarn.lock": "yarn install --frozen-lockfile",
}
"""Lockfile -> the command offered when the repository's setup names no ``install``."""


@dataclass
class DepsRefresh:
    """What :func:`refresh_dependencies` did: ``ran`` the install (``ok`` or not), or only offered it;
    ``text`` says so; ``lockfiles`` are the lane's hashes to record after a successful install."""

    ran: bool
    ok: bool
    text: str
    output: str = ""
    lockfiles: dict[str, str] = field(default_factory=dict)


def changed_lockfiles(lane: LaneRecord) -> list[str]:
    """Lockfiles whose bytes differ from when the lane was set up (or last installed)."""
    now = lockfile_hashes(Path(lane.path))
    return sorted(n for n in set(now) | set(lane.lockfiles) if now.get(n) != lane.lockfiles.get(n))


async def refresh_dependencies(
    repo: Path,
    lane: LaneRecord,
    settings: LaneSettings,
    on_output: Callable[[str], None] | None = None,
) -> DepsRefresh | None:
    """Run (or offer) the install of a lane whose lockfile changed while its dependency folder is
    linked to the main checkout's; None when nothing is stale."""
    stale = stale_dependencies(lane)
    if not stale:
        return None
    path = Path(lane.path)
    deciding = {name for folder in stale for name in DEPENDENCY_DIRS[folder]}
    changed = [name for name in changed_lockfiles(lane) if name in deciding]
    what = f"{', '.join(changed)} changed in lane {lane.name} while {', '.join(stale)} is the main checkout's"
    spec = find_setup(repo, path, lane.port_base)
    if not spec.install:
        usual = " && ".join(dict.fromkeys(USUAL_INSTALL[n] for n in changed if n in USUAL_INSTALL))
        run = f"`{usual}`" if usual else "the install"
        return DepsRefresh(
            False, False, f"{what}: run {run} in the lane after removing the link "
            f"(`rm {' '.join(stale)}` removes only the link), or set `install` in "
            ".paragents/worktree.toml and paragents runs it",
        )  # fmt: skip
    for folder in stale:
        (path / folder).unlink()  # the symlink only: the main checkout's folder stays
    env = {**spec.env, **lane_env(lane), "PARAGENTS_ROOT": str(repo)}
    try:
        output = await run_commands(
            spec.install, path, env, spec.timeout or settings.setup_timeout, on_output, "install command"
        )
    except LaneError as exc:
        return DepsRefresh(True, False, f"{what}; its install failed: {exc}", exc.output)
    return DepsRefresh(
        True, True, f"{what}: ran the install command; {', '.join(stale)} is now the lane's own",
        output, lockfile_hashes(path),
    )  # fmt: skip
