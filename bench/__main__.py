"""``uv run python -m bench [--quick] [--json-only]``: the paragents performance benchmark.

Runs every scenario in fresh child processes (the replay server in its own process, so its CPU is not
charged to the app) and prints a readable table to stderr-free stdout followed by one JSON object on
the last line. Streaming scenarios (N sessions × R tokens/s) run the real app and, right after, the
``Log`` baseline against the same server; ``baseline_ratio`` = app CPU per 1k tokens ÷ baseline's.
``--quick`` (CI) runs (1, 50), (8, 50) and startup with shorter streams, in under a minute; it reports
and never fails on times. ``sandbox`` (full run, or ``--only sandbox``) times the start-up cost that
bubblewrap adds to one ``run_command``. ``huge`` (not in ``--quick``: it renders a 390 KB reply, several
seconds) opens a stored 390 KB reply while typing; it reports key echo latency and how often it was
rendered. ``idle`` (also in ``--quick``) keeps 16 open sessions idle for 10 s and reports the app's CPU
and how often each timer fired. ``lanes`` (bench/lanes.py) times lane creation and one
conflict-prediction round of 8 lanes; ``lane_env`` (bench/lane_env.py, not in ``--quick``) times making a
lane of a real ~40-package uv project with its own ``.venv`` against ``git worktree add`` alone.
``mcp`` (bench/mcp_pool.py, not in ``--quick``) runs 8 sessions x 3
stdio MCP servers through the shared pool and reports the server processes (target 3), their RSS and
start cost. ``peer`` (bench/peer.py, not in ``--quick``) runs one ACP session in paragents and in Toad
on the same fake agent at 50 and 200 tok/s and compares them (skipped, saying how to set Toad's
Python up, when it is missing). ``remote`` (bench/remote.py, ``--only remote``; not in the default set:
it starts a Docker engine) times the container backend: exec of ``true``, lane creation, snapshot fetch.
Exit status is 0 unless a scenario crashed.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from bench.common import eprint, isolated_env, percentile, r
from bench.peer import peer, peer_table

PY = sys.executable
FULL = [(1, 50, False), (4, 50, False), (8, 50, False), (8, 200, False), (16, 30, True)]
QUICK = [(1, 50, False), (8, 50, False)]

TARGETS: dict[str, dict[str, float]] = {
    "8x50": {"tok_to_frame_p99_ms": 150, "loop_lag_p99_ms": 50, "cpu_pct": 60, "baseline_ratio": 1.5},
    "16x30": {"key_p99_ms": 100, "tokens_dropped": 0},
    "startup": {"ready_frame_s": 0.6},
    "reopen": {"reopen_s": 0.5, "rss_ratio_5000_vs_50": 2.0},
    "permissions": {"perm_p99_us": 2000},
    "sandbox": {"added_p50_ms": 30},
    "huge_reply": {"key_p99_ms": 100, "renders": 1},
    "idle": {"cpu_pct": 2},
    "lanes": {"create_max_s": 0.5, "round_p99_ms": 150},
    "lane_env": {"lane_p50_s": 3.0},
    "mcp": {"processes": 3},
    "peer": {"cpu_ratio_max": 0.5, "frame_p99_ratio_max": 1.0},
    "remote": {
        "exec_true_p50_ms": 60,
        "create_p50_s": 3,
        "snapshot_fetch_p50_ms": 150,
        "round_changed_p99_ms": 300,
    },
}


class Server:
    """The paced replay server child process (``bench.server``)."""

    def __init__(self, env: dict[str, str], rate: float, tokens: int) -> None:
        cmd = [PY, "-m", "bench.server", "--rate", str(rate), "--tokens", str(tokens)]
        self.proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env, text=True)
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()


def child(args: list[str], env: dict[str, str], timeout: float = 300) -> dict[str, Any]:
    """Run ``python -m bench.<args>`` and return the JSON object it prints last."""
    out = subprocess.run([PY, "-m", *args], env=env, capture_output=True, text=True, timeout=timeout)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        tail = (out.stderr or out.stdout).strip().splitlines()[-5:]
        raise RuntimeError(f"bench.{args[0]} failed (exit {out.returncode}): " + " | ".join(tail))
    return json.loads(lines[-1])


def streaming(n: int, rate: int, keys: bool, seconds: float) -> dict[str, Any]:
    """One (N, R) scenario: the app, then the Log baseline, against one paced server."""
    tokens = int(rate * seconds)
    env = isolated_env()
    server = Server(env, rate, tokens)
    try:
        base = ["--n", str(n), "--rate", str(rate), "--tokens", str(tokens), "--url", server.url]
        app = child(["bench.stream", "--mode", "app", *base, *(["--keys"] if keys else [])], env)
        log = child(["bench.stream", "--mode", "log", *base], isolated_env())
    finally:
        server.close()
    app["baseline_ratio"] = r(app["cpu_ms_per_1k_tokens"] / max(log["cpu_ms_per_1k_tokens"], 1), 2)
    app["baseline"] = log
    return app


def startup(runs: int) -> dict[str, Any]:
    """Process start → first frame (and → every panel, → restored history on screen, → all of it):
    empty state, then with 20 persisted sessions of 500 messages. Median of ``runs`` launches after
    one untimed launch that may write Python's bytecode cache."""
    result: dict[str, Any] = {}
    for label, seed in (("empty", None), ("20x500", ["--sessions", "20", "--messages", "500"])):
        env = isolated_env()
        if seed:
            child(["bench.startup", "seed", *seed, "--prefix", "seed"], env)
        firsts, readies, histories, alls = [], [], [], []
        # One untimed launch first, allowed to write Python's bytecode cache (__pycache__), as every
        # launch after the first one finds it: startup is measured warm (docs/performance.md).
        warm_env = {k: v for k, v in env.items() if k != "PYTHONDONTWRITEBYTECODE"}
        child(["bench.startup", "start", "--t0", repr(time.time())], warm_env)
        for _ in range(runs):
            # "empty" gets a fresh state dir each time (a run creates its first session and keeps it)
            run_env = env if seed else isolated_env()
            marks = child(["bench.startup", "start", "--t0", repr(time.time())], run_env)
            firsts.append(marks["first_frame_s"])
            readies.append(marks["ready_frame_s"])
            histories.append(marks["history_frame_s"])
            alls.append(marks["all_history_s"])
        result[label] = {
            "first_frame_s": r(percentile(firsts, 50), 3),
            "ready_frame_s": r(percentile(readies, 50), 3),
            "history_frame_s": r(percentile(histories, 50), 3),
            "all_history_s": r(percentile(alls, 50), 3),
        }
    return result


