"""Trials in containers and Pods (``eval run --on container|k8s``; docs/eval.md, "Trials in containers
and Pods"): :class:`PlacedBackend`.

A trial's session opens in a lane with ``--on`` exactly as ``/new --lane --on`` opens one (the
session layer creates the container or Pod, the agent's tool calls run there, the worktree here
mirrors it); the eval only gives the lane its :class:`~paragents.backends.base.Placement` first (the
task's image, its working directory as an alias of the workspace: :mod:`paragents.eval.environment`).
When the agent stopped, the lane's work is fetched here (its diff is the evidence), and only then are
the hidden tests copied into the container or Pod and run there, from the task's working directory:

- **container**: the tests go in through the Engine API's archive endpoint, owned by root and
  read-only (``/tests``: directories 0555, files 0444 or 0555), ``/logs`` owned by the lane's user;
  after the run ``/logs`` comes back through the same endpoint (read as it streams, capped; only
  regular files and directories are written here, below the trial's folder);
- **Pod**: its ``/tests`` and ``/logs`` are ``emptyDir`` volumes; the lane's user unpacks the tests
  into the first (then ``chmod -R a-w``: a courtesy, not a boundary, since that user owns them) and
  packs the second back.

Then the lane is discarded: its container or Pod removed, its worktree and record deleted. A task
:func:`~paragents.eval.environment.place_tasks` left local, and an external agent's trial (ACP agents
always run in a local lane), run as :class:`~paragents.eval.backend.LocalBackend` runs them.
Nothing here imports Textual."""

from __future__ import annotations

import contextlib
import io
import os
import posixpath
import shlex
import shutil
import tarfile
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents.backends.base import BackendError, FileProblem, Placement
from paragents.backends.mirror import mirror_dir
from paragents.config import LaneSettings
from paragents.eval.backend import LocalBackend, Opening, TrialLane
from paragents.eval.environment import place_tasks
from paragents.eval.errors import EvalError
from paragents.eval.images import EngineImages
from paragents.eval.sandbox import TAIL_CHARS, CommandResult, Mount
from paragents.eval.tasks import Task, TaskSet
from paragents.lanes.repo import project_hash

if TYPE_CHECKING:
    from paragents.backends.lane import RemoteLane
    from paragents.sessions.api import SessionsAPI
    from paragents.store.lanes import LanesRepo

MAX_LOGS_BYTES = 32 * 1024 * 1024
"""At most this much of a trial's ``/logs`` comes back; past it only the reward files do."""
MAX_REWARD_BYTES = 1024 * 1024
REWARDS = ("verifier/reward.txt", "verifier/reward.json")
VERIFY_ENV = {"PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1", "TMPDIR": "/tmp"}
"""Set for the hidden tests in a container or Pod (no user site-packages the agent could have planted
under its HOME, /tmp)."""


