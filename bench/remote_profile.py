"""``python -m bench.remote_profile``: where the milliseconds of a prediction round over 8 container
lanes go (docs/remote.md "Where a round's time goes").

Runs the rounds of :mod:`bench.remote` with timers around every host process (git), every Engine API
call of an exec (create, start + stream, inspect) and the host's git steps of a fetch; prints per
kind of round the wall time and, per step, how often it ran and its summed and mean time (summed over
lanes running concurrently: a share of the wall time, not a part of it). Needs a Docker engine like
:mod:`bench.remote`."""

from __future__ import annotations

import asyncio
import collections
import json
import os
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bench.remote import ROUND_LANES, Lanes, _repo, _script, exec_baseline
from paragents.backend_settings import ContainerSettings

Timers = dict[str, list[float]]


class Profile:
    def __init__(self) -> None:
        self.on = False
        self.times: Timers = collections.defaultdict(list)

    @contextmanager
    def timed(self, key: str) -> Iterator[None]:
        started = time.perf_counter()
        try:
            yield
        finally:
            if self.on:
                self.times[key].append(time.perf_counter() - started)

    def wrap(self, owner: Any, name: str, key: Callable[..., str]) -> None:
        original = getattr(owner, name)

        async def timed(*args: Any, **kwargs: Any) -> Any:
            with self.timed(key(*args, **kwargs)):
                return await original(*args, **kwargs)

        setattr(owner, name, timed)

    def take(self) -> Timers:
        got, self.times = self.times, collections.defaultdict(list)
        return got


def cpu_now(containers: list[str]) -> dict[str, float]:
    """CPU seconds used so far: this process, its finished children (the host's git), and the
    lanes' containers (cgroup v1 ``cpuacct.usage`` or v2 ``cpu.stat``; 0 where not readable)."""
    import resource

    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    inside = 0.0
    for cid in containers:
        for path, scale in (
            (f"/sys/fs/cgroup/cpuacct/docker/{cid}/cpuacct.usage", 1e-9),
            (f"/sys/fs/cgroup/system.slice/docker-{cid}.scope/cpu.stat", 1e-6),
        ):
            try:
                text = Path(path).read_text()
            except OSError:
                continue
            if path.endswith("cpu.stat"):
                text = next((ln.split()[1] for ln in text.splitlines() if ln.startswith("usage_usec")), "0")
            inside += int(text.strip()) * scale
            break
    return {
        "host_self": me.ru_utime + me.ru_stime,
        "host_git": kids.ru_utime + kids.ru_stime,
        "containers": inside,
    }


def install(profile: Profile) -> None:
    """Timers around the host's processes and the engine's exec calls."""
    from aiodocker import execs

    from paragents.tools import git_exec

    def host(argv: list[str], *_: Any, **__: Any) -> str:
        sub = next((a for a in argv[1:] if not a.startswith("-")), "?")
        return (
            f"host process: git {sub}"
            if argv[:2] != list(git_exec._LIST_ARGS[:2]) or "config" not in argv
            else ("host process: git config --list")
        )

    profile.wrap(git_exec, "_exec", host)
    profile.wrap(execs.Exec, "inspect", lambda *_a, **_k: "engine: exec inspect")
    original_create = __import__("aiodocker.containers", fromlist=["x"]).DockerContainer.exec

    async def create(self: Any, *args: Any, **kwargs: Any) -> Any:
        with profile.timed("engine: exec create"):
            return await original_create(self, *args, **kwargs)

    __import__("aiodocker.containers", fromlist=["x"]).DockerContainer.exec = create
    original_start = execs.Exec.start

    def start(self: Any, **kwargs: Any) -> Any:
        stream = original_start(self, **kwargs)
        original_init = stream._init

        async def init() -> Any:
            with profile.timed("engine: exec start (hijack)"):
                return await original_init()

        stream._init = init
        original_read = stream.read_out

        async def read_out() -> Any:
            with profile.timed("engine: exec stream read (waiting for output)"):
                return await original_read()

        stream.read_out = read_out
        return stream

    setattr(execs.Exec, "start", start)  # noqa: B010


async def run(host: str, image: str, root: Path, rounds: int) -> dict[str, Any]:
    from paragents.backends import bundle, container, mirror
    from paragents.lanes import predict

    profile = Profile()
    install(profile)
    profile.wrap(container.ContainerBackend, "_run", lambda *_a, **_k: "lane: one exec (whole)")
    profile.wrap(bundle, "fetch_snapshot", lambda *_a, **_k: "host: fetch_snapshot (whole)")
    from paragents.backends import remote

    setattr(remote, "fetch_snapshot", bundle.fetch_snapshot)  # noqa: B010
    from paragents.backends import agent
    from paragents.backends import rounds as round_module

    profile.wrap(agent.LaneAgent, "snapshot", lambda *_a, **_k: "lane: agent request (in the container)")
    if os.environ.get("ROUND_CONCURRENCY"):
        round_module.ROUND_CONCURRENCY = int(os.environ["ROUND_CONCURRENCY"])
    profile.wrap(mirror.Mirror, "sync", lambda *_a, **_k: "lane: mirror sync (whole)")
    profile.wrap(predict.Predictor, "round", lambda *_a, **_k: "host: predictor round (whole)")
    repo, base = _repo(root)
    settings = ContainerSettings(host=host)
    baseline = await exec_baseline(repo, base, settings, image)
    lanes = await Lanes.make(repo, base, settings, image, root)
    report: dict[str, Any] = {"baseline_8_exec_true_ms": round(baseline * 1000, 1)}
    ids = []
    for backend in lanes.backends:
        info = await backend._inspect()
        ids.append(info["Id"] if info else "")
    try:
        await lanes.round()
        for label, change in (("changed", True), ("unchanged", False)):
            walls = []
            cpu = {"host_self": 0.0, "host_git": 0.0, "containers": 0.0}
            profile.take()
            for k in range(rounds):
                if change:
                    await lanes.change(k)
                before = cpu_now(ids)
                profile.on = True
                walls.append(await lanes.round())
                profile.on = False
                after = cpu_now(ids)
                for key in cpu:
                    cpu[key] += after[key] - before[key]
            times = profile.take()
            report[label] = {
                "wall_mean_ms": round(sum(walls) / len(walls) * 1000, 1),
                "cpu_ms_per_round": {key: round(v / rounds * 1000, 1) for key, v in cpu.items()},
                "steps": {
                    key: {
                        "per_round": round(len(v) / rounds, 1),
                        "sum_per_round_ms": round(sum(v) / rounds * 1000, 1),
                        "mean_ms": round(sum(v) / len(v) * 1000, 1),
                    }
                    for key, v in sorted(times.items())
                },
            }
    finally:
        await lanes.close()
    report["load_avg_1m"] = round(os.getloadavg()[0], 1)
    report["round_lanes"] = ROUND_LANES
    return report


def main() -> None:
    host = os.environ.get("PARAGENTS_TEST_DOCKER_HOST")
    if not host:
        sys.exit("set PARAGENTS_TEST_DOCKER_HOST (scripts/docker-testenv start DIR prints it)")
    image = _script("image", host=host)
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 6
    with tempfile.TemporaryDirectory(prefix="paragents-bench-profile-") as tmp:
        print(json.dumps(asyncio.run(run(host, image, Path(tmp), rounds)), indent=1))


if __name__ == "__main__":
    main()