def reopen() -> dict[str, Any]:
    """Reopen a closed 5,000-message session (and a 50-message one for the memory comparison)."""
    env = isolated_env()
    child(
        ["bench.startup", "seed", "--sessions", "1", "--messages", "5000", "--closed", "--prefix", "big"], env
    )
    child(
        ["bench.startup", "seed", "--sessions", "1", "--messages", "50", "--closed", "--prefix", "small"], env
    )
    big = child(["bench.startup", "reopen", "--name", "big1"], env)
    small = child(["bench.startup", "reopen", "--name", "small1"], env)
    return {
        "reopen_s": r(big["reopen_s"], 3),
        "reopen_50_s": r(small["reopen_s"], 3),
        "rss_5000_mb": r(big["rss_after_mb"]),
        "rss_50_mb": r(small["rss_after_mb"]),
        "rss_ratio_5000_vs_50": r(big["rss_after_mb"] / small["rss_after_mb"], 2),
        "rss_growth_5000_mb": r(big["rss_after_mb"] - big["rss_before_mb"]),
        "rss_growth_50_mb": r(small["rss_after_mb"] - small["rss_before_mb"]),
        "mounted_entries": big["mounted"],
    }


def micro() -> dict[str, Any]:
    """Permission decision and SSE ceiling."""
    from bench.micro import permission_decision, run_sse

    env = isolated_env()
    project = Path(env["BENCH_ROOT"]) / "project"
    result = permission_decision(project)
    server = Server(env, 0, 20000)
    try:
        result.update(run_sse(server.url, 20000))
    finally:
        server.close()
    return result


def huge_reply() -> dict[str, Any]:
    """Open a stored 390 KB reply (200 code blocks, 50 tables) while typing (bench/huge.py)."""
    return child(["bench.huge"], isolated_env())


def verdicts(report: dict[str, Any]) -> dict[str, bool | None]:
    """Which targets are met (None: not measured in this run)."""
    found: dict[str, bool | None] = {}
    sources: dict[str, Any] = {
        "8x50": report["streaming"].get("8x50"),
        "16x30": report["streaming"].get("16x30"),
        "startup": report.get("startup", {}).get("20x500"),
        "reopen": report.get("reopen"),
        "permissions": report.get("micro"),
        "sandbox": report.get("sandbox"),
        "huge_reply": report.get("huge_reply"),
        "idle": report.get("idle"),
        "lanes": report.get("lanes"),
        "lane_env": report.get("lane_env"),
        "mcp": report.get("mcp"),
        "peer": report.get("peer"),
        "remote": report.get("remote"),
    }
    for name, limits in TARGETS.items():
        data = sources[name]
        for key, limit in limits.items():
            value = None if data is None else data.get(key)
            found[f"{name}.{key}<={limit}"] = None if value is None else value <= limit
    md = report["streaming"].get("8x50")
    found["8x50.markdown_ok"] = None if md is None else bool(md.get("markdown_ok"))
    return found


