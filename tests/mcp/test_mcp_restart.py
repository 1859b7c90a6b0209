"""A stdio server whose connection ended is started again by the next call, even when the pool's owner
task has not noticed the end yet (on a loaded machine the exit status and the end of stdout come in
late, and a call sent to the dead connection failed with ClosedResourceError or "call the tool again").
The pool is used directly, with the demo server as a real subprocess."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

from paragents.config import McpSettings
from paragents.mcp import McpPool, SessionMcp
from paragents.tools.base import ToolContext
from tests.mcp.conftest import demo_stdio
from tests.mcp.processes import alive, wait_exited
from tests.patience import HANG_GUARD_S


async def started(tmp_path: Path) -> tuple[McpPool, SessionMcp]:
    pool = McpPool(
        tmp_path, McpSettings.model_validate({"servers": {"demo": demo_stdio()}}), log_dir=tmp_path
    )
    mine = pool.for_session("s1")
    await asyncio.wait_for(mine.prepare(), HANG_GUARD_S)
    return pool, mine


async def add(mine: SessionMcp, tmp_path: Path) -> tuple[str, bool]:
    tool = mine.tools["mcp__demo__add"]
    result = await asyncio.wait_for(tool.run({"a": 20, "b": 22}, ToolContext(workdir=tmp_path)), HANG_GUARD_S)
    return result.content, result.is_error


async def test_a_call_after_the_server_exited_restarts_it_before_the_pool_noticed(tmp_path: Path) -> None:
    pool, mine = await started(tmp_path)
    handle = pool.handles[("demo", None)]
    old = handle.pid
    assert old is not None
    os.kill(old, signal.SIGKILL)
    wait_exited(old)  # blocks the event loop on purpose: nothing has read the end of its stdout yet
    assert handle.state == "running"  # the owner task has not run: the pool does not know
    assert await add(mine, tmp_path) == ("42", False)
    assert handle.pid not in (None, old) and handle.restarts == 1
    assert handle.last_error == "MCP server 'demo' exited with code -9"
    await pool.shutdown()


async def test_a_server_that_closes_its_stdout_is_stopped_and_restarted(tmp_path: Path) -> None:
    pool, mine = await started(tmp_path)
    handle = pool.handles[("demo", None)]
    old = handle.pid
    assert old is not None
    ctx = ToolContext(workdir=tmp_path)
    result = await asyncio.wait_for(mine.tools["mcp__demo__close_stdout"].run({}, ctx), HANG_GUARD_S)
    assert result.is_error and "MCP server 'demo' stopped during the call" in result.content
    assert await add(mine, tmp_path) == ("42", False)  # not sent to the dead connection
    assert handle.pid not in (None, old) and handle.restarts == 1
    assert handle.last_error == "MCP server 'demo' closed its stdout but did not exit (it was stopped)"
    assert not alive(old)  # the process that kept running was terminated
    await pool.shutdown()
