"""A published MCP server from PyPI (``mcp-server-time``) as a real subprocess through the pool.
Skipped when it is not installed (``.ci/run`` installs it with ``uv tool install mcp-server-time``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from paragents.config import McpSettings
from paragents.mcp import McpPool
from paragents.tools.base import ToolContext
from tests.patience import HANG_GUARD_S

TIME_SERVER = shutil.which("mcp-server-time")


@pytest.mark.skipif(
    TIME_SERVER is None, reason="mcp-server-time is not installed (uv tool install mcp-server-time)"
)
async def test_mcp_server_time_from_pypi_answers_through_the_pool(tmp_path: Path) -> None:
    entry = {"command": TIME_SERVER, "args": ["--local-timezone", "UTC"], "startupTimeout": HANG_GUARD_S}
    pool = McpPool(
        tmp_path, McpSettings.model_validate({"servers": {"time": entry}}), log_dir=tmp_path / "logs"
    )
    mine = pool.for_session("s1")
    assert await mine.prepare() == []
    assert {"mcp__time__get_current_time", "mcp__time__convert_time"} <= set(mine.tools)
    result = await mine.tools["mcp__time__get_current_time"].run(
        {"timezone": "UTC"}, ToolContext(workdir=tmp_path)
    )
    assert not result.is_error
    assert json.loads(result.content)["timezone"] == "UTC"
    [row] = pool.status()
    assert row.pid is not None and row.state == "running"
    await pool.shutdown()
