"""The agent's subprocess: started in its own process group (so its children go with it), its stderr
kept (the last lines, shown when it fails), and stopped with the whole group: at close, at shutdown,
and at interpreter exit for any still running. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
from collections import deque
from collections.abc import Mapping
from pathlib import Path

STDERR_LINES = 40
"""Lines of the agent's stderr kept to show when it fails."""
STOP_GRACE = 2.0
"""Seconds an agent gets after SIGTERM before its process group is killed."""
STREAM_LIMIT = 50 * 1024 * 1024
"""Longest JSON-RPC line read from the agent (the SDK's default: 50 MB)."""

_LIVE: set[int] = set()
"""Process group ids of agents still running (killed at interpreter exit)."""


def _kill_all() -> None:
    for pgid in list(_LIVE):
        with contextlib.suppress(OSError):
            os.killpg(pgid, signal.SIGKILL)


atexit.register(_kill_all)


class AgentProcess:
    """One running agent program (see the module docstring). ``stdin``/``stdout`` carry JSON-RPC."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self.stderr: deque[str] = deque(maxlen=STDERR_LINES)
        self._stderr_task = asyncio.create_task(self._read_stderr())
        _LIVE.add(process.pid)

    @classmethod
    async def start(cls, argv: list[str], *, cwd: Path, env: Mapping[str, str]) -> AgentProcess:
        """Start ``argv`` in ``cwd`` with ``env`` over this process's environment, in a new session
        (its own process group). Raises OSError when it cannot be started."""
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=str(cwd),
            env={**os.environ, **env},
            start_new_session=True,
            limit=STREAM_LIMIT,
        )
        return cls(process)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    async def _read_stderr(self) -> None:
        stream = self.process.stderr
        if stream is None:
            return
        with contextlib.suppress(Exception):
            while line := await stream.readline():
                self.stderr.append(line.decode("utf-8", errors="replace").rstrip("\n"))

    async def exited(self) -> int:
        """Wait for the program to exit and its stderr to be read; return its exit code."""
        code = await self.process.wait()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(asyncio.shield(self._stderr_task), 1.0)
        _LIVE.discard(self.process.pid)
        return code

    def stderr_text(self) -> str:
        """The last lines the agent wrote to stderr."""
        return "\n".join(self.stderr)

    async def stop(self) -> int | None:
        """Close its stdin, then SIGTERM and (after :data:`STOP_GRACE` s) SIGKILL its process group."""
        stdin = self.process.stdin
        if stdin is not None:
            with contextlib.suppress(Exception):
                stdin.close()
        if self.process.returncode is None:
            with contextlib.suppress(OSError):
                os.killpg(self.process.pid, signal.SIGTERM)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.process.wait(), STOP_GRACE)
        with contextlib.suppress(OSError):  # children left in the group go too
            os.killpg(self.process.pid, signal.SIGKILL)
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.process.wait(), STOP_GRACE)
        _LIVE.discard(self.process.pid)
        self._stderr_task.cancel()
        return self.process.returncode
