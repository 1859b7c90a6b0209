"""Shared helpers of the benchmark: the synthetic Markdown corpus, percentiles, RSS/CPU readers and an
isolated environment for child processes."""

from __future__ import annotations

import os
import resource
import sys
import tempfile
import time
from pathlib import Path

CHARS_PER_TOKEN = 4
"""One streamed read carries this many characters (1 token ≈ 4 characters)."""

_BLOCKS = [
    "## Plan\n\nI looked at **the failing test** and the `parse_args` helper. The problem is that the"
    " default value is computed *once*, when the module is imported, so later calls see stale data.\n\n",
    "- read `tests/test_cli.py` to see what it expects\n- change `parse_args` to build the default lazily\n"
    "- run the suite again and check **every** case\n\n",
    "```python\ndef parse_args(argv: list[str] | None = None) -> Namespace:\n    parser = build_parser()\n"
    "    args = parser.parse_args(argv)\n    if args.config is None:\n"
    "        args.config = default_config()\n"
    "    return args\n```\n\n",
    "| file | change | risk |\n|---|---|---|\n| `cli.py` | lazy default | low |\n"
    "| `config.py` | new helper | low |\n| `tests/test_cli.py` | new case | none |\n\n",
    "1. The first step keeps the public API unchanged.\n2. The second one adds a `default_config()` helper"
    " that reads the file each time.\n3. Finally the test checks both paths.\n\n",
    "> Note: the same pattern appears in `server.py`; I left it alone because it is not covered by"
    " this change, but it would be worth a follow-up.\n\n",
]


def corpus(n_chars: int, seed: int = 0) -> str:
    """Return ``n_chars`` characters of LLM-like Markdown (headings, prose with bold/inline code, lists,
    fenced code, a table, a quote), starting at block ``seed`` so panels differ. The text ends with a
    closed code fence when it is cut inside one."""
    out: list[str] = []
    size = 0
    i = seed
    while size < n_chars:
        block = _BLOCKS[i % len(_BLOCKS)]
        out.append(block)
        size += len(block)
        i += 1
    text = "".join(out)[:n_chars]
    if text.count("```") % 2:
        text += "\n```\n"
    return text


def huge_markdown(chars: int = 390_000, code_blocks: int = 200, tables: int = 50) -> str:
    """Return a long Markdown reply of at least ``chars`` characters with ``code_blocks`` fenced Python
    blocks (8 functions each) and ``tables`` tables (6 rows), between headings and prose."""
    parts: list[str] = []
    every = max(code_blocks // max(tables, 1), 1)
    for i in range(code_blocks):
        prose = "More words about the change and why it matters. " * 8
        parts.append(f"## Step {i}\n\nSome **prose** about `func_{i}`; {prose}\n\n")
        body = "".join(f"def f_{i}_{j}(x: int) -> int:\n    return x * {j} + {i}  # note\n" for j in range(8))
        parts.append(f"```python\n{body}```\n\n")
        if i % every == 0 and i // every < tables:
            rows = "".join(f"| a{i}{k} | `b{k}` | **c** {k} |\n" for k in range(6))
            parts.append(f"| col a | col b | col c |\n|---|---|---|\n{rows}\n")
    text = "".join(parts)
    filler = "Closing prose with some *emphasis* and a [link](https://example.com). " * 10 + "\n\n"
    return text + filler * max(0, -(-(chars - len(text)) // len(filler)))


def pieces(text: str) -> list[str]:
    """Cut ``text`` into :data:`CHARS_PER_TOKEN`-character reads (one token each)."""
    return [text[i : i + CHARS_PER_TOKEN] for i in range(0, len(text), CHARS_PER_TOKEN)]


def percentile(values: list[float], q: float) -> float | None:
    """Return the ``q`` percentile (0-100, nearest rank) of ``values``, or None when empty."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(0, min(len(ordered) - 1, round(q / 100 * len(ordered) + 0.5) - 1))
    return ordered[rank]


def rss_mb() -> float:
    """Return this process's resident set size in MB (from /proc/self/statm; ru_maxrss elsewhere)."""
    try:
        with open("/proc/self/statm") as fh:
            pages = int(fh.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 1e6
    except OSError:
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e3


def cpu_s() -> float:
    """Return this process's CPU time (user + system, all threads) in seconds."""
    return time.process_time()


def isolated_env(root: Path | None = None) -> dict[str, str]:
    """Return an environment for child processes whose HOME/config/state dirs live under ``root`` (a new
    temp dir when None), so the benchmark never reads or writes the real home directory."""
    root = root or Path(tempfile.mkdtemp(prefix="paragents-bench-"))
    env = dict(os.environ)
    for name in ("home", "config", "state", "project"):
        (root / name).mkdir(parents=True, exist_ok=True)
    env.update(
        HOME=str(root / "home"),
        PARAGENTS_CONFIG_DIR=str(root / "config"),
        PARAGENTS_STATE_DIR=str(root / "state"),
        PARAGENTS_MANAGED_SETTINGS=str(root / "managed-permissions.json"),
        BENCH_ROOT=str(root),
    )
    for var in ("OPENAI_API_KEY", "PARAGENTS_API_KEY", "PARAGENTS_BASE_URL", "PARAGENTS_MODEL"):
        env.pop(var, None)
    return env


def bench_root() -> Path:
    """The scratch root of this child process (set by :func:`isolated_env`)."""
    return Path(os.environ.get("BENCH_ROOT") or tempfile.mkdtemp(prefix="paragents-bench-"))


def r(value: float | None, digits: int = 1) -> float | None:
    """Round for the report (None stays None)."""
    return None if value is None else round(value, digits)


def eprint(*args: object) -> None:
    """Progress to stderr (stdout carries the JSON)."""
    print(*args, file=sys.stderr, flush=True)
