"""Micro benchmarks run in the orchestrator process: permission decisions and the SSE parser ceiling."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

from bench.common import percentile, r


def permission_decision(project: Path, runs: int = 2000) -> dict[str, Any]:
    """Time ``Policy.decide`` for a 20-part compound Bash command (varied per call so no cache helps);
    return ``{"perm_p50_us", "perm_p99_us", "decision"}``."""
    from paragents.permissions import Policy

    policy = Policy.load(project)
    parts = [
        "cd src",
        "ls -la",
        "grep -rn TODO .",
        "cat README.md",
        "git status",
        "git diff --stat",
        "python -m pytest -q",
        "echo done > out.txt",
        "rm -f build/tmp",
        "mkdir -p build",
        "cp a.py build/",
        "sed -n 1,20p a.py",
        "wc -l a.py",
        "head -5 b.py",
        "tail -5 b.py",
        "find . -name '*.pyc'",
        "sort names.txt",
        "uniq -c names.txt",
        "make test",
        "true",
    ]
    seps = [" && ", " || ", "; ", " | "]
    times: list[float] = []
    decision = ""
    for i in range(runs):
        cmd = "".join(f"{p}{i if k == 0 else ''}{seps[k % 4] if k < 19 else ''}" for k, p in enumerate(parts))
        started = time.perf_counter()
        result = policy.decide("run_command", {"command": cmd}, cwd=project)
        times.append((time.perf_counter() - started) * 1e6)
        decision = str(getattr(result, "decision", result))
    return {
        "perm_p50_us": r(percentile(times, 50), 0),
        "perm_p99_us": r(percentile(times, 99), 0),
        "perm_decision": decision,
    }


async def sse_ceiling(url: str, tokens: int) -> dict[str, Any]:
    """Stream one unpaced reply of ``tokens`` chunks through ChatClient; return chunks/s and CPU µs/chunk
    of this (client) process."""
    from paragents.llm import ChatClient
    from paragents.llm.stream import StreamTextDelta

    client = ChatClient(url, None, max_retries=0)
    count = [0]

    def on_delta(delta: Any) -> None:
        if isinstance(delta, StreamTextDelta):
            count[0] += 1

    cpu0, t0 = time.process_time(), time.perf_counter()
    await client.stream_chat(
        model="m", messages=[{"role": "user", "content": "go"}], tools=None, on_delta=on_delta
    )
    wall, cpu = time.perf_counter() - t0, time.process_time() - cpu0
    await client.aclose()
    return {
        "sse_chunks_per_s": r(count[0] / wall, 0),
        "sse_cpu_us_per_chunk": r(cpu / max(count[0], 1) * 1e6),
        "sse_chunks": count[0],
    }


def run_sse(url: str, tokens: int) -> dict[str, Any]:
    """Synchronous wrapper of :func:`sse_ceiling`."""
    return asyncio.run(sse_ceiling(url, tokens))
