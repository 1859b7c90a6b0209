"""``python -m bench.lanes``: lane creation time (no setup) and the cost of one conflict-prediction round.

A repository of 420 files; 8 lanes are created (timed, ``setup=False``), then each lane edits 50
files (45 of its own, 5 shared with the next lane, so 8 pairs need ``merge-tree``) and adds one
untracked file. Rounds are timed three ways: after every lane changed one more of its own files (every
lane's index moves; pairs whose common files are untouched reuse their answer), after every lane
changed a file it shares with the next lane (8 merge-trees: the worst case, ``shared_round_*``), and
rounds where nothing changed. While rounds run, a 5 ms ticker on
this asyncio loop measures its lag (rounds run on a private loop in a thread, as in the app).
``round_cpu_ms`` (CPU of this process and its git children per changed round) and ``load_avg_1m``
help read wall times taken on a shared machine. Prints one JSON object."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import subprocess
import time
from pathlib import Path
from typing import Any

from bench.common import bench_root, percentile, r

LANES = 8
FILES = 50
ROUNDS = 30


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _repo(root: Path) -> Path:
    repo = root / "lanes-repo"
    for i in range(420):
        path = repo / f"pkg{i // 20}" / f"mod{i}.py"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(f"def f{j}(x):\n    return x + {j}\n\n" for j in range(20)))
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "init")
    return repo


def _edit(path: Path, tag: str) -> None:
    text = path.read_text()
    path.write_text(text.replace("return x + 1\n", f"return x + 1  # {tag}\n", 1) + f"# {tag}\n")


def _cpu() -> float:
    """CPU seconds used so far by this process and its finished children (git)."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


async def _lag_probe(stop: asyncio.Event, lags: list[float]) -> None:
    loop = asyncio.get_running_loop()
    while not stop.is_set():
        start = loop.time()
        await asyncio.sleep(0.005)
        lags.append((loop.time() - start - 0.005) * 1000)


async def measure() -> dict[str, Any]:
    for key in ("GIT_AUTHOR_NAME", "GIT_COMMITTER_NAME"):
        os.environ.setdefault(key, "bench")
    for key in ("GIT_AUTHOR_EMAIL", "GIT_COMMITTER_EMAIL"):
        os.environ.setdefault(key, "bench@localhost")
    from paragents.lanes import create_lane
    from paragents.lanes.predict import Predictor
    from paragents.lanes.thread import LoopThread
    from paragents.store import Store

    root = bench_root()
    repo = _repo(root)
    store = await Store.open(root / "state" / "paragents.db")
    try:
        creates: list[float] = []
        lanes = []
        for i in range(LANES):
            started = time.perf_counter()
            lanes.append((await create_lane(store, repo, f"l{i}", setup=False)).lane)
            creates.append(time.perf_counter() - started)
        for i, lane in enumerate(lanes):
            own = [i * 45 + k for k in range(45)]
            shared = [((i + 1) % LANES) * 45 + k for k in range(5)]
            for n in own + shared:
                _edit(Path(lane.path) / f"pkg{n // 20}" / f"mod{n}.py", lane.name)
            (Path(lane.path) / f"new_{lane.name}.py").write_text("x = 1\n")
        predictor = Predictor(repo)
        thread = LoopThread("bench predictions")  # as in the app: rounds run off the measured loop

        async def round_() -> list[Any]:
            return await thread.run(predictor.round(lanes))

        started = time.perf_counter()
        cold = await round_()
        cold_ms = (time.perf_counter() - started) * 1000
        changed: list[float] = []
        unchanged: list[float] = []
        shared_ms: list[float] = []
        shared_calls = 0
        lags: list[float] = []
        stop = asyncio.Event()
        probe = asyncio.create_task(_lag_probe(stop, lags))
        cpu_changed = 0.0
        changed_calls = 0
        for k in range(ROUNDS):
            for i, lane in enumerate(lanes):
                n = i * 45 + 10 + k % 30
                _edit(Path(lane.path) / f"pkg{n // 20}" / f"mod{n}.py", f"round{k}")
            started = time.perf_counter()
            cpu_before = _cpu()
            calls = predictor.git_calls
            found = await round_()
            changed_calls += predictor.git_calls - calls
            changed.append((time.perf_counter() - started) * 1000)
            cpu_changed += _cpu() - cpu_before
            started = time.perf_counter()
            await round_()
            unchanged.append((time.perf_counter() - started) * 1000)
            for i, lane in enumerate(lanes):  # a file the next lane changed too: 8 merge-trees again
                n = ((i + 1) % LANES) * 45 + k % 5
                _edit(Path(lane.path) / f"pkg{n // 20}" / f"mod{n}.py", f"shared{k}")
            calls = predictor.git_calls
            started = time.perf_counter()
            await round_()
            shared_ms.append((time.perf_counter() - started) * 1000)
            shared_calls += predictor.git_calls - calls
        stop.set()
        await probe
        thread.close()
    finally:
        await store.close()
    return {
        "create_p50_s": r(percentile(creates, 50), 3),
        "create_max_s": r(max(creates), 3),
        "lanes": LANES,
        "changed_files_per_lane": FILES + 1,
        "cold_round_ms": r(cold_ms),
        "round_p50_ms": r(percentile(changed, 50)),
        "round_p99_ms": r(percentile(changed, 99)),
        "round_cpu_ms": r(cpu_changed / ROUNDS * 1000),
        "load_avg_1m": r(os.getloadavg()[0], 2),
        "git_per_changed_round": r(changed_calls / ROUNDS, 1),
        "shared_round_p50_ms": r(percentile(shared_ms, 50)),
        "shared_round_p99_ms": r(percentile(shared_ms, 99)),
        "git_per_shared_round": r(shared_calls / ROUNDS, 1),
        "unchanged_round_p50_ms": r(percentile(unchanged, 50)),
        "unchanged_round_p99_ms": r(percentile(unchanged, 99)),
        "conflicts_found": len(found),
        "cold_conflicts": len(cold),
        "loop_lag_p99_ms": r(percentile(lags, 99)),
        "rounds": ROUNDS,
    }


def main() -> None:
    print(json.dumps(asyncio.run(measure())))


if __name__ == "__main__":
    main()
