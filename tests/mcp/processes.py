"""An MCP server's process from the test's side: wait until it has exited, tell whether it is alive."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def wait_exited(pid: int) -> None:
    """Block until our child ``pid`` has exited (the kernel tells; it is left for asyncio to reap)."""
    with contextlib.suppress(ChildProcessError):  # asyncio reaped it already
        os.waitid(os.P_PID, pid, os.WEXITED | os.WNOWAIT)


def alive(pid: int) -> bool:
    """True while ``pid`` runs (it exists and is not a zombie)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return Path(f"/proc/{pid}").exists() and "zombie" not in Path(f"/proc/{pid}/status").read_text()
