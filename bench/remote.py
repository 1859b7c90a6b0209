"""``python -m bench.remote``: the container backend on a local Docker engine (issue 31).

Uses the engine in ``PARAGENTS_TEST_DOCKER_HOST``, else starts a private dockerd with
``scripts/docker-testenv`` (stopped at the end); the lane image is the offline test image. Measures the
round trip of ``true`` through :meth:`ContainerBackend.exec` (30 runs), lane creation from the warm
image up to a checked-out /workspace (5 lanes), the snapshot fetch of a one-file change (15 runs), and
a prediction round over 8 container lanes as the app runs it (``LaneWatcher.run_round``: the lanes'
snapshots asked of their agents a few at a time and mirrored into their worktrees here, then the
merge-tree prediction on the fetched trees; 20 rounds where every lane changed one file of its own,
one in four also a file the next lane changed; 20 rounds after one lane's write, which sync that lane
only, as a round after a session's tool call does; and 10 rounds where nothing changed).

A loaded machine makes every figure larger, so the rounds come with the same run's yardstick: 8
concurrent ``exec("true")`` on the same 8 lanes (``round_baseline_ms``, median of 10 taken before and
after the rounds) and each round figure divided by it (``*_ratio``); the CPU a round used (this process,
its git processes, the 8 containers' cgroups: ``round_*_cpu_ms``); and the same rounds with the agents
off (one exec per snapshot, the phase-2 path: ``round_one_exec_*``). Prints one JSON object
(``skipped`` with the reason when no engine can be had)."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import shutil
import subprocess
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.common import percentile, r
from paragents.backend_settings import ContainerSettings
from paragents.backends.base import LaneSpec
from paragents.backends.bundle import known_commits
from paragents.backends.container import ContainerBackend
from paragents.backends.lane import RemoteLane
from paragents.backends.rounds import RoundSyncer
from paragents.lanes.predict import Predictor
from paragents.sessions.lanes import local_only
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
    load_start = r(os.getloadavg()[0])
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
    exec_fetches = []
    for i in range(15):  # the same through one exec each (the agent's fallback)
        await lane.write_file("m1.py", f"def f1(x):\n    return x - {i + 100}\n".encode())
        started = time.perf_counter()
        snap = await lane._snapshot_exec(await known_commits(lane.spec))
        exec_fetches.append(time.perf_counter() - started)
        assert snap.changed
    for lane in lanes:
        await lane._remove()
        await lane.close()
    rounds = await measure_rounds(repo, base, settings, image, root)

    def ms(xs: list[float], q: int) -> float | None:
        value = percentile(xs, q)
        return None if value is None else r(value * 1000)

    base_ms = rounds["baseline"] * 1000

    def ratio(xs: list[float], q: int) -> float | None:
        value = ms(xs, q)
        return None if value is None or not base_ms else round(value / base_ms, 2)

    found = {
        "round_lanes": ROUND_LANES,
        "round_changed_p50_ms": ms(rounds["changed"], 50),
        "round_changed_p99_ms": ms(rounds["changed"], 99),
        "round_one_changed_p50_ms": ms(rounds["one_changed"], 50),
        "round_one_changed_p99_ms": ms(rounds["one_changed"], 99),
        "round_unchanged_p50_ms": ms(rounds["unchanged"], 50),
        "round_unchanged_p99_ms": ms(rounds["unchanged"], 99),
        "round_baseline_ms": r(base_ms),
        "round_changed_p50_ratio": ratio(rounds["changed"], 50),
        "round_changed_p99_ratio": ratio(rounds["changed"], 99),
        "round_one_changed_p99_ratio": ratio(rounds["one_changed"], 99),
        "round_unchanged_p50_ratio": ratio(rounds["unchanged"], 50),
        "round_unchanged_p99_ratio": ratio(rounds["unchanged"], 99),
        "round_changed_cpu_ms": rounds["changed_cpu"],
        "round_one_changed_cpu_ms": rounds["one_changed_cpu"],
        "round_unchanged_cpu_ms": rounds["unchanged_cpu"],
        "round_agent_fallbacks": rounds["fallbacks"],
        "round_one_exec_changed_p50_ms": ms(rounds["one_exec_changed"], 50),
        "round_one_exec_changed_p99_ms": ms(rounds["one_exec_changed"], 99),
        "round_one_exec_changed_p99_ratio": ratio(rounds["one_exec_changed"], 99),
        "round_one_exec_one_changed_p50_ms": ms(rounds["one_exec_one_changed"], 50),
        "round_one_exec_one_changed_p99_ms": ms(rounds["one_exec_one_changed"], 99),
        "round_one_exec_unchanged_p50_ms": ms(rounds["one_exec_unchanged"], 50),
        "round_one_exec_unchanged_p99_ms": ms(rounds["one_exec_unchanged"], 99),
        "round_one_exec_changed_cpu_ms": rounds["one_exec_changed_cpu"],
        "round_one_exec_unchanged_cpu_ms": rounds["one_exec_unchanged_cpu"],
        "round_conflicts_found": rounds["conflicts"],
        "exec_true_p50_ms": ms(trips, 50),
        "exec_true_p99_ms": ms(trips, 99),
        "create_p50_s": r(percentile(creates, 50)),
        "create_max_s": r(max(creates)),
        "snapshot_fetch_p50_ms": ms(fetches, 50),
        "snapshot_fetch_p99_ms": ms(fetches, 99),
        "snapshot_fetch_one_exec_p50_ms": ms(exec_fetches, 50),
        "load_avg_1m_start": load_start,
        "load_avg_1m": r(os.getloadavg()[0]),
    }
    return found


class Lanes:
    """``ROUND_LANES`` container lanes with worktrees here, and rounds over them as the app runs
    them (``LaneWatcher.run_round``: the remote lanes synced, then ``Predictor.round``)."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self.backends: list[ContainerBackend] = []
        self.lanes: list[RemoteLane] = []
        self.rounds = RoundSyncer()
        self.records: list[LaneRecord] = []
        self.predictor = Predictor(repo)
        self.conflicts = 0

    @classmethod
    async def make(cls, repo: Path, base: str, settings: ContainerSettings, image: str, root: Path) -> Lanes:
        lanes = cls(repo)
        for i in range(ROUND_LANES):
            path = root / "lanes" / f"round{i}"
            subprocess.run(
                ["git", "worktree", "add", "-q", "-b", f"paragents/round{i}", str(path), base],
                cwd=repo, check=True, capture_output=True,
            )  # fmt: skip
            spec = LaneSpec(repo=repo, name=f"round{i}", base_commit=base, worktree=path)
            backend = ContainerBackend(spec, settings, image)
            await backend.create()
            lanes.backends.append(backend)
            lanes.lanes.append(RemoteLane(backend, path))
            lanes.records.append(
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
        return lanes

    async def change(self, k: int) -> None:
        """The agents' writes (not timed): every lane changes a file of its own; one round in four
        pairs of lanes also change a file the pair shares (predicted conflicts)."""
        for i, backend in enumerate(self.backends):
            await backend.write_file(f"m{i}.py", f"def f{i}(x):\n    return x * {k + 2}\n".encode())
            if k % 4 == 0:
                await backend.write_file(f"m{20 + i // 2}.py", f"def g(x):\n    return {i} + {k}\n".encode())

    async def change_one(self, k: int) -> int:
        """One lane's write (not timed): lane ``k % ROUND_LANES`` changes a file of its own; its index."""
        i = k % ROUND_LANES
        await self.backends[i].write_file(f"m{i}.py", f"def f{i}(x):\n    return x - {k + 2}\n".encode())
        return i

    async def round(self, one: int | None = None) -> float:
        """One round as ``LaneWatcher.run_round`` runs it on remote lanes (all of them, or after a
        write of lane ``one``'s session only that lane, as the watcher's ``only`` says); its wall time."""
        started = time.perf_counter()
        todo = self.lanes if one is None else [self.lanes[one]]
        only = None if one is None else frozenset({self.records[one].name})
        synced = await self.rounds.sync(todo)
        assert not synced.failed and not synced.late, synced
        found = await self.predictor.round(self.records, local_only(self.records, only), synced.trees)
        self.conflicts = max(self.conflicts, len(found))
        return time.perf_counter() - started

    async def baseline(self) -> float:
        """The wall time of one ``exec("true")`` on every lane at once."""
        started = time.perf_counter()
        await asyncio.gather(*(b.exec("true") for b in self.backends))
        return time.perf_counter() - started

    async def close(self) -> None:
        self.predictor.close()
        for backend in self.backends:
            await backend._remove()
            await backend.close()


def engine_pids(host: str) -> list[int]:
    """The engine's own processes (dockerd, containerd, the containers' shims) for an engine
    started by ``scripts/docker-testenv`` (their command lines name its directory); [] otherwise."""
    folder = str(Path(host.removeprefix("unix://")).parent) if host.startswith("unix://") else ""
    if not folder.startswith("/tmp/"):
        return []
    found = []
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
        except OSError:
            continue
        if folder.encode() + b"/" in cmdline and b"docker-testenv" not in cmdline:
            found.append(int(proc.name))
    return found


def cpu_now(containers: list[str], engine: Sequence[int] = ()) -> dict[str, float]:
    """CPU seconds used so far: this process, its finished children (the host's git), the lanes'
    containers (cgroup v1 ``cpuacct.usage`` or v2 ``cpu.stat``) and the engine's processes with
    their finished children (``runc`` for each exec); 0 where not readable."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    inside = 0.0
    for cid in containers:
        for path in (
            f"/sys/fs/cgroup/cpuacct/docker/{cid}/cpuacct.usage",
            f"/sys/fs/cgroup/system.slice/docker-{cid}.scope/cpu.stat",
        ):
            try:
                text = Path(path).read_text()
            except OSError:
                continue
            if path.endswith("cpu.stat"):
                usec = next((ln.split()[1] for ln in text.splitlines() if ln.startswith("usage_usec")), "0")
                inside += int(usec) / 1e6
            else:
                inside += int(text.strip()) / 1e9
            break
    ticks = 0
    for pid in engine:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        ticks += sum(int(f) for f in fields[11:15])  # utime stime cutime cstime
    return {
        "host": me.ru_utime + me.ru_stime,
        "host_git": kids.ru_utime + kids.ru_stime,
        "containers": inside,
        "engine": ticks / os.sysconf("SC_CLK_TCK"),
    }


async def measure_rounds(
    repo: Path, base: str, settings: ContainerSettings, image: str, root: Path
) -> dict[str, Any]:
    """Prediction rounds over ``ROUND_LANES`` container lanes (see the module docstring)."""
    lanes = await Lanes.make(repo, base, settings, image, root)
    ids = [(await b._inspect() or {}).get("Id", "") for b in lanes.backends]
    engine = engine_pids(settings.host or "")
    found: dict[str, Any] = {}
    try:
        yard = [await lanes.baseline() for _ in range(5)]
        k = 0
        for mode, agent in (("", True), ("one_exec_", False)):
            for backend in lanes.backends:
                backend.use_agent = agent
            await lanes.round()
            execs = sum(b.snapshot_execs for b in lanes.backends)
            for kind, count in (("changed", 22), ("one_changed", 22), ("unchanged", 10)):
                walls, cpu = [], {"host": 0.0, "host_git": 0.0, "containers": 0.0, "engine": 0.0}
                for i in range(count):
                    one = None
                    if kind == "changed":
                        await lanes.change(k)
                    elif kind == "one_changed":
                        one = await lanes.change_one(k)
                    k += 1
                    before = cpu_now(ids, engine)
                    elapsed = await lanes.round(one)
                    after = cpu_now(ids, engine)
                    if kind != "unchanged" and i < 2:
                        continue  # warm-up
                    walls.append(elapsed)
                    for key in cpu:
                        cpu[key] += after[key] - before[key]
                found[f"{mode}{kind}"] = walls
                found[f"{mode}{kind}_cpu"] = {key: r(v / len(walls) * 1000) for key, v in cpu.items()}
            if agent:
                found["fallbacks"] = sum(b.snapshot_execs for b in lanes.backends) - execs
        yard += [await lanes.baseline() for _ in range(5)]
        found["baseline"] = sorted(yard)[len(yard) // 2]
    finally:
        await lanes.close()
    found["conflicts"] = lanes.conflicts
    return found


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
