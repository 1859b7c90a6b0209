"""``python -m bench.remote``: the container backend on a local Docker engine (issue 31).

Uses the engine in ``PARAGENTS_TEST_DOCKER_HOST``, else starts a private dockerd with
``scripts/docker-testenv`` (stopped at the end); the lane image is the offline test image. Measures the
round trip of ``true`` through :meth:`ContainerBackend.exec` (30 runs), lane creation from the warm
image up to a checked-out /workspace (5 lanes), the snapshot fetch of a one-file change (15 runs), and
a prediction round over 8 container lanes as the app runs it (each lane's snapshot fetched and mirrored
into its worktree here, then the merge-tree prediction; 20 rounds where every lane changed one file of
its own, one in four also a file the next lane changed, and 10 rounds where nothing changed).
Prints one JSON object (``skipped`` with the reason when no engine can be had)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.common import percentile, r
from paragents.backend_settings import ContainerSettings
from paragents.backends.base import LaneSpec
from paragents.backends.container import ContainerBackend
from paragents.backends.mirror import Mirror
from paragents.lanes.predict import Predictor
from paragents.store import LaneRecord

ROUND_LANES = 8

SCRIPT = Path(__file__).resolve().parents[1] / "scripts" / "docker-testenv"


def _script(*args: str, host: str | None = None) -> str:
    env = dict(os.environ, **({"DOCKER_HOST": host} if host else {}))
    return subprocess.run(
        [str(SCRIPT), *args], env=env, capture_output=True, text=True, check=True
    ).stdout.strip()


def _repo(root: Path) -> tuple[Path, str]:
    repo = root / "repo"
    repo.mkdir()
    for i in range(50):
        (repo / f"m{i}.py").write_text(f"def f{i}(x):\n    return x + {i}\n")
    env = dict(
        os.environ,
        GIT_AUTHOR_NAME="b",
        GIT_AUTHOR_EMAIL="b@b",
        GIT_COMMITTER_NAME="b",
        GIT_COMMITTER_EMAIL="b@b",
    )
    for args in (["init", "-q", "-b", "main"], ["add", "-A"], ["commit", "-q", "-m", "init"]):
        subprocess.run(["git", *args], cwd=repo, check=True, env=env, capture_output=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=repo, check=True, capture_output=True, text=True)
    return repo, head.stdout.strip()


async def measure(host: str, image: str, root: Path) -> dict[str, Any]:
    repo, base = _repo(root)
    settings = ContainerSettings(host=host)
    lanes = []
    creates = []
    for i in range(5):
        lane = ContainerBackend(LaneSpec(repo=repo, name=f"bench{i}", base_commit=base), settings, image)
        started = time.perf_counter()
        await lane.create()
        creates.append(time.perf_counter() - started)
        lanes.append(lane)
    lane = lanes[0]
    for _ in range(3):
        await lane.exec("true")
    trips = []
    for _ in range(30):
        started = time.perf_counter()
        await lane.exec("true")
        trips.append(time.perf_counter() - started)
    await lane.snapshot()
    fetches = []
    for i in range(15):
        await lane.write_file("m1.py", f"def f1(x):\n    return x + {i + 100}\n".encode())
        started = time.perf_counter()
        snap = await lane.snapshot()
        fetches.append(time.perf_counter() - started)
        assert snap.changed
    for lane in lanes:
        await lane._remove()
        await lane.close()
    rounds = await measure_rounds(repo, base, settings, image, root)

    def ms(xs: list[float], q: int) -> float | None:
        value = percentile(xs, q)
        return None if value is None else r(value * 1000)

    return {
        "round_lanes": ROUND_LANES,
        "round_changed_p50_ms": ms(rounds["changed"], 50),
        "round_changed_p99_ms": ms(rounds["changed"], 99),
        "round_unchanged_p50_ms": ms(rounds["unchanged"], 50),
        "round_unchanged_p99_ms": ms(rounds["unchanged"], 99),
        "round_conflicts_found": rounds["conflicts"],
        "exec_true_p50_ms": ms(trips, 50),
        "exec_true_p99_ms": ms(trips, 99),
        "create_p50_s": r(percentile(creates, 50)),
        "create_max_s": r(max(creates)),
        "snapshot_fetch_p50_ms": ms(fetches, 50),
        "snapshot_fetch_p99_ms": ms(fetches, 99),
        "load_avg_1m": r(os.getloadavg()[0]),
    }


async def measure_rounds(
    repo: Path, base: str, settings: ContainerSettings, image: str, root: Path
) -> dict[str, Any]:
    """Prediction rounds over ``ROUND_LANES`` container lanes (see the module docstring): what
    ``LaneWatcher.run_round`` does for remote lanes (``RemoteLanes.sync``, then ``Predictor.round``)."""
    backends, mirrors, records = [], [], []
    for i in range(ROUND_LANES):
        path = root / "lanes" / f"round{i}"
        subprocess.run(
            ["git", "worktree", "add", "-q", "-b", f"paragents/round{i}", str(path), base],
            cwd=repo, check=True, capture_output=True,
        )  # fmt: skip
        spec = LaneSpec(repo=repo, name=f"round{i}", base_commit=base, worktree=path)
        backend = ContainerBackend(spec, settings, image)
        await backend.create()
        backends.append(backend)
        mirrors.append(Mirror(backend, path))
        records.append(
            LaneRecord(
                i + 1,
                str(repo),
                f"round{i}",
                str(path),
                f"paragents/round{i}",
                "main",
                base,
                42000 + 10 * i,
                10,
                "ready",
                "",
                None,
                0.0,
                backend="container",
            )
        )
    predictor = Predictor(repo)
    changed: list[float] = []
    unchanged: list[float] = []
    conflicts = 0

    async def one_round() -> float:
        nonlocal conflicts
        started = time.perf_counter()
        await asyncio.gather(*(m.sync(fast=True) for m in mirrors))
        found = await predictor.round(records)
        conflicts = max(conflicts, len(found))
        return time.perf_counter() - started

    try:
        await one_round()
        for k in range(22):
            for i, backend in enumerate(backends):  # the agents' writes (not timed)
                await backend.write_file(f"m{i}.py", f"def f{i}(x):\n    return x * {k + 2}\n".encode())
                if k % 4 == 0:  # pairs of lanes change a file the pair shares: predicted conflicts
                    body = f"def g(x):\n    return {i} + {k}\n".encode()
                    await backend.write_file(f"m{20 + i // 2}.py", body)
            elapsed = await one_round()
            if k >= 2:
                changed.append(elapsed)
        for _ in range(10):
            unchanged.append(await one_round())
    finally:
        predictor.close()
        for backend in backends:
            await backend._remove()
            await backend.close()
    return {"changed": changed, "unchanged": unchanged, "conflicts": conflicts}


def main() -> None:
    host = os.environ.get("PARAGENTS_TEST_DOCKER_HOST")
    started = None
    result: dict[str, Any]
    try:
        if not host:
            if os.geteuid() != 0 or shutil.which("dockerd") is None:
                print(json.dumps({"skipped": "no Docker engine (install docker.io and run as root)"}))
                return
            started = tempfile.mkdtemp(prefix="pgb-", dir="/tmp")
            host = _script("start", started)
        image = _script("image", host=host)
        with tempfile.TemporaryDirectory(prefix="paragents-bench-remote-") as tmp:
            result = asyncio.run(measure(host, image, Path(tmp)))
    except subprocess.CalledProcessError as exc:
        result = {"skipped": f"docker-testenv failed: {exc.stderr.strip()[-500:]}"}
    finally:
        if started:
            subprocess.run([str(SCRIPT), "stop", started], capture_output=True, check=False)
            shutil.rmtree(started, ignore_errors=True)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
