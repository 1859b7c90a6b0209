"""The execution backend contract: where a lane's commands and files live (docs/remote.md).

The agent loop, the store, the permission decision, approvals, budgets and conflict prediction stay in
the user's paragents process; an :class:`ExecutionBackend` is only *where* a lane's tool calls run:
commands (streamed output, exit code, timeout, cancel), file reads, writes and listings, and a
snapshot of the lane's tree as a git commit in the user's repository. One backend object serves one
lane. Implementations: ``local`` (the worktree + bubblewrap, :mod:`paragents.backends.local`),
``container`` (Docker Engine API, :mod:`paragents.backends.container`) and ``kubernetes`` (a Pod per
lane, :mod:`paragents.backends.kubernetes`).

Paths given to the file methods are relative to the lane's root (``src/app.py``); absolute paths and
``..`` components are refused (:func:`paragents.backends.paths.lane_relative`)."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol, runtime_checkable

BackendKind = Literal["local", "container", "kubernetes"]
"""The backends there are (``lanes.backend`` in the config)."""

HealthState = Literal["running", "stopped", "missing", "unreachable"]
"""``running``: commands can run; ``stopped``: the container/Pod exists but does not run (it can be
started again with its files); ``missing``: it is gone (deleted or evicted: recreate it from the last
fetched snapshot); ``unreachable``: the engine or cluster does not answer."""

OutputSink = Callable[[bytes], None]
"""Called with each chunk of a command's combined stdout and stderr as it arrives."""

SNAPSHOT_REF = "refs/paragents/remote/{name}/snapshot"
"""Where a lane's last fetched snapshot lives in the user's repository (with a reflog: older
snapshots stay reachable from it)."""
BASE_REF = "refs/paragents/remote/{name}/base"
"""The lane's base commit, as a ref of the user's repository (what the base bundle carries)."""


class BackendError(Exception):
    """A backend operation failed; ``str(err)`` says what, where, and what to do."""


class BackendUnreachable(BackendError):
    """The engine or cluster did not answer (a lost connection, a stopped daemon, a timeout). The lane
    is "unreachable": its tool calls fail with this message and its fetched snapshots are kept."""


class FileProblem(BackendError):
    """A lane's path is not what the file method needs: ``reason`` is ``missing`` (it does not exist),
    ``directory`` (it is one) or ``other`` (a device, a socket, not a directory where one is needed)."""

    def __init__(self, message: str, reason: Literal["missing", "directory", "other"]) -> None:
        super().__init__(message)
        self.reason = reason


class LaneGone(BackendError):
    """The lane's container or Pod no longer exists (deleted, evicted): :meth:`ExecutionBackend.recover`
    recreates it from the last fetched snapshot."""


@dataclass(frozen=True)
class LaneSpec:
    """What a backend needs to know about its lane.

    - ``repo``: the user's repository (main checkout top level): snapshots are fetched into it.
    - ``name``: the lane's name (``paragents/<name>`` is its branch).
    - ``base_commit``: the commit the lane starts from.
    - ``worktree``: the lane's git worktree on this machine (the ``local`` backend runs there).
    - ``env``: the lane's own environment for commands (``PARAGENTS_PORT``, ``PORT``, ...).
    """

    repo: Path
    name: str
    base_commit: str
    worktree: Path | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    @property
    def branch(self) -> str:
        return f"paragents/{self.name}"

    @property
    def snapshot_ref(self) -> str:
        return SNAPSHOT_REF.format(name=self.name)

    @property
    def base_ref(self) -> str:
        return BASE_REF.format(name=self.name)


@dataclass(frozen=True)
class Placement:
    """What one lane's place gets beyond the config (``paragents eval`` asks it for a trial's lane):
    its ``image`` (None: ``lanes.image`` or the devcontainer), ``aliases``, absolute paths where the
    lane's workspace also appears (a Harbor task's ``/app``), and ``empty_dirs``, absolute paths of
    empty directories the lane's user may write (a Pod's ``/tests`` and ``/logs``). A container makes
    an alias a symbolic link to the workspace (replacing what its image has there) and an empty
    directory through the archive API; a Pod mounts its workspace volume again at each alias and an
    ``emptyDir`` at each empty directory."""

    image: str | None = None
    aliases: tuple[str, ...] = ()
    empty_dirs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for path in (*self.aliases, *self.empty_dirs):
            check_place_path(path)


