"""Record the committed run of the sample task set (``tests/eval/data/sample-run``): every sample task
once, by the scripted solver (``model:scripted`` at a loopback replay server, priced), answered by
``allow-safe``. CI replays it (tests/eval/test_replay.py) and must get the same scores.

    uv run python -m tests.eval.record_sample        # or scripts/eval-record-sample
"""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
import tempfile
from pathlib import Path

from paragents.eval.answers import load_policy
from paragents.eval.loader import load_tasks
from paragents.eval.runner import Endpoint, RunOptions, run_eval
from paragents.eval.targets import Target
from paragents.llm.replay import ReplayServer
from tests.eval.solver import SOLVER_MODEL, queue

DATA = Path(__file__).resolve().parent / "data" / "sample-run"
PRICES = {"input_price_per_mtok": 1.0, "output_price_per_mtok": 4.0}


async def record(dest: Path = DATA) -> Path:
    """Run the sample set against the solver in a temp dir and keep its results and cassettes in ``dest``."""
    tasks = load_tasks("sample")
    target = Target(f"model:{SOLVER_MODEL}", "model", SOLVER_MODEL, 1)
    with tempfile.TemporaryDirectory(prefix="paragents-eval-record-") as tmp:
        async with ReplayServer(models=[SOLVER_MODEL]) as server:
            queue(server, 1, 1, [t.id for t in tasks.tasks])
            options = RunOptions(
                tasks=tasks,
                tasks_spec="sample",
                targets=[target],
                out=Path(tmp) / "run",
                policy=load_policy("allow-safe"),
                endpoints={target.label: Endpoint(server.base_url)},
                shaping={"models": {SOLVER_MODEL: PRICES}, "max_retries": 0},
                parallel=4,
            )
            results = await run_eval(options)
        shutil.rmtree(dest, ignore_errors=True)
        (dest / "trials").mkdir(parents=True)
        shutil.copy(Path(tmp) / "run" / "results.json", dest / "results.json")
        for trial in results.trials:
            if trial.cassette:
                target_file = dest / trial.cassette
                target_file.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(Path(tmp) / "run" / trial.cassette, target_file)
    resolved = sum(t.resolved for t in results.trials)
    print(json.dumps({"dest": str(dest), "resolved": resolved, "trials": len(results.trials)}))
    return dest


if __name__ == "__main__":
    asyncio.run(record(Path(sys.argv[1]) if len(sys.argv) > 1 else DATA))
