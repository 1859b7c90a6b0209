"""``python -m bench.remote_profile [ROUNDS] [--json]``: where the milliseconds of a prediction round
over 8 container lanes go (docs/remote.md "Where a round's time goes").

Runs the rounds of :mod:`bench.remote` (all lanes changed, one lane changed and synced alone, nothing
changed; with the lanes' agents, then with one exec per snapshot) with timers around every host
process (git), the Engine API calls of each exec (create, start, inspect), each agent request, each
lane's mirror sync and fetch, and the prediction; prints per kind of round
its wall time, the CPU it used (this process, its git processes, the containers' cgroups) and per
step how often it ran and its summed and mean time (summed over lanes running at once: a share of
the wall time, not a part of it). ``ROUND_CONCURRENCY`` in the environment sets the pool size. Needs a
Docker engine: ``PARAGENTS_TEST_DOCKER_HOST`` (``scripts/docker-testenv start DIR`` prints one)."""

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

from bench.remote import ROUND_LANES, Lanes, _repo, _script, cpu_now, engine_pids
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


async def run(host: str, image: str, root: Path, rounds: int) -> dict[str, Any]:
    from paragents.backends import agent, bundle, container, mirror, remote
    from paragents.backends import rounds as round_module
    from paragents.lanes import predict

    profile = Profile()
    install(profile)
    profile.wrap(container.ContainerBackend, "_run", lambda *_a, **_k: "lane: one exec (whole)")
    profile.wrap(bundle, "fetch_snapshot", lambda *_a, **_k: "host: fetch_snapshot (whole)")
    setattr(remote, "fetch_snapshot", bundle.fetch_snapshot)  # noqa: B010
    profile.wrap(agent.LaneAgent, "snapshot", lambda *_a, **_k: "lane: agent request (whole)")
    profile.wrap(mirror.Mirror, "sync", lambda *_a, **_k: "lane: mirror sync (whole)")
    profile.wrap(predict.Predictor, "round", lambda *_a, **_k: "host: predictor round (whole)")
    if os.environ.get("ROUND_CONCURRENCY"):
        round_module.ROUND_CONCURRENCY = int(os.environ["ROUND_CONCURRENCY"])
    repo, base = _repo(root)
    lanes = await Lanes.make(repo, base, ContainerSettings(host=host), image, root)
    ids = [(await b._inspect() or {}).get("Id", "") for b in lanes.backends]
    engine = engine_pids(host)
    report: dict[str, Any] = {"load_avg_1m_start": round(os.getloadavg()[0], 1), "round_lanes": ROUND_LANES}
    try:
        yard = sorted([await lanes.baseline() for _ in range(5)])
        report["baseline_8_exec_true_ms"] = round(yard[2] * 1000, 1)
        k = 0
        for mode, use_agent in (("agent", True), ("one exec", False)):
            for backend in lanes.backends:
                backend.use_agent = use_agent
            await lanes.round()
            for label in ("changed", "one changed", "unchanged"):
                walls = []
                cpu = {"host": 0.0, "host_git": 0.0, "containers": 0.0, "engine": 0.0}
                profile.take()
                for _ in range(rounds):
                    one = None
                    if label == "changed":
                        await lanes.change(k)
                    elif label == "one changed":
                        one = await lanes.change_one(k)
                    k += 1
                    before = cpu_now(ids, engine)
                    profile.on = True
                    walls.append(await lanes.round(one))
                    profile.on = False
                    after = cpu_now(ids, engine)
                    for key in cpu:
                        cpu[key] += after[key] - before[key]
                times = profile.take()
                report[f"{mode}, {label}"] = {
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
    return report


def table(report: dict[str, Any]) -> str:
    """The report as plain text: per kind of round its wall time, CPU, and steps."""
    lines = [
        f"{report['round_lanes']} lanes; load {report['load_avg_1m_start']} -> {report['load_avg_1m']}; "
        f"8 concurrent exec of true: {report['baseline_8_exec_true_ms']} ms"
    ]
    for name, data in report.items():
        if not isinstance(data, dict):
            continue
        cpu = data["cpu_ms_per_round"]
        lines.append(
            f"\n{name}: wall {data['wall_mean_ms']} ms; CPU per round: this process {cpu['host']} ms, "
            f"its git {cpu['host_git']} ms, the containers {cpu['containers']} ms, the engine "
            f"{cpu['engine']} ms"
        )
        lines.append(f"  {'step':52} {'per round':>9} {'sum ms':>8} {'mean ms':>8}")
        for step, v in data["steps"].items():
            lines.append(f"  {step:52} {v['per_round']:>9} {v['sum_per_round_ms']:>8} {v['mean_ms']:>8}")
    return "\n".join(lines)


def main() -> None:
    host = os.environ.get("PARAGENTS_TEST_DOCKER_HOST")
    if not host:
        sys.exit("set PARAGENTS_TEST_DOCKER_HOST (scripts/docker-testenv start DIR prints it)")
    image = _script("image", host=host)
    args = [a for a in sys.argv[1:] if a != "--json"]
    rounds = int(args[0]) if args else 6
    with tempfile.TemporaryDirectory(prefix="paragents-bench-profile-") as tmp:
        report = asyncio.run(run(host, image, Path(tmp), rounds))
    print(json.dumps(report, indent=1) if "--json" in sys.argv else table(report))


if __name__ == "__main__":
    main()