KERNEL_DIRS = frozenset({"workspace", "tmp", "proc", "dev", "sys"})
"""Top-level directories nothing of a :class:`Placement` may be in (the lane's own, the kernel's)."""
SYSTEM_DIRS = frozenset({"bin", "sbin", "lib", "lib32", "lib64", "libx32", "usr", "etc", "var", "run",
                         "boot", "root", "home", "opt", "srv", "mnt", "media"})  # fmt: skip
"""Top-level directories a :class:`Placement` path may be below but not be."""


def check_place_path(path: str) -> str:
    """``path`` when a :class:`Placement` may use it: absolute, normalised, not ``/``, not in one of
    :data:`KERNEL_DIRS` and not one of :data:`SYSTEM_DIRS` itself; else BackendError naming it."""
    parts = path.split("/")
    if (
        not path.startswith("/")
        or posixpath.normpath(path) != path
        or path == "/"
        or any(not p or p in (".", "..") for p in parts[1:])
        or parts[1] in KERNEL_DIRS
        or (len(parts) == 2 and parts[1] in SYSTEM_DIRS)
    ):
        raise BackendError(
            f"{path!r} cannot be a path of a lane's place: give an absolute path, not / nor a top-level "
            f"system directory, and nothing in /{', /'.join(sorted(KERNEL_DIRS))}"
        )
    return path


@dataclass(frozen=True)
class ExecResult:
    """A finished command: exit code (128+N when killed by signal N remotely; -N locally), its combined
    output as clean text capped to ``max_output`` characters (head and tail kept), whether it timed
    out, its wall time and how many bytes it printed."""

    code: int
    output: str
    timed_out: bool = False
    duration_s: float = 0.0
    output_bytes: int = 0
    missing_cwd: bool = False
    """True when ``cwd`` is not a directory in the lane (exit 125; the command did not run)."""

    @property
    def ok(self) -> bool:
        return self.code == 0 and not self.timed_out


@dataclass(frozen=True)
class DirEntry:
    """One entry of :meth:`ExecutionBackend.list_dir`: its name and kind (``f`` file, ``d`` directory,
    ``l`` symbolic link, ``o`` other)."""

    name: str
    kind: Literal["f", "d", "l", "o"]


@dataclass(frozen=True)
class TreeEntry:
    """One entry of :meth:`ExecutionBackend.list_tree`: its path below the listed directory (``/``
    separated), its kind and, for a symbolic link, its target's kind (``f``, ``d``, ``l`` or ``o``;
    ``n`` a dangling link) and text, its mtime (seconds) and size (bytes)."""

    path: str
    kind: Literal["f", "d", "l", "o"]
    mtime: float = 0.0
    size: int = 0
    target_kind: str = ""
    link: str = ""


@dataclass(frozen=True)
class Usage:
    """What a lane's place uses now, for the overview: CPU (percent of one core), memory (bytes) and
    its limit (0: none), and processes; None where the engine does not say."""

    cpu_percent: float | None = None
    memory: int | None = None
    memory_limit: int = 0
    pids: int | None = None

    def describe(self) -> str:
        """``cpu 12% · mem 210 MiB / 4.0 GiB · 7 procs`` (parts the engine did not give left out)."""
        parts = []
        if self.cpu_percent is not None:
            parts.append(f"cpu {self.cpu_percent:.0f}%")
        if self.memory is not None:
            limit = f" / {self.memory_limit / 1024**3:.1f} GiB" if self.memory_limit else ""
            parts.append(f"mem {self.memory / 1024**2:.0f} MiB{limit}")
        if self.pids is not None:
            parts.append(f"{self.pids} procs")
        return " · ".join(parts) or "no usage figures"


@dataclass(frozen=True)
class Snapshot:
    """A lane's tree as a commit in the user's repository (fetched, so it survives the lane).

    ``commit``'s tree is the lane's files (tracked and untracked, not ignored ones) and its parent is
    the lane's ``head`` (its own commits); ``changed`` is False when it equals the previous snapshot;
    ``transferred`` counts the bundle bytes that came back (0 for the local backend)."""

    commit: str
    head: str
    tree: str
    ref: str
    changed: bool = True
    transferred: int = 0


