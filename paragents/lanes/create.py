"""Creating and removing a lane's worktree: all or nothing.

:func:`create_lane` claims the name and ports in the store first (one transaction), then runs
``git worktree add -b paragents/<name> <state>/lanes/<project-hash>/<name> <base>``, then the setup.
When anything fails, what was made is undone (worktree removed with ``git worktree remove``, the new
branch deleted, the row dropped) and one readable :class:`LaneError` is raised."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from paragents.config import LaneSettings
from paragents.lanes.contained import LaneSandbox, remove_cache
from paragents.lanes.errors import LaneError
from paragents.lanes.git import git
from paragents.lanes.repo import (
    BRANCH_PREFIX,
    branch_exists,
    check_lane_name,
    lane_path,
    own_changes,
    resolve_base,
    toplevel,
)
from paragents.lanes.setup import run_setup
from paragents.store.lanes import LanesRepo
from paragents.store.records import LaneRecord, StoreError
from paragents.store.sessions import SessionsRepo
from paragents.tools.ref_lock import holding


class NewLaneStore(Protocol):
    """The store's tables :func:`create_lane` uses: the lanes, and the sessions named when a lane's
    name is taken (``paragents.store.Store`` is one)."""

    @property
    def lanes(self) -> LanesRepo: ...
    @property
    def sessions(self) -> SessionsRepo: ...


@dataclass
class CreatedLane:
    """A new lane and the notes to show the user (e.g. "the main checkout has uncommitted changes")."""

    lane: LaneRecord
    notes: list[str] = field(default_factory=list)
    seconds: dict[str, float] = field(default_factory=dict)
    """Seconds each step of its environment build took (``uv_host``, ``uv_sandbox``, ...)."""


async def unique_lane_name(lanes: LanesRepo, repo: Path, prefix: str = "lane") -> str:
    """Return ``<prefix>-N`` with the smallest N not used by a lane or branch of ``repo``."""
    taken = {lane.name for lane in await lanes.all(str(repo))}
    n = 1
    while f"{prefix}-{n}" in taken or await branch_exists(repo, f"{BRANCH_PREFIX}{prefix}-{n}"):
        n += 1
    return f"{prefix}-{n}"


async def create_lane(
    store: NewLaneStore,
    where: Path,
    name: str | None = None,
    base: str = "head",
    *,
    settings: LaneSettings | None = None,
    setup: bool = True,
    on_output: Callable[[str], None] | None = None,
    session_id: str | None = None,
    sandbox: LaneSandbox | None = None,
    backend: str = "local",
) -> CreatedLane:
    """Create a lane for the repository containing ``where`` and return it with notes.

    ``base``: ``head`` (the current branch's last commit), a branch, or a ref like ``origin/main``.
    With ``setup`` the repository's worktree setup runs (see :mod:`paragents.lanes.setup`), its
    output passed line by line to ``on_output``; its commands run in ``sandbox`` (default: the default
    sandbox settings with ``settings.verify_network``). ``backend``: where the lane runs (stored; for a
    ``container`` or ``kubernetes`` lane the caller makes its place and runs the setup there, so pass
    ``setup=False``). Raises LaneError (nothing left behind) on failure."""
    settings = settings or LaneSettings()
    sandbox = sandbox or LaneSandbox.from_settings(lanes=settings)
    repo = await toplevel(where)
    if name is None:
        name = await unique_lane_name(store.lanes, repo)
    check_lane_name(name)
    resolved = await resolve_base(repo, base)
    branch = BRANCH_PREFIX + name
    await git("check-ref-format", "--branch", branch, cwd=repo, what=f"the branch name {branch}")
    held = await store.lanes.get(str(repo), name)
    if held is not None:
        raise LaneError(await _name_taken(store.sessions, held))
    if await branch_exists(repo, branch):
        raise LaneError(
            f"the branch {branch} already exists: pick another lane name, or delete the branch "
            f"(`git branch -D {branch}`) if its work is not needed"
        )
    path = lane_path(repo, name)
    if path.exists():
        raise LaneError(
            f"{path} already exists (left from an earlier lane?): run `paragents lanes gc` or "
            f"`git worktree remove {path}`, then try again"
        )
    notes: list[str] = []
    seconds: dict[str, float] = {}
    if await own_changes(repo):
        notes.append(
            f"the main checkout has uncommitted changes; they stay there, and lane {name} starts from the "
            f"last commit {resolved.commit[:12]} of {resolved.ref}"
        )
    try:
        record = await store.lanes.reserve(
            repo=str(repo),
            name=name,
            path=str(path),
            branch=branch,
            base_ref=resolved.ref,
            base_commit=resolved.commit,
            backend=backend,
        )
    except StoreError as exc:
        raise LaneError(str(exc)) from exc
    made_branch = False
    try:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LaneError(f"cannot create the lanes folder {path.parent}: {exc.strerror}") from exc
        common = await git("rev-parse", "--path-format=absolute", "--git-common-dir", cwd=repo)
        async with holding(common.out.strip(), shared=False):  # see paragents.tools.ref_lock
            result = await git(
                "worktree", "add", "-q", "-b", branch, path, resolved.commit, cwd=repo, check=False
            )
        made_branch = await branch_exists(repo, branch)
        if not result.ok:
            raise LaneError(f"git could not create the worktree {path}: {result.err}")
        if session_id is not None:
            await store.lanes.update(record.id, session_id=session_id)
        if setup:
            await store.lanes.update(record.id, setup_state="setup")
            outcome = await run_setup(
                repo, path, port=record.port_base, settings=settings, sandbox=sandbox, on_output=on_output
            )
            notes.extend(outcome.notes)
            seconds = outcome.seconds
            await store.lanes.update(
                record.id, setup_state="ready", setup_output=outcome.output, lockfiles=outcome.lockfiles
            )
        else:
            await store.lanes.update(record.id, setup_state="ready")
    except LaneError as exc:
        await _undo(store.lanes, repo, record, path, made_branch)
        if exc.output:
            log = path.parent / f"{name}.setup-failed.log"
            with contextlib.suppress(OSError):
                log.parent.mkdir(parents=True, exist_ok=True)
                log.write_text(exc.output + "\n", encoding="utf-8")
                raise LaneError(
                    f"{exc}; the lane was removed (output kept in {log})",
                    output=exc.output,
                    command_exit=exc.command_exit,
                ) from exc
        raise
    except BaseException:
        await _undo(store.lanes, repo, record, path, made_branch)
        raise
    lane = await store.lanes.get_by_id(record.id)
    assert lane is not None
    return CreatedLane(lane, notes, seconds)


async def _undo(lanes: LanesRepo, repo: Path, record: LaneRecord, path: Path, made_branch: bool) -> None:
    """Remove what a failed :func:`create_lane` made: worktree, branch (only when it made it), row."""
    with contextlib.suppress(LaneError, OSError):
        if path.exists():
            await git("worktree", "remove", "--force", path, cwd=repo, check=False)
        await git("worktree", "prune", cwd=repo, check=False)
    with contextlib.suppress(LaneError):
        if made_branch:
            await git("branch", "-D", record.branch, cwd=repo, check=False)
    with contextlib.suppress(StoreError):
        await lanes.delete(record.id)
    remove_cache(path)


async def _name_taken(sessions: SessionsRepo, lane: LaneRecord) -> str:
    """Why lane ``lane.name`` cannot be made again: the session that holds it (never a suggestion to
    delete a live lane's branch)."""
    record = await sessions.get(lane.session_id) if lane.session_id else None
    if record is not None and record.state != "closed":
        return (
            f"the lane name {lane.name!r} is taken: session {record.name!r} works in it ({lane.path}); "
            "pick another name (`--lane=OTHER`), or open that session (/sessions)"
        )
    holder = f"closed session {record.name!r}" if record is not None else "no open session"
    return (
        f"the lane name {lane.name!r} is taken by a lane left from {holder} ({lane.path}): pick another "
        "name, or bring it back or remove it first (`paragents lanes list`, `paragents lanes gc`)"
    )


def lane_env(lane: LaneRecord) -> dict[str, str]:
    """The environment a lane's commands get: ``PARAGENTS_PORT`` (first of its block), ``PORT``,
    ``PARAGENTS_PORT_COUNT`` and ``PARAGENTS_LANE``."""
    return {
        "PARAGENTS_PORT": str(lane.port_base),
        "PORT": str(lane.port_base),
        "PARAGENTS_PORT_COUNT": str(lane.port_count),
        "PARAGENTS_LANE": lane.name,
    }
