"""The execution facet: where a session's tool calls run when that is not this machine.

A session working in a lane on a remote backend (a container, a Pod: docs/remote.md) gets an
:class:`Execution` in :attr:`paragents.tools.base.ToolContext.execution`; ``run_command``, the file
tools and ``list_dir`` / ``glob`` / ``grep`` then do their work through it (:mod:`paragents.tools.
remote`) instead of on this machine, with the same arguments, checks and output. None (every other
session) runs them here as always. The tools know only this protocol; ``paragents.backends.facet``
implements it over an :class:`~paragents.backends.base.ExecutionBackend`.

Paths given to it are relative to the lane's root (``src/app.py``, ``.``); :attr:`Execution.root`
is the path on this machine that root stands for (the lane's worktree, which mirrors its files), so
the permission policy, the conflict checker and the tools' messages keep using local paths."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from paragents.models import CallPreview
from paragents.tools.result import ToolResult

Reason = Literal["missing", "directory", "other", "unreachable", "error"]


class ExecutionError(Exception):
    """The lane could not do it. ``str(err)`` is one readable sentence for the model; ``reason`` says
    what kind of failure: ``missing`` / ``directory`` / ``other`` (the path is not what the call
    needs), ``unreachable`` (the lane's engine or cluster does not answer: the session pauses until it
    does), ``error`` (anything else)."""

    def __init__(self, message: str, reason: Reason = "error") -> None:
        super().__init__(message)
        self.reason: Reason = reason


@dataclass(frozen=True)
class Entry:
    """One entry below a listed directory: ``path`` (``/``-separated, relative to it), ``kind``
    (``f`` file, ``d`` directory, ``l`` symbolic link, ``o`` other), mtime, size, and for a link the
    kind of what it points to (``d``, ``f``, ...; ``N`` dangling) and its text."""

    path: str
    kind: str
    mtime: float = 0.0
    size: int = 0
    target_kind: str = ""
    link: str = ""

    @property
    def is_dir(self) -> bool:
        """A directory, or a link to one (as ``os.DirEntry.is_dir()`` answers)."""
        return self.kind == "d" or (self.kind == "l" and self.target_kind == "d")


@dataclass(frozen=True)
class CommandRun:
    """A finished command: its exit code (128+N when killed by signal N), whether it was stopped at
    its timeout, its wall time, and ``missing_cwd`` when its directory does not exist in the lane."""

    code: int
    timed_out: bool = False
    duration_s: float = 0.0
    missing_cwd: bool = False


class Execution(Protocol):
    """Where a session's tool calls run (see the module docstring). Every method raises
    :class:`ExecutionError`; none raises anything else but ``CancelledError``."""

    async def preview_tool(self, tool: Any, args: dict[str, Any], ctx: Any) -> CallPreview | None:
        """The ``CallPreview`` of the call (or None), computed from the lane's files:
        :func:`paragents.tools.remote.preview_remote`."""
        ...

    async def run_tool(self, tool: Any, args: dict[str, Any], ctx: Any) -> ToolResult:
        """Do the ``tool``'s call (a :class:`~paragents.tools.base.Tool`, its validated ``args``, its
        ``ToolContext``) here and return its ``ToolResult``: :func:`paragents.tools.remote.run_remote`
        (the tools call this, so they never import the module that imports them)."""
        ...

    @property
    def root(self) -> Path:
        """The path on this machine that stands for the lane's root (its worktree)."""
        ...

    @property
    def where(self) -> str:
        """Where the calls run, for people and the model: ``container paragents-3f2a-api``."""
        ...

    async def run(
        self,
        command: str,
        *,
        cwd: str,
        env: Mapping[str, str],
        timeout: float,
        on_output: Callable[[bytes], None],
        max_output: int,
    ) -> CommandRun:
        """Run ``bash -c command`` in the lane's directory ``cwd`` (stdin empty); pass its combined
        output to ``on_output`` as it comes; stop its process group at ``timeout`` (and when
        cancelled, re-raising CancelledError)."""
        ...

    async def read(self, path: str, *, limit: int) -> bytes:
        """The bytes of the lane's file ``path`` (ExecutionError ``missing`` / ``directory`` /
        ``other``, or ``error`` when larger than ``limit``)."""
        ...

    async def write(self, path: str, data: bytes) -> None:
        """Replace (or create, with its directories) the lane's file ``path``."""
        ...

    async def entries(self, path: str, *, depth: int = 0, skip: bool = True) -> list[Entry]:
        """What is below the lane's directory ``path`` (``depth`` levels, 0: all), with ``skip`` not
        listing ``.git``, ``node_modules`` and the other skipped folders below it (ExecutionError
        ``missing``, or ``other`` when it is not a directory)."""
        ...

    async def contents(self, path: str, names: list[str], *, limit: int) -> dict[str, bytes]:
        """The regular files ``names`` (relative to the lane's directory ``path``), at most ``limit``
        bytes in all: those past the limit, and names that are not regular files, are left out."""
        ...

    async def refresh(self) -> None:
        """Bring the lane's files into :attr:`root` now (a permission ask's preview reads them)."""
        ...

    @property
    def confined(self) -> bool:
        """True when commands there reach neither the network nor this machine's files (the
        container is their sandbox, so ``sandbox.auto_allow`` applies to them)."""
        ...

    @property
    def answering(self) -> bool:
        """False while the lane does not answer (its calls fail at once; its session pauses)."""
        ...

    @property
    def why(self) -> str:
        """Why it does not answer ("" while it does)."""
        ...

    async def wait_answering(self) -> None:
        """Return once it answers again (at once while it does)."""
        ...
