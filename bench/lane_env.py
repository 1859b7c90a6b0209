"""``python -m bench.lane_env``: the time to make a lane of a real uv project with its own environment.

A src-layout uv project (``uv init --lib``, uv's own build backend) depending on :data:`PACKAGES`
(about 40 locked packages with their dependencies, wheels from the package index), synced once into
a persistent bench cache (``/var/tmp/paragents-bench-uv-cache``: warm after the first run, never the
user's cache). Then, :data:`RUNS` times each, in the same run so the ratio holds at the machine's
load of the moment:

- ``worktree``: ``create_lane(setup=False)``: ``git worktree add`` and the store row (the baseline);
- ``lane``: ``create_lane`` with its setup: the worktree, then the lane's own ``.venv`` (the host step
  copies or clones the locked wheels from the cache, the sandboxed step installs the project);
- ``hardlink``: for comparison only, the host step with ``--link-mode hardlink`` into a scratch
  worktree (what paragents does not do: hard-linked files are shared with every venv of the cache).

Prints one JSON object: p50/p95 of each, ``ratio_p50`` (lane ÷ worktree), the host and sandbox
steps' p50, the package count and the link mode used."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.common import bench_root, isolated_env, percentile, r

PACKAGES = (
    "httpx", "pydantic", "rich", "pytest", "jinja2", "click", "requests", "pyyaml", "attrs",
    "python-dateutil", "sqlalchemy", "fastapi", "typer", "tomli-w", "packaging",
)  # fmt: skip
"""Direct dependencies of the bench project (their dependencies make ~40 locked packages)."""
RUNS = 10
CACHE = Path("/var/tmp/paragents-bench-uv-cache")


def _run(cmd: list[str], cwd: Path, env: dict[str, str]) -> None:
    done = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd[:3])} failed: {done.stderr.strip()[-400:]}")


def _project(root: Path, env: dict[str, str]) -> tuple[Path, int]:
    repo = root / "bench-calc"
    uv = shutil.which("uv") or "uv"
    _run([uv, "init", "--lib", "--name", "calc", "--vcs", "git", "--no-workspace", str(repo)], root, env)
    _run([uv, "add", "-q", *PACKAGES], repo, env)
    (repo / "tests").mkdir()
    (repo / "tests" / "test_calc.py").write_text(
        "import calc\n\n\ndef test_hello():\n    assert calc.hello()\n"
    )
    for cmd in (["checkout", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "calc"]):
        _run(["git", *cmd], repo, env)
    locked = (repo / "uv.lock").read_text().count("[[package]]") - 1  # the project itself
    return repo, locked


async def measure() -> dict[str, Any]:
    if "BENCH_ROOT" not in os.environ:  # run alone: never the real home, config or state dirs
        os.environ.update(isolated_env())
    from paragents.lanes import create_lane
    from paragents.lanes.envs import link_mode
    from paragents.store import Store

    for key in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        os.environ.setdefault(key, "bench")
    for key in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        os.environ.setdefault(key, "bench@localhost")
    CACHE.mkdir(parents=True, exist_ok=True)
    os.environ["UV_CACHE_DIR"] = str(CACHE)
    os.environ.pop("VIRTUAL_ENV", None)
    env = dict(os.environ)
    root = bench_root()
    repo, locked = _project(root, env)
    store = await Store.open(root / "state" / "paragents.db")
    worktree: list[float] = []
    lane: list[float] = []
    host: list[float] = []
    sandbox: list[float] = []
    hardlink: list[float] = []
    notes: list[str] = []
    try:
        for i in range(RUNS):
            started = time.perf_counter()
            await create_lane(store, repo, f"w{i}", setup=False)
            worktree.append(time.perf_counter() - started)
            started = time.perf_counter()
            made = await create_lane(store, repo, f"l{i}")
            lane.append(time.perf_counter() - started)
            venv = Path(made.lane.path) / ".venv"
            if not venv.is_dir() or not any(venv.glob("lib/python*/site-packages/*.pth")):
                raise RuntimeError(f"lane l{i} has no environment: {made.notes}")
            notes = made.notes
            host.append(made.seconds.get("uv_host", 0.0))
            sandbox.append(made.seconds.get("uv_sandbox", 0.0))
            scratch = root / f"hard{i}"
            _run(["git", "worktree", "add", "-q", "--detach", str(scratch)], repo, env)
            started = time.perf_counter()
            _run(
                [
                    "uv",
                    "sync",
                    "--frozen",
                    "--offline",
                    "--no-install-project",
                    "--link-mode",
                    "hardlink",
                    "-q",
                ],
                scratch,
                env,
            )
            hardlink.append(time.perf_counter() - started)
        mode = link_mode(CACHE, Path(made.lane.path))
    finally:
        await store.close()
    return {
        "packages": locked,
        "link_mode": mode,
        "runs": RUNS,
        "worktree_p50_s": r(percentile(worktree, 50), 3),
        "worktree_p95_s": r(percentile(worktree, 95), 3),
        "lane_p50_s": r(percentile(lane, 50), 3),
        "lane_p95_s": r(percentile(lane, 95), 3),
        "ratio_p50": r((percentile(lane, 50) or 0.0) / (percentile(worktree, 50) or 1.0), 1),
        "host_step_p50_s": r(percentile(host, 50), 3),
        "sandbox_step_p50_s": r(percentile(sandbox, 50), 3),
        "hardlink_host_step_p50_s": r(percentile(hardlink, 50), 3),
        "load_avg_1m": r(os.getloadavg()[0], 2),
        "notes": notes,
    }


def main() -> None:
    print(json.dumps(asyncio.run(measure())))


if __name__ == "__main__":
    main()