class PlacedBackend(LocalBackend):
    """See the module docstring; ``on`` is ``container`` or ``k8s``, ``lanes`` the lane settings of
    the run (the engine or cluster, ``lanes.image``)."""

    def __init__(self, on: str, lanes: LaneSettings) -> None:
        super().__init__()
        self.name = on
        self.on = on
        self.lanes = lanes
        self.placements: dict[str, Placement | None] = {}
        """Task id -> its placement (None: a local lane)."""

    @property
    def needs_sandbox(self) -> bool:
        return any(p is None for p in self.placements.values())

    async def prepare(self, tasks: TaskSet) -> TaskSet:
        placed, self.placements = await place_tasks(tasks, self.on, self.lanes)
        return placed

    async def open(self, rt: SessionsAPI, opening: Opening) -> TrialLane:
        placement = self.placements.get(opening.task_id)
        if placement is None or opening.agent is not None:
            return await super().open(rt, opening)
        return await self._open(rt, opening, (self.on, placement))

    async def settle(self, lane: TrialLane) -> None:
        if lane.place is None:
            return
        try:
            await lane.place.sync()
        except BackendError as exc:
            raise EvalError(
                f"trial {lane.name}: its work could not be fetched from {lane.place.where}: {exc}"
            ) from None

    async def apply_patch(self, lane: TrialLane, patch: str) -> str | None:
        if lane.place is None:
            return await super().apply_patch(lane, patch)
        name = ".paragents-hidden-tests.patch"
        line = (
            f"git -c core.hooksPath=/dev/null apply --whitespace=nowarn {name}; c=$?; rm -f {name}; exit $c"
        )
        backend = lane.place.backend
        try:
            await lane.place.call(lambda: backend.write_file(name, patch.encode("utf-8")))
            done = await lane.place.call(lambda: backend.exec(line, timeout=120))
        except BackendError as exc:
            return str(exc)
        return None if done.ok else done.output

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
        if lane.place is None:
            return await super().run(
                lane, task, command, mounts=mounts, env=env, timeout=timeout, network=network
            )
        place = lane.place
        try:
            for mount in mounts:
                await self._put(place, mount)
            line = f"cd {shlex.quote(task.workdir)} && {command}"
            done = await place.call(
                lambda: place.backend.exec(
                    line, env={**VERIFY_ENV, **env}, timeout=timeout, max_output=TAIL_CHARS
                )
            )
            for mount in mounts:
                if mount.writable:
                    await self._get(place, mount)
        except BackendError as exc:
            raise EvalError(f"the hidden tests could not run in {place.where}: {exc}") from None
        return CommandResult(
            None if done.timed_out else done.code,
            done.output[-TAIL_CHARS:]
            if not done.timed_out
            else f"stopped after {timeout:g} s\n{done.output[-2000:]}",
            done.duration_s,
            timed_out=done.timed_out,
        )

    async def _put(self, place: RemoteLane, mount: Mount) -> None:
        """Copy the host folder ``mount.source`` to ``mount.target`` in the lane's place (see the
        module docstring: read-only unless ``writable``)."""
        backend: Any = place.backend
        if self.on == "container":
            owner = (0, 0) if not mount.writable else _uid_gid(backend.settings.user)
            data = tree_tar(mount.source, mount.target.lstrip("/"), owner, read_only=not mount.writable)
            await place.call(lambda: backend.put_archive(data))
            return
        target = shlex.quote(mount.target)
        clear = f"chmod -R u+w {target} 2>/dev/null; find {target} -mindepth 1 -delete"
        cleared = await place.call(lambda: backend.exec(clear, timeout=60))
        if not cleared.ok:
            raise BackendError(f"{mount.target} could not be emptied: {cleared.output[-300:]}")
        data = tree_tar(mount.source, "", None, read_only=not mount.writable)
        await place.call(lambda: backend.put_tree(mount.target, data))
        if not mount.writable:
            await place.call(lambda: backend.exec(f"chmod -R a-w {target}", timeout=60))

    async def _get(self, place: RemoteLane, mount: Mount) -> None:
        """Copy ``mount.target`` of the lane's place back into the host folder ``mount.source``: all
        of it up to :data:`MAX_LOGS_BYTES`, else only the reward files."""
        backend: Any = place.backend
        if self.on == "container":
            try:
                data = await place.call(lambda: backend.get_archive(mount.target, limit=MAX_LOGS_BYTES))
            except FileProblem:  # the tests removed it: no reward, said by the verdict
                return
            if data is not None:
                write_tree(data, mount.source, strip=posixpath.basename(mount.target))
                return
            for rel in REWARDS:
                path = f"{mount.target}/{rel}"
                with contextlib.suppress(BackendError):
                    one = await place.call(partial(backend.get_archive, path, limit=MAX_REWARD_BYTES))
                    if one is not None:
                        write_tree(one, mount.source / posixpath.dirname(rel), strip=None)
            return
        data = await place.call(lambda: backend.get_tree(mount.target, limit=MAX_LOGS_BYTES))
        if data is not None:
            write_tree(data, mount.source, strip=".")

    async def discard(self, rt: SessionsAPI, lanes: LanesRepo, repo: Path, lane: TrialLane) -> None:
        if lane.place is not None:
            with contextlib.suppress(BackendError):
                await lane.place.backend.destroy(force=True)
            rt.lanes.place_lane(lane.name, None)

            with contextlib.suppress(OSError):
                shutil.rmtree(mirror_dir(lane.path))
        await super().discard(rt, lanes, repo, lane)

    async def finish(self, repo: Path) -> None:
        await super().finish(repo)
        if self.on != "container":
            return
        # deferred: aiodocker loads for container runs only
        from paragents.backends.container import REPO_LABEL

        with contextlib.suppress(EvalError):  # what a stopped run left (each trial removes its own)
            async with EngineImages(self.lanes.container) as engine:
                await engine.sweep(REPO_LABEL, project_hash(repo))


