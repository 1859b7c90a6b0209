"""Where a lane executes (docs/remote.md): ``local`` (a worktree + bubblewrap), ``container`` (Docker
Engine API) or ``kubernetes`` (a Pod per lane), all behind :class:`ExecutionBackend`. Core code:
never imports textual; the client libraries (aiodocker, kr8s) load only when such a lane is opened."""

from paragents.backends.base import (
    BackendError,
    BackendKind,
    BackendUnreachable,
    DirEntry,
    ExecResult,
    ExecutionBackend,
    Health,
    LaneGone,
    LaneSpec,
    Snapshot,
)
from paragents.backends.factory import open_backend

__all__ = [
    "BackendError",
    "BackendKind",
    "BackendUnreachable",
    "DirEntry",
    "ExecResult",
    "ExecutionBackend",
    "Health",
    "LaneGone",
    "LaneSpec",
    "Snapshot",
    "open_backend",
]
