"""Lanes whose files live in a container or a Pod (``lanes.backend``, docs/remote.md), as the lane
commands see them: a :class:`RemotePlaces` fetches such a lane's work into its worktree here before
git looks at it, runs paragents' own commands there, and removes its container/Pod with it.

The lanes layer knows only this protocol; ``paragents.backends.places.BackendPlaces`` implements it
and whoever opens remote lanes installs it (:func:`use_places`: the runtime, ``paragents lanes``).
Without one, a remote lane is refused with a message rather than treated as local."""

from __future__ import annotations

from typing import Protocol

from paragents.lanes.contained import LaneRunner
from paragents.lanes.errors import LaneError
from paragents.store import LaneRecord


class RemotePlaces(Protocol):
    """See the module docstring. Every method raises :class:`LaneError` with a readable reason."""

    async def fetch(self, lane: LaneRecord) -> None:
        """Bring the lane's work (commits and files) into its worktree here; LaneError when its
        place does not answer (what it did since the last fetch cannot be seen)."""
        ...

    def runner(self, lane: LaneRecord) -> LaneRunner:
        """Where paragents' own commands for the lane run (its container or Pod)."""
        ...

    async def remove(self, lane: LaneRecord, *, force: bool) -> None:
        """Remove the lane's container or Pod, after fetching its work one last time (without
        ``force``, refused when that fetch fails)."""
        ...


_active: RemotePlaces | None = None


def use_places(places: RemotePlaces | None) -> None:
    """Install the remote places of this process (None: none)."""
    global _active
    _active = places


def places_for(lane: LaneRecord) -> RemotePlaces:
    """The remote places serving ``lane`` (a remote one); LaneError when this process has none."""
    if _active is None:
        raise LaneError(
            f"lane {lane.name} runs on {lane.backend}, which this command cannot reach: run it from "
            "paragents (the TUI, `paragents run`) or `paragents lanes`"
        )
    return _active


async def fetch_if_remote(lane: LaneRecord) -> None:
    """Fetch a remote lane's work into its worktree (nothing for a local lane)."""
    if lane.remote:
        await places_for(lane).fetch(lane)