def _uid_gid(user: str) -> tuple[int, int]:
    uid, _, gid = user.partition(":")
    owner = int(uid) if uid.isdigit() else 1000
    return owner, int(gid) if gid.isdigit() else owner


def tree_tar(source: Path, prefix: str, owner: tuple[int, int] | None, *, read_only: bool) -> bytes:
    """The host folder ``source`` as a tar whose entries are below ``prefix`` ("": at its top): regular
    files and directories only (symbolic links left out), owned by ``owner`` (None: no owner), modes
    read-only (directories 0555, files 0444, 0555 when executable) or writable by their owner."""
    buf = io.BytesIO()
    uid, gid = owner or (0, 0)

    def add(rel: str, path: Path) -> None:
        name = posixpath.join(prefix, rel) if prefix else (rel or ".")
        info = tarfile.TarInfo(name)
        info.uid, info.gid, info.mtime = uid, gid, 0
        executable = bool(path.stat().st_mode & 0o111)
        if path.is_dir():
            info.type = tarfile.DIRTYPE
            info.mode = 0o555 if read_only else 0o755
            tar.addfile(info)
            return
        body = path.read_bytes()
        info.size = len(body)
        info.mode = (0o555 if executable else 0o444) if read_only else (0o755 if executable else 0o644)
        tar.addfile(info, io.BytesIO(body))

    with tarfile.open(fileobj=buf, mode="w") as tar:
        add("", source)
        for path in sorted(source.rglob("*")):
            if path.is_symlink() or not (path.is_dir() or path.is_file()):
                continue
            add(path.relative_to(source).as_posix(), path)
    return buf.getvalue()


def write_tree(data: bytes, dest: Path, *, strip: str | None) -> None:
    """Write the regular files and directories of the tar ``data`` below ``dest`` (a folder of ours),
    their names without the first component ``strip`` (None: as they are). Nothing else is made: no
    link, device or name leaving ``dest``, so what the tests wrote cannot reach past the trial's
    folder (only this function writes below it: no link can be there); a file is replaced, never
    followed (``O_NOFOLLOW``)."""
    dest.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(data), mode="r:") as tar:
        for member in tar:
            name = posixpath.normpath(member.name)
            if strip is not None:
                if name == strip:
                    continue
                if strip != "." and not name.startswith(strip + "/"):
                    continue
                name = name if strip == "." else name[len(strip) + 1 :]
            parts = name.split("/")
            if not name or name == "." or name.startswith("/") or ".." in parts:
                continue
            target = dest.joinpath(*parts)
            if member.isdir():
                if not target.is_symlink():
                    target.mkdir(parents=True, exist_ok=True)
                continue
            if not member.isfile():
                continue
            handle = tar.extractfile(member)
            if handle is None:
                continue
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
            with os.fdopen(fd, "wb") as out:
                shutil.copyfileobj(handle, out)
