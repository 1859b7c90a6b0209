"""Which trial backend ``--on`` names: a local lane, a container or a Pod."""

from __future__ import annotations

from paragents.config import LaneSettings
from paragents.eval.backend import BACKENDS, LocalBackend, TrialBackend
from paragents.eval.errors import EvalError
from paragents.eval.remote import PlacedBackend


def backend_for(on: str, lanes: LaneSettings | None = None) -> TrialBackend:
    """The backend ``--on`` names (``lanes``: the lane settings of a container or Pod run: its image,
    engine or cluster); EvalError (exit 2) for an unknown one."""
    if on == "local":
        return LocalBackend()
    if on in ("container", "k8s"):
        return PlacedBackend(on, lanes or LaneSettings())
    raise EvalError(f"--on {on}: unknown backend (use {', '.join(BACKENDS)})")
