"""A remote lane as the tools and the lane commands see it.

- :class:`LaneExecution` is the :class:`~paragents.tools.execution.Execution` facet a session in the
  lane gets in its ``ToolContext``: ``run_command``, the file tools and ``list_dir`` / ``glob`` /
  ``grep`` run through the lane's backend (:mod:`paragents.tools.remote`), each call through
  :meth:`RemoteLane.call` (a lane that does not answer fails the call at once with the reason, and
  its sessions pause).
- :class:`LaneCommands` is the :class:`~paragents.lanes.contained.LaneRunner` of the commands
  paragents itself runs in the lane (``lanes.verify``, ``/fanout --verify``, the setup commands):
  they run in the container/Pod, which is their sandbox, and the lane's files come back to its
  worktree here afterwards (so a verify result is bound to the tree it really ran on)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from paragents.backends.base import BackendError, BackendUnreachable, FileProblem
from paragents.backends.lane import RemoteLane
from paragents.models import CallPreview
from paragents.tools.execution import CommandRun, Entry, ExecutionError
from paragents.tools.remote import preview_remote, run_remote
from paragents.tools.result import ToolResult

T = TypeVar("T")


class LaneExecution:
    """The execution facet of one remote lane (see the module docstring)."""

    def __init__(self, lane: RemoteLane, root: Path, *, confined: bool = True) -> None:
        self.lane = lane
        self._root = root
        self.confined = confined
        """True when commands there have no network and no files of this machine (the container is
        their sandbox: ``sandbox.auto_allow`` applies to them)."""

    @property
    def root(self) -> Path:
        return self._root

    @property
    def where(self) -> str:
        return f"lane {self.lane.name}'s {self.lane.where}"

    @property
    def answering(self) -> bool:
        """False while the lane is unreachable (its sessions pause)."""
        return self.lane.ready

    @property
    def why(self) -> str:
        """Why the lane does not answer ("" while it does)."""
        return self.lane.detail

    async def wait_answering(self) -> None:
        await self.lane.wait_ready()

    async def run_tool(self, tool: Any, args: dict[str, Any], ctx: Any) -> ToolResult:
        return await run_remote(tool, args, ctx)

    async def preview_tool(self, tool: Any, args: dict[str, Any], ctx: Any) -> CallPreview | None:
        return await preview_remote(tool, args, ctx)

    async def _do(self, op: Callable[[], Awaitable[T]]) -> T:
        try:
            return await self.lane.call(op)
        except FileProblem as exc:
            raise ExecutionError(str(exc), exc.reason) from exc
        except BackendUnreachable as exc:
            raise ExecutionError(str(exc) or f"lane {self.lane.name} is unreachable", "unreachable") from exc
        except BackendError as exc:
            raise ExecutionError(str(exc)) from exc

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
        backend = self.lane.backend
        done = await self._do(
            lambda: backend.exec(
                command, cwd=cwd, env=env, timeout=timeout, on_output=on_output, max_output=max_output
            )
        )
        return CommandRun(done.code, done.timed_out, done.duration_s, done.missing_cwd)

    async def read(self, path: str, *, limit: int) -> bytes:
        return await self._do(lambda: self.lane.backend.read_file(path, limit=limit))

    async def write(self, path: str, data: bytes) -> None:
        await self._do(lambda: self.lane.backend.write_file(path, data))

    async def entries(self, path: str, *, depth: int = 0, skip: bool = True) -> list[Entry]:
        found = await self._do(lambda: self.lane.backend.list_tree(path, depth=depth, skip=skip))
        return [Entry(e.path, e.kind, e.mtime, e.size, e.target_kind, e.link) for e in found]

    async def contents(self, path: str, names: list[str], *, limit: int) -> dict[str, bytes]:
        return await self._do(lambda: self.lane.backend.read_files(path, names, limit=limit))

    async def refresh(self) -> None:
        try:
            await self.lane.sync()
        except BackendUnreachable as exc:
            raise ExecutionError(str(exc), "unreachable") from exc
        except BackendError as exc:
            raise ExecutionError(str(exc)) from exc


class LaneCommands:
    """The :class:`~paragents.lanes.contained.LaneRunner` of one remote lane (see the module
    docstring)."""

    def __init__(self, lane: RemoteLane) -> None:
        self.lane = lane

    @property
    def where(self) -> str:
        return f"lane {self.lane.name}'s {self.lane.where}"

    async def run(
        self,
        command: str,
        *,
        env: Mapping[str, str],
        timeout: float,
        on_output: Callable[[str], None],
    ) -> int | None:
        """Run ``command`` in the lane, each output line to ``on_output``; its exit code, None when it
        was stopped at ``timeout``. Raises BackendError (the lane does not answer: nothing ran)."""
        pending = [b""]

        def chunk(data: bytes) -> None:
            text = pending[0] + data
            *lines, pending[0] = text.split(b"\n")
            for line in lines:
                on_output(line.decode("utf-8", "replace"))

        backend = self.lane.backend
        done = await self.lane.call(
            lambda: backend.exec(command, env=env, timeout=timeout, on_output=chunk, max_output=1000)
        )
        if pending[0]:
            on_output(pending[0].decode("utf-8", "replace"))
        try:
            await self.lane.sync()  # the files it left come back: the caller compares the tree
        except BackendError as exc:
            on_output(f"(the lane's files could not be fetched after the command: {exc})")
        return None if done.timed_out else done.code


class UnopenedExecution:
    """The facet of a remote lane this process has not reached yet (after a restart, while its engine
    or cluster does not answer): every call fails at once with ``why()``, the session pauses until
    ``ready`` is set, and nothing ever runs on this machine instead."""

    def __init__(self, name: str, root: Path, why: Callable[[], str], ready: Any) -> None:
        self.name = name
        self._root = root
        self._why = why
        self.ready = ready
        self.confined = True

    @property
    def root(self) -> Path:
        return self._root

    @property
    def where(self) -> str:
        return f"lane {self.name} (not reached yet)"

    @property
    def answering(self) -> bool:
        return False

    @property
    def why(self) -> str:
        return self._why()

    async def wait_answering(self) -> None:
        await self.ready.wait()

    def _refuse(self) -> ExecutionError:
        return ExecutionError(self._why(), "unreachable")

    async def run_tool(self, tool: Any, args: dict[str, Any], ctx: Any) -> ToolResult:
        return await run_remote(tool, args, ctx)

    async def preview_tool(self, tool: Any, args: dict[str, Any], ctx: Any) -> CallPreview | None:
        return await preview_remote(tool, args, ctx)

    async def run(self, command: str, **_: Any) -> CommandRun:
        raise self._refuse()

    async def read(self, path: str, *, limit: int) -> bytes:
        raise self._refuse()

    async def write(self, path: str, data: bytes) -> None:
        raise self._refuse()

    async def entries(self, path: str, *, depth: int = 0, skip: bool = True) -> list[Entry]:
        raise self._refuse()

    async def contents(self, path: str, names: list[str], *, limit: int) -> dict[str, bytes]:
        raise self._refuse()

    async def refresh(self) -> None:
        raise self._refuse()
