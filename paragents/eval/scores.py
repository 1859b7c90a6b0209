"""Scores of a run, per target (docs/eval.md, "Scores"): resolution with a bootstrap confidence
interval over tasks, pass@1 and pass@k (Chen et al.'s unbiased estimator, k = the trials per task),
tokens, cost and cost per solve, wall time, turns, and the human burden per trial and per solve.

The confidence intervals resample tasks (a task's trials stay together) with a fixed seed, so the same
results always give the same interval. Nothing here imports Textual."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from math import comb

from paragents.eval.results import Burden, RunResults, TrialResult

BOOTSTRAP = 2000
"""Resamples of a bootstrap interval."""
SEED = 20261201
"""Seed of the bootstrap (a fixed seed: the same results, the same interval)."""
LEVEL = 0.95


def pass_at_k(n: int, c: int, k: int) -> float:
    """The chance that at least one of ``k`` trials drawn from ``n`` (``c`` of them resolved) resolves:
    ``1 - C(n-c, k) / C(n, k)`` (1.0 when ``n - c < k``)."""
    if k <= 0 or n <= 0 or k > n:
        raise ValueError(f"pass@k needs 0 < k <= n (k={k}, n={n})")
    if n - c < k:
        return 1.0
    return 1.0 - comb(n - c, k) / comb(n, k)


def bootstrap_mean(values: list[float], *, seed: int = SEED, rounds: int = BOOTSTRAP) -> tuple[float, float]:
    """A percentile bootstrap interval (:data:`LEVEL`) of the mean of ``values`` (one per task)."""
    if not values:
        return (0.0, 0.0)
    rng = random.Random(seed)
    n = len(values)
    means = sorted(sum(values[rng.randrange(n)] for _ in range(n)) / n for _ in range(rounds))
    low = means[int((1 - LEVEL) / 2 * rounds)]
    high = means[min(rounds - 1, int((1 + LEVEL) / 2 * rounds))]
    return (round(low, 4), round(high, 4))


def per_task_rates(trials: list[TrialResult]) -> dict[str, float]:
    """Task id -> the share of its trials that resolved."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for t in trials:
        counts[t.task][0] += int(t.resolved)
        counts[t.task][1] += 1
    return {task: c / n for task, (c, n) in sorted(counts.items())}


@dataclass(frozen=True)
class TargetScore:
    """One target's scores (see the module docstring). ``cost`` is None when no trial was priced;
    ``cost_per_solve`` and ``burden_per_solve`` None when nothing was resolved."""

    target: str
    trials: int
    tasks: int
    resolved: int
    rate: float
    ci: tuple[float, float]
    pass_at_1: float
    pass_at_k: float
    k: int
    tokens: int
    estimated: bool
    cost: float | None
    cost_per_solve: float | None
    wall_seconds: float
    turns: int
    burden: Burden
    burden_per_solve: float | None
    errors: int

    def row(self) -> dict[str, object]:
        """The score as one JSON-able dict (``eval report --json``, the gate)."""
        return {
            "target": self.target,
            "trials": self.trials,
            "tasks": self.tasks,
            "resolved": self.resolved,
            "rate": round(self.rate, 4),
            "ci": list(self.ci),
            "pass_at_1": round(self.pass_at_1, 4),
            f"pass_at_{self.k}": round(self.pass_at_k, 4),
            "tokens": self.tokens,
            "cost": None if self.cost is None else round(self.cost, 6),
            "cost_per_solve": None if self.cost_per_solve is None else round(self.cost_per_solve, 6),
            "wall_seconds": round(self.wall_seconds, 1),
            "turns": self.turns,
            "burden": self.burden.model_dump(),
            "burden_per_solve": None if self.burden_per_solve is None else round(self.burden_per_solve, 3),
            "errors": self.errors,
        }


def score_target(label: str, trials: list[TrialResult], k: int) -> TargetScore:
    """The scores of one target's ``trials`` (``k`` trials per task)."""
    rates = per_task_rates(trials)
    by_task: dict[str, list[TrialResult]] = defaultdict(list)
    for t in trials:
        by_task[t.task].append(t)
    resolved = sum(1 for t in trials if t.resolved)
    kk = max(1, min(k, min((len(v) for v in by_task.values()), default=1)))
    p1 = sum(rates.values()) / len(rates) if rates else 0.0
    pk = (
        sum(pass_at_k(len(v), sum(t.resolved for t in v), kk) for v in by_task.values()) / len(by_task)
        if by_task
        else 0.0
    )
    priced = [t.cost for t in trials if t.cost is not None]
    cost = round(sum(priced), 9) if priced else None
    burden = sum((t.burden for t in trials), Burden())
    return TargetScore(
        target=label,
        trials=len(trials),
        tasks=len(by_task),
        resolved=resolved,
        rate=resolved / len(trials) if trials else 0.0,
        ci=bootstrap_mean(list(rates.values())),
        pass_at_1=p1,
        pass_at_k=pk,
        k=kk,
        tokens=sum(t.tokens for t in trials),
        estimated=any(t.estimated for t in trials),
        cost=cost,
        cost_per_solve=(cost / resolved) if cost is not None and resolved else None,
        wall_seconds=sum(t.wall_seconds for t in trials),
        turns=sum(t.turns for t in trials),
        burden=burden,
        burden_per_solve=(burden.total / resolved) if resolved else None,
        errors=sum(1 for t in trials if t.status == "error"),
    )


def score_run(results: RunResults) -> list[TargetScore]:
    """Every target's scores, in the run's target order."""
    k = results.manifest.trials
    return [
        score_target(t.label, [r for r in results.trials if r.target == t.label], k)
        for t in results.manifest.targets
    ]