COLUMNS = [
    ("tok_to_frame_p50_ms", "tok→frame p50"),
    ("tok_to_frame_p99_ms", "p99 ms"),
    ("loop_lag_p99_ms", "lag p99"),
    ("loop_lag_max_ms", "lag max"),
    ("cpu_pct", "CPU %"),
    ("cpu_ms_per_1k_tokens", "CPU ms/1k tok"),
    ("baseline_ratio", "× Log"),
    ("fps", "fps"),
    ("rss_growth_mb", "RSS +MB"),
    ("rss_growth_after_mb", "after"),
    ("key_p99_ms", "key p99"),
    ("focus_key_p99_ms", "f6 p99"),
    ("tokens_dropped", "dropped"),
]


def table(report: dict[str, Any]) -> str:
    """A Markdown table of the report."""
    lines = []
    if report["streaming"]:
        lines += [
            "| scenario | " + " | ".join(h for _, h in COLUMNS) + " |",
            "|---" * (len(COLUMNS) + 1) + "|",
        ]
    for name, data in report["streaming"].items():
        for label, row in ((f"{name} app", data), (f"{name} Log baseline", data["baseline"])):
            cells = ["" if row.get(k) is None else str(row.get(k)) for k, _ in COLUMNS]
            lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append("")
    for section in (
        "startup",
        "reopen",
        "micro",
        "sandbox",
        "huge_reply",
        "idle",
        "lanes",
        "lane_env",
        "mcp",
        "remote",
    ):
        if section in report:
            lines.append(f"- **{section}**: " + json.dumps(report[section]))
    lines.append("")
    lines.append(
        "Targets: "
        + ", ".join(
            f"{k} {'✔' if v else '✘' if v is False else '–'}" for k, v in report["targets_met"].items()
        )
    )
    return "\n".join(lines)


def main() -> int:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument(
        "--quick", action="store_true", help="CI smoke run: (1,50), (8,50), startup, idle; about 90 s"
    )
    parser.add_argument(
        "--only",
        default="",
        help="comma list of sections: stream,startup,reopen,micro,sandbox,huge,idle,lanes,lane_env,mcp,peer,"
        "remote",
    )
    parser.add_argument(
        "--seconds", type=float, default=0, help="stream length per scenario (default 8; quick 4)"
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="peer section: alternating runs per host and rate (medians)"
    )
    args = parser.parse_args()
    started = time.perf_counter()
    seconds = args.seconds or (4 if args.quick else 8)
    sections = (
        set(args.only.split(","))
        if args.only
        else {
            "stream",
            "startup",
            "reopen",
            "micro",
            "sandbox",
            "huge",
            "idle",
            "lanes",
            "lane_env",
            "mcp",
            "peer",
        }
    )
    if args.quick:
        sections = sections & {"stream", "startup", "idle"}
    report: dict[str, Any] = {"quick": args.quick, "seconds_per_scenario": seconds, "streaming": {}}
    status = 0
    try:
        if "stream" in sections:
            for n, rate, keys in QUICK if args.quick else FULL:
                eprint(f"bench: {n} sessions × {rate} tok/s ...")
                report["streaming"][f"{n}x{rate}"] = streaming(n, rate, keys, seconds)
        if "startup" in sections:
            eprint("bench: startup ...")
            report["startup"] = startup(1 if args.quick else 3)
        if "reopen" in sections:
            eprint("bench: reopen ...")
            report["reopen"] = reopen()
        if "micro" in sections:
            eprint("bench: permissions, SSE ...")
            report["micro"] = micro()
        if "sandbox" in sections:
            eprint("bench: sandbox start-up ...")
            report["sandbox"] = child(["bench.sandbox"], isolated_env())
        if "idle" in sections:
            eprint("bench: 16 idle sessions, 10 s ...")
            report["idle"] = child(["bench.idle", "--seconds", "10"], isolated_env())
        if "lanes" in sections:
            eprint("bench: lanes (creation, prediction rounds) ...")
            report["lanes"] = child(["bench.lanes"], isolated_env())
        if "lane_env" in sections:
            eprint("bench: lane_env (a lane of a real uv project with its own .venv) ...")
            report["lane_env"] = child(["bench.lane_env"], isolated_env(), timeout=1800)
        if "mcp" in sections:
            eprint("bench: MCP pool, 8 sessions x 3 stdio servers ...")
            report["mcp"] = child(["bench.mcp_pool"], isolated_env())
        if "remote" in sections:
            eprint("bench: remote, the container backend on a local Docker engine ...")
            report["remote"] = child(["bench.remote"], isolated_env())
        if "huge" in sections:
            eprint("bench: huge stored reply ...")
            report["huge_reply"] = huge_reply()
        if "peer" in sections:
            eprint("bench: peer, paragents vs Toad on one ACP agent, 50 and 200 tok/s ...")
            report["peer"] = peer(seconds, args.repeat)
    except (RuntimeError, subprocess.TimeoutExpired) as exc:
        report["error"] = str(exc)
        status = 1
    report["total_s"] = r(time.perf_counter() - started)
    report["targets_met"] = verdicts(report)
    print(table(report))
    if "peer" in report:
        print("\n" + peer_table(report["peer"]))
    print(json.dumps(report))
    return status


if __name__ == "__main__":
    sys.exit(main())