@dataclass(frozen=True)
class Health:
    """Whether the lane's place answers (``state``) and a sentence for people (``detail``)."""

    state: HealthState
    detail: str

    @property
    def reachable(self) -> bool:
        return self.state != "unreachable"


@runtime_checkable
class ExecutionBackend(Protocol):
    """Where one lane's tool calls run. Every method may raise :class:`BackendUnreachable` (the engine
    or cluster does not answer) or :class:`LaneGone` (its container/Pod was deleted)."""

    spec: LaneSpec

    @property
    def kind(self) -> BackendKind:
        """``local``, ``container`` or ``kubernetes``."""
        ...

    @property
    def where(self) -> str:
        """A short plain description for people: ``local``, ``container 3f2a… (docker unix://…)``."""
        ...

    async def create(self) -> None:
        """Make the lane's place from ``spec.base_commit`` (or, when a snapshot was fetched before,
        from that snapshot). Idempotent: an existing place is reused."""
        ...

    async def recover(self) -> str | None:
        """Make a ``stopped`` or ``missing`` place run again (a missing one is recreated from the last
        fetched snapshot); return a note for people, or None when nothing was needed."""
        ...

    async def destroy(self, *, force: bool = False) -> Snapshot | None:
        """Fetch a last snapshot, then remove the place; return that snapshot. Without ``force`` an
        unreachable place is not removed (its unfetched work would be lost): BackendUnreachable."""
        ...

    async def health(self) -> Health:
        """Whether the place runs, is stopped, is gone, or does not answer (never raises)."""
        ...

    async def exec(
        self,
        command: str,
        *,
        cwd: str = ".",
        env: Mapping[str, str] | None = None,
        timeout: float = 120.0,
        on_output: OutputSink | None = None,
        max_output: int = 30000,
    ) -> ExecResult:
        """Run ``bash -c command`` in the lane's subdirectory ``cwd`` with stdin empty; stream output
        to ``on_output``. At ``timeout`` the command's process group is stopped (TERM, then KILL) and
        ``timed_out`` set; a cancelled call stops it the same way and re-raises CancelledError."""
        ...

    async def read_file(self, path: str, *, limit: int = 10_000_000) -> bytes:
        """The bytes of the lane's file ``path`` (BackendError when missing or larger than ``limit``)."""
        ...

    async def write_file(self, path: str, data: bytes) -> None:
        """Replace (or create, with its directories) the lane's file ``path`` with ``data``."""
        ...

    async def list_dir(self, path: str = ".") -> list[DirEntry]:
        """The entries of the lane's directory ``path``, sorted by name."""
        ...

    async def list_tree(
        self, path: str = ".", *, depth: int = 0, limit: int = 200_000, skip: bool = True
    ) -> list[TreeEntry]:
        """Every entry below the lane's directory ``path`` (``depth`` levels, 0: all), with ``skip``
        not listing the directories :data:`~paragents.backends.scripts.SKIP_DIRS` below it, at most
        ``limit``; FileProblem when ``path`` is missing or not a directory."""
        ...

    async def read_files(self, path: str, names: list[str], *, limit: int) -> dict[str, bytes]:
        """The contents of the regular files ``names`` below the lane's directory ``path``, at most
        ``limit`` bytes in all (files past it are left out, as are names that are not regular files)."""
        ...

    async def snapshot(self, *, known: list[str] | None = None) -> Snapshot:
        """Commit the lane's tree and fetch it into ``spec.repo`` at ``spec.snapshot_ref``
        (``known``: the commits of the lane this machine has, its base and last snapshot, when the
        caller just read them)."""
        ...

    async def adopt(self, ref: str, expect_tree: str) -> None:
        """Make the lane take what was done to it on this machine: ``ref`` (in ``spec.repo``) names a
        commit whose tree is the lane's new files and whose parent its branch's new head. Done only
        while the lane's files are still ``expect_tree`` (or already that tree): else BackendError and
        nothing changes (:mod:`paragents.backends.mirror`)."""
        ...

    async def usage(self) -> Usage:
        """What the place uses now (CPU, memory, processes), as far as the engine says."""
        ...

    async def close(self) -> None:
        """Release client connections (the place itself stays)."""
        ...
