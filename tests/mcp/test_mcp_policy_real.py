"""Issue 26 item 9 against the real reference servers: ``@modelcontextprotocol/server-filesystem``
(npm, installed into .ci/node_modules by .ci/run) and ``mcp-server-time`` (PyPI). The paths their
tools name are checked as Read (and, unless read-only, Edit) targets; ``readOnlyHint`` never skips
the read checks; in plan mode a tool that is not read-only asks."""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from paragents.config import McpSettings
from paragents.mcp import McpPool
from paragents.permissions import Policy

ROOT = Path(__file__).resolve().parents[2]
FS_SERVER = ROOT / ".ci" / "node_modules" / ".bin" / "mcp-server-filesystem"
TIME_SERVER = shutil.which("mcp-server-time")
needs_fs = pytest.mark.skipif(
    not FS_SERVER.exists() and not os.environ.get("PARAGENTS_CI"),
    reason="@modelcontextprotocol/server-filesystem is not installed in .ci/node_modules (see .ci/run)",
)


async def _tools(tmp_path: Path, name: str, entry: dict[str, Any]) -> tuple[McpPool, dict[str, Any]]:
    pool = McpPool(
        tmp_path, McpSettings.model_validate({"servers": {name: entry}}), log_dir=tmp_path / "logs"
    )
    mine = pool.for_session("s1")
    assert await mine.prepare() == []
    return pool, dict(mine.tools)


def _decide(policy: Policy, tool: Any, args: dict[str, Any], cwd: Path, mode: str = "default") -> Any:
    return policy.decide(
        tool.name, args, cwd=cwd, mode=mode, read_only=tool.read_only, schema=tool.parameters
    )


@needs_fs
async def test_filesystem_server_paths_are_read_and_edit_targets(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    (project / "sub").mkdir(parents=True)
    (project / "sub" / "secret.txt").write_text("s\n")
    (project / "notes.txt").write_text("n\n")
    entry = {"command": str(FS_SERVER), "args": [str(project), "/etc"], "startupTimeout": 120}
    pool, tools = await _tools(tmp_path, "fs", entry)
    try:
        read, write = tools["mcp__fs__read_text_file"], tools["mcp__fs__write_file"]
        move, many = tools["mcp__fs__move_file"], tools["mcp__fs__read_multiple_files"]
        assert read.read_only and not write.read_only  # the server's own hints
        plain = Policy.load(project)
        # a read-only tool reading outside the project asks (readOnlyHint skips no read check)
        outside = _decide(plain, read, {"path": "/etc/passwd"}, project)
        assert (
            outside.decision == "ask" and "/etc/passwd is outside the working directories" in outside.reason
        )
        assert _decide(plain, read, {"path": "notes.txt"}, project).decision == "allow"
        denying = Policy.load(project, cli_rules={"deny": ["Read(./sub/**)", "Edit(//etc/**)"]})
        got = _decide(denying, read, {"path": str(project / "sub" / "secret.txt")}, project)
        assert (got.decision, got.rule) == ("deny", "Read(./sub/**)")
        got = _decide(denying, many, {"paths": ["notes.txt", "sub/secret.txt"]}, project)
        assert (got.decision, got.rule) == ("deny", "Read(./sub/**)")
        got = _decide(
            denying, move, {"source": "notes.txt", "destination": "/etc/x"}, project, "bypassPermissions"
        )
        assert (got.decision, got.rule) == ("deny", "Edit(//etc/**)")
        # a tool that may write: plan mode asks; an allow rule for the server covers the project
        assert _decide(plain, write, {"path": "a.txt", "content": "x"}, project, "plan").decision == "ask"
        allowing = Policy.load(project, cli_rules={"allow": ["mcp__fs"]})
        assert _decide(allowing, write, {"path": "a.txt", "content": "x"}, project).decision == "allow"
        assert _decide(allowing, write, {"path": "/etc/x", "content": "x"}, project).decision == "ask"
        assert _decide(allowing, write, {"path": ".git/config", "content": "x"}, project).decision == "ask"
    finally:
        await pool.shutdown()


@pytest.mark.skipif(
    TIME_SERVER is None, reason="mcp-server-time is not installed (uv tool install mcp-server-time)"
)
async def test_time_server_tools_name_no_path_and_follow_their_hints(tmp_path: Path) -> None:
    entry = {"command": TIME_SERVER, "args": ["--local-timezone", "UTC"], "startupTimeout": 120}
    pool, tools = await _tools(tmp_path, "time", entry)
    try:
        tool = tools["mcp__time__get_current_time"]
        policy = Policy.load(tmp_path)
        got = _decide(policy, tool, {"timezone": "UTC"}, tmp_path, "plan")
        assert got.decision == ("allow" if tool.read_only else "ask")
        denying = Policy.load(tmp_path, cli_rules={"deny": ["mcp__time"]})
        assert _decide(denying, tool, {"timezone": "UTC"}, tmp_path).decision == "deny"
    finally:
        await pool.shutdown()
