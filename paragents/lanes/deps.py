"""A lockfile changed in a lane after its environment was built: the install runs in the lane's
sandbox (:mod:`paragents.lanes.contained`), into the lane's own ``.venv`` / ``node_modules`` (a lane
never shares one with another checkout, so this touches nothing outside the lane). The command is
the setup's ``install`` when the repository names one, else the usual one for the lockfile. The
lockfile is a file a session wrote, so nothing of it runs on the host. Nothing here imports Textual."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from paragents.config import LaneSettings
from paragents.lanes.contained import LaneSandbox, run_commands
from paragents.lanes.create import lane_env
from paragents.lanes.errors import LaneError
from paragents.lanes.overview import stale_dependencies
from paragents.lanes.setup import find_setup, lockfile_hashes
from paragents.store import LaneRecord

USUAL_INSTALL: dict[str, str] = {
    "uv.lock": "uv sync --frozen",
    "package-lock.json": "npm ci",
}
"""Lockfile -> the install run when the repository's setup names no ``install``."""
NOT_RUN: dict[str, str] = {
    "poetry.lock": "poetry install",
    "pnpm-lock.yaml": "pnpm install --frozen-lockfile",
    "yarn.lock": "yarn install --frozen-lockfile",
}
"""Lockfiles whose install paragents does not run itself: the command is offered."""


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
    return stale_dependencies(lane)


async def refresh_dependencies(
    repo: Path,
    lane: LaneRecord,
    settings: LaneSettings,
    on_output: Callable[[str], None] | None = None,
    sandbox: LaneSandbox | None = None,
) -> DepsRefresh | None:
    """Run (in the lane's sandbox) or offer the install of a lane whose lockfile changed; None when
    nothing changed."""
    changed = changed_lockfiles(lane)
    if not changed:
        return None
    path = Path(lane.path)
    what = f"{', '.join(changed)} changed in lane {lane.name}"
    spec = find_setup(repo, path, lane.port_base)
    commands = spec.install or tuple(dict.fromkeys(USUAL_INSTALL[n] for n in changed if n in USUAL_INSTALL))
    if not commands:
        offered = " && ".join(dict.fromkeys(NOT_RUN[n] for n in changed if n in NOT_RUN))
        return DepsRefresh(
            False, False, f"{what}: run `{offered}` in the lane (its environment is its own), or set "
            "`install` in .paragents/worktree.toml and paragents runs it in the lane's sandbox",
        )  # fmt: skip
    sandbox = sandbox or LaneSandbox.from_settings(lanes=settings)
    env = {**spec.env, **lane_env(lane), "PARAGENTS_ROOT": str(repo)}
    timeout = spec.timeout or settings.setup_timeout
    try:
        output = await run_commands(commands, path, sandbox, env, timeout, on_output, "install command")
    except LaneError as exc:
        hint = "" if sandbox.network == "all" else " (no network in the sandbox: `lanes.verify_network: all`)"
        return DepsRefresh(
            True, False, f"{what}; its install in the lane's sandbox failed{hint}: {exc}", exc.output
        )
    return DepsRefresh(
        True,
        True,
        f"{what}: ran `{' && '.join(commands)}` in the lane's sandbox",
        output,
        lockfile_hashes(path),
    )
