"""``python -m bench.mcp_pool``: 8 sessions x 3 stdio MCP servers through the shared pool.

Every session prepares its tools at once (as 8 sessions starting their first turn), then each calls
every server once. Reports how many server processes ran (target: 3, not 24), their total RSS, the
time until all 8 sessions had their tools (start cost, the servers start in parallel) and the p50/p99
of a call. Prints one JSON object."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import bench_root, percentile, r

SESSIONS = 8
SERVERS = 3


async def run() -> dict[str, Any]:
    from paragents.config import McpSettings
    from paragents.mcp import McpPool
    from paragents.mcp.server import rss_kib
    from paragents.tools.base import ToolContext

    script = str(Path(__file__).with_name("mcp_server.py"))
    servers = {
        f"s{i}": {"command": sys.executable, "args": [script], "startupTimeout": 120} for i in range(SERVERS)
    }
    root = bench_root()
    pool = McpPool(root, McpSettings.model_validate({"servers": servers}), log_dir=root / "mcp-logs")
    views = [pool.for_session(f"session{i}") for i in range(SESSIONS)]
    started = time.perf_counter()
    problems = await asyncio.gather(*(v.prepare() for v in views))
    ready_s = time.perf_counter() - started
    ctx = ToolContext(workdir=root)
    calls: list[float] = []
    for view in views:
        for i in range(SERVERS):
            t0 = time.perf_counter()
            result = await view.tools[f"mcp__s{i}__ping"].run({"text": "x"}, ctx)
            calls.append((time.perf_counter() - t0) * 1000)
            assert result.content == "x", result.content
    pids = {row.pid for row in pool.status() if row.pid}
    rss = sum(rss_kib(pid) or 0 for pid in pids) / 1024
    await pool.shutdown()
    return {
        "sessions": SESSIONS,
        "servers": SERVERS,
        "processes": len(pids),
        "rss_total_mb": r(rss),
        "rss_per_process_mb": r(rss / max(len(pids), 1)),
        "all_ready_s": r(ready_s, 2),
        "call_p50_ms": r(percentile(calls, 50), 2),
        "call_p99_ms": r(percentile(calls, 99), 2),
        "problems": [p for group in problems for p in group],
        "rss_saved_vs_per_session_mb": r(rss / max(len(pids), 1) * (SESSIONS * SERVERS - len(pids))),
    }


if __name__ == "__main__":
    print(json.dumps(asyncio.run(run())))
