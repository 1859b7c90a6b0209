"""The backend of a stored lane, and :class:`BackendPlaces`: the lane commands' view of remote lanes
(:class:`paragents.lanes.places.RemotePlaces`: fetch a lane's work into its worktree, run paragents'
own commands in its place, remove its container/Pod after a last fetch).

A process that runs sessions in remote lanes keeps them open (:class:`RemoteLane` objects, given
through ``live``); other remote lanes (``paragents lanes gc`` from a shell, a lane whose session is
closed) are opened here for the one operation and closed again."""

from __future__ import annotations

import contextlib
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import cast

from paragents.backend_settings import BackendName
from paragents.backends.base import BackendError, BackendKind, ExecutionBackend, LaneSpec, Placement
from paragents.backends.facet import LaneCommands
from paragents.backends.factory import open_backend
from paragents.backends.lane import RemoteLane
from paragents.backends.mirror import mirror_dir
from paragents.config import LaneSettings
from paragents.lanes.contained import LaneRunner
from paragents.lanes.create import lane_env
from paragents.lanes.errors import LaneError
from paragents.store import LaneRecord

KINDS: dict[str, BackendName] = {"local": "local", "container": "container", "docker": "container",
                                 "kubernetes": "kubernetes", "k8s": "kubernetes"}  # fmt: skip
"""What ``--on`` accepts, and the backend each names."""


def backend_kind(text: str) -> BackendName:
    """The backend ``--on TEXT`` names; ValueError listing the choices."""
    try:
        return KINDS[text.strip().lower()]
    except KeyError:
        raise ValueError(f"--on {text!r}: use local, container (or docker) or k8s (kubernetes)") from None


def lane_spec(lane: LaneRecord) -> LaneSpec:
    """The backend's view of a stored lane (its repository, name, base, worktree and ports)."""
    return LaneSpec(Path(lane.repo), lane.name, lane.base_commit, Path(lane.path), lane_env(lane))


async def backend_of(
    lane: LaneRecord, settings: LaneSettings, placement: Placement | None = None
) -> ExecutionBackend:
    """The backend of ``lane`` from the config and its ``placement`` (not created: see
    :meth:`ExecutionBackend.create`)."""
    return await open_backend(
        cast(BackendKind, lane.backend),
        lane_spec(lane),
        image=settings.image,
        container=settings.container,
        kubernetes=settings.kubernetes,
        placement=placement,
    )


class BackendPlaces:
    """:class:`paragents.lanes.places.RemotePlaces` over the backends (see the module docstring)."""

    def __init__(
        self, settings: Callable[[], LaneSettings], live: Callable[[str, str], RemoteLane | None]
    ) -> None:
        self.settings = settings
        self.live = live
        """(repository, lane name) -> the open RemoteLane of this process, or None."""

    async def _open(self, lane: LaneRecord) -> tuple[RemoteLane, bool]:
        found = self.live(lane.repo, lane.name)
        if found is not None:
            return found, False
        try:
            backend = await backend_of(lane, self.settings())
        except BackendError as exc:
            raise LaneError(f"lane {lane.name}: {exc}") from exc
        return RemoteLane(backend, Path(lane.path)), True

    async def fetch(self, lane: LaneRecord) -> None:
        remote, opened = await self._open(lane)
        try:
            await remote.sync()
        except BackendError as exc:
            raise LaneError(
                f"lane {lane.name}'s work cannot be fetched from its {remote.where}: {exc}"
            ) from exc
        finally:
            if opened:
                await remote.close()

    def runner(self, lane: LaneRecord) -> LaneRunner:
        found = self.live(lane.repo, lane.name)
        if found is not None:
            return LaneCommands(found)
        return _OpeningRunner(self, lane)

    async def remove(self, lane: LaneRecord, *, force: bool) -> None:
        remote, opened = await self._open(lane)
        try:
            await remote.discard(force=force)  # its work comes here first: nothing of it is lost
        except BackendError as exc:
            raise LaneError(
                f"lane {lane.name}'s {remote.where} was not removed: its work could not be fetched first "
                f"({exc}); try again when it answers"
            ) from exc
        finally:
            if opened:
                await remote.close()
        with contextlib.suppress(OSError):
            shutil.rmtree(mirror_dir(Path(lane.path)))


class _OpeningRunner:
    """A runner for a remote lane this process does not keep open: opens it for the command."""

    def __init__(self, places: BackendPlaces, lane: LaneRecord) -> None:
        self.places = places
        self.lane = lane

    @property
    def where(self) -> str:
        return f"lane {self.lane.name}'s {self.lane.backend}"

    async def run(
        self, command: str, *, env: object, timeout: float, on_output: Callable[[str], None]
    ) -> int | None:
        remote, opened = await self.places._open(self.lane)
        try:
            return await LaneCommands(remote).run(command, env=env, timeout=timeout, on_output=on_output)  # type: ignore[arg-type]
        finally:
            if opened:
                await remote.close()
