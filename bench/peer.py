"""The peer row of ``python -m bench`` (``--only peer``): paragents against Toad, the Textual host of ACP
agents, on the same fake ACP agent (``bench/acp_stream_agent.py``) streaming the same reply at 50 and
200 tokens/s. Each host runs in its own fresh process, one after the other (never at the same time):
paragents by ``bench/peer_paragents.py`` with paragents' python, Toad by ``bench/toad_driver.py`` with
Toad's Python 3.14 (set up by ``bench/toad_python.py``). How each number is taken: ``bench/peer_probe.py``.

Target (issue 19): paragents' CPU per 1k tokens at most 0.5x Toad's, and its token→frame p99 never
above Toad's. Without Toad's Python the section says why it was skipped and how to set it up.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
from pathlib import Path
from typing import Any

from bench.common import isolated_env, r
from bench.toad_python import SETUP_HINT, default_prefix, toad_python

RATES = (50, 200)
REPO = Path(__file__).resolve().parents[1]
METRICS = ("cpu_ms_per_1k_tokens", "tok_to_frame_p50_ms", "tok_to_frame_p99_ms", "loop_lag_p99_ms", "fps")
CPU_TARGET = 0.5
"""paragents' CPU per 1k tokens ÷ Toad's must stay at or under this."""


def toad_status(prefix: Path | None = None) -> tuple[Path | None, str]:
    """Toad's python and its version, or None and why it cannot run."""
    python = toad_python(prefix or default_prefix())
    if not python.exists():
        return None, f"no Python 3.14 with Toad at {python}; set it up with: {SETUP_HINT}"
    code = "import toad, textual, sys; print(toad.get_version(), textual.__version__, sys.version.split()[0])"
    try:
        out = subprocess.run([str(python), "-c", code], capture_output=True, text=True, timeout=120)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return None, f"{python} does not run ({exc}); set it up again with: {SETUP_HINT}"
    if out.returncode != 0:
        tail = (out.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"{python} cannot import Toad ({tail}); set it up again with: {SETUP_HINT}"
    toad, textual, py = out.stdout.split()
    return python, f"Toad {toad}, Textual {textual}, Python {py}"


def _host(cmd: list[str], rate: int, tokens: int) -> dict[str, Any]:
    """Run one host process and return its JSON (each run in its own scratch root). Python may write
    its bytecode cache (this machine sets ``PYTHONDONTWRITEBYTECODE``): runs after the warm-up one
    find it, as every launch after the first does (the startup bench measures warm the same way)."""
    env = isolated_env()
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    sent = Path(env["BENCH_ROOT"]) / "sent.json"
    args = [*cmd, "--rate", str(rate), "--tokens", str(tokens), "--sent", str(sent)]
    timeout = tokens / rate * 30 + 240
    out = subprocess.run(args, env=env, cwd=REPO, capture_output=True, text=True, timeout=timeout)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if out.returncode != 0 or not lines:
        tail = (out.stderr or out.stdout).strip().splitlines()[-3:]
        raise RuntimeError(f"{args[0]} {args[2]} failed (exit {out.returncode}): " + " | ".join(tail))
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _median(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The first run's fields, with every metric the median over the runs."""
    merged = dict(runs[0])
    for key in (*METRICS, "loop_lag_max_ms", "cpu_pct"):
        values = [run[key] for run in runs if run.get(key) is not None]
        merged[key] = r(statistics.median(values), 1) if values else None
    merged["runs"] = len(runs)
    merged["text_ok"] = all(run.get("text_ok") for run in runs)
    return merged


def _ratio(a: float | None, b: float | None) -> float | None:
    return None if a is None or not b else r(a / b, 2)


def peer(seconds: float, repeat: int = 1, prefix: Path | None = None) -> dict[str, Any]:
    """Both hosts at every rate in :data:`RATES` (``repeat`` alternating runs each, medians)."""
    python, note = toad_status(prefix)
    if python is None:
        return {"skipped": note}
    paragents_cmd = [sys.executable, "-m", "bench.peer_paragents"]
    toad_cmd = [str(python), "-m", "bench.toad_driver", "--agent-python", sys.executable]
    report: dict[str, Any] = {"toad": note, "seconds": seconds, "repeat": repeat}
    for cmd in (paragents_cmd, toad_cmd):  # untimed warm-up: writes each host's bytecode cache
        _host(cmd, 200, 50)
    cpu_ratios: list[float | None] = []
    frame_ratios: list[float | None] = []
    for rate in RATES:
        tokens = int(rate * seconds)
        ours, theirs = [], []
        for _ in range(repeat):
            ours.append(_host(paragents_cmd, rate, tokens))
            theirs.append(_host(toad_cmd, rate, tokens))
        mine, toad = _median(ours), _median(theirs)
        row: dict[str, Any] = {
            "paragents": mine,
            "toad": toad,
            "cpu_ratio": _ratio(mine["cpu_ms_per_1k_tokens"], toad["cpu_ms_per_1k_tokens"]),
            "frame_p99_ratio": _ratio(mine["tok_to_frame_p99_ms"], toad["tok_to_frame_p99_ms"]),
            "lag_p99_ratio": _ratio(mine["loop_lag_p99_ms"], toad["loop_lag_p99_ms"]),
        }
        report[str(rate)] = row
        cpu_ratios.append(row["cpu_ratio"])
        frame_ratios.append(row["frame_p99_ratio"])
    known_cpu = [x for x in cpu_ratios if x is not None]
    known_frame = [x for x in frame_ratios if x is not None]
    report["cpu_ratio_max"] = max(known_cpu) if known_cpu else None
    report["frame_p99_ratio_max"] = max(known_frame) if known_frame else None
    return report


def peer_table(data: dict[str, Any]) -> str:
    """The peer section as a Markdown table (or the skip line)."""
    if "skipped" in data:
        return f"toad: skipped ({data['skipped']})"
    lines = [
        f"Peer: paragents vs {data['toad']} (one ACP session, the same fake agent; "
        f"{data['seconds']:g} s per run, median of {data['repeat']})",
        "",
        "| host | tok/s | CPU ms/1k tok | tok→frame p50 ms | tok→frame p99 ms | loop lag p99 ms | fps "
        "| whole reply |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for rate in RATES:
        row = data[str(rate)]
        for host in ("paragents", "toad"):
            cells = [row[host].get(k) for k in METRICS]
            text = " | ".join("" if c is None else str(c) for c in cells)
            lines.append(f"| {host} | {rate} | {text} | {'✔' if row[host].get('text_ok') else '✘'} |")
        cpu_ok = row["cpu_ratio"] is not None and row["cpu_ratio"] <= CPU_TARGET
        frame_ok = row["frame_p99_ratio"] is not None and row["frame_p99_ratio"] <= 1.0
        lines.append(
            f"| paragents/toad | {rate} | {row['cpu_ratio']} {'✔' if cpu_ok else '✘'} (≤ {CPU_TARGET}) | | "
            f"{row['frame_p99_ratio']} {'✔' if frame_ok else '✘'} (≤ 1) | {row['lag_p99_ratio']} | | |"
        )
    return "\n".join(lines)
