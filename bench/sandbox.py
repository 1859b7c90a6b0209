"""``python -m bench.sandbox``: the start-up cost bubblewrap adds to one ``run_command``.

Runs ``run_command true`` through the real tool, alternating unconfined and sandboxed calls, in a
project of 1,000 files with the Read deny rules ``.env`` (any depth, so the project is searched) and
``~/.ssh/**``; prints one JSON object: p50/p90 of each and ``added_p50_ms`` (sandboxed p50 minus
unconfined p50). Skipped (``{"skipped": reason}``) when bwrap is absent or cannot create a sandbox."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from bench.common import bench_root, percentile, r


def _project(root: Path) -> Path:
    project = root / "sandbox-project"
    for d in range(50):
        folder = project / f"pkg{d}"
        folder.mkdir(parents=True, exist_ok=True)
        for f in range(20):
            (folder / f"mod{f}.py").write_text("x = 1\n")
    (project / ".env").write_text("TOKEN=x\n")
    return project


async def measure(runs: int) -> dict[str, Any]:
    """Time ``runs`` unconfined and ``runs`` sandboxed ``true`` commands (alternating)."""
    from paragents.tools import ToolContext, default_registry
    from paragents.tools.sandbox import SandboxConfig, check

    sandbox = SandboxConfig(mode="required", hidden_rules=(("/", ".env"), (str(Path.home()), "/.ssh/**")))
    status = check(sandbox)
    if not status.active:
        return {"skipped": status.message}
    project = _project(bench_root())
    tool = default_registry().get("run_command")
    assert tool is not None
    args = tool.validate({"command": "true"})
    plain_ctx = ToolContext(workdir=project)
    boxed_ctx = ToolContext(workdir=project, sandbox=sandbox)
    plain: list[float] = []
    boxed: list[float] = []
    for i in range(runs * 2 + 2):
        ctx, into = (plain_ctx, plain) if i % 2 == 0 else (boxed_ctx, boxed)
        started = time.perf_counter()
        result = await tool.run(args, ctx)
        elapsed = (time.perf_counter() - started) * 1000
        if i >= 2:  # the first pair warms caches (bwrap probe, page cache)
            into.append(elapsed)
        assert not result.is_error, result.content
    p50_plain, p50_boxed = percentile(plain, 50) or 0.0, percentile(boxed, 50) or 0.0
    return {
        "plain_p50_ms": r(p50_plain),
        "plain_p90_ms": r(percentile(plain, 90)),
        "sandboxed_p50_ms": r(p50_boxed),
        "sandboxed_p90_ms": r(percentile(boxed, 90)),
        "added_p50_ms": r(p50_boxed - p50_plain),
        "runs": runs,
    }


def main() -> None:
    print(json.dumps(asyncio.run(measure(40))))


if __name__ == "__main__":
    main()
