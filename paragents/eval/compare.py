"""``eval compare --baseline A --candidate B``: what changed per task between two runs (or two targets
of one run: ``DIR#model:NAME``), and a paired bootstrap confidence interval on the difference of the
resolution rates (tasks resampled together, fixed seed). Nothing here imports Textual."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path

from paragents.eval.errors import EvalError
from paragents.eval.results import RunResults, TrialResult, load_results
from paragents.eval.scores import BOOTSTRAP, LEVEL, SEED, TargetScore, per_task_rates, score_target


@dataclass(frozen=True)
class Side:
    """One side of a comparison: the run, its directory, the target compared, its trials."""

    run: RunResults
    where: str
    target: str
    trials: list[TrialResult]

    @property
    def label(self) -> str:
        return f"{self.where}#{self.target}"


def pick(where: str) -> Side:
    """``DIR`` (a run with one target, or the first) or ``DIR#TARGET``; EvalError naming what is wrong."""
    folder, _, target = where.partition("#")
    run = load_results(Path(folder))
    labels = [t.label for t in run.manifest.targets]
    if not target:
        if len(labels) > 1:
            raise EvalError(
                f"{folder} has {len(labels)} targets ({', '.join(labels)}): name one as {folder}#TARGET"
            )
        target = labels[0]
    if target not in labels:
        raise EvalError(f"{folder} has no target {target!r} (it has {', '.join(labels)})")
    return Side(run, folder, target, [t for t in run.trials if t.target == target])


@dataclass(frozen=True)
class TaskChange:
    """One task's resolution rate on each side (None: not in that run) and the change."""

    task: str
    baseline: float | None
    candidate: float | None

    @property
    def change(self) -> str:
        if self.baseline is None:
            return "new"
        if self.candidate is None:
            return "gone"
        if self.candidate > self.baseline:
            return "fixed" if self.baseline == 0 else "better"
        if self.candidate < self.baseline:
            return "broken" if self.candidate == 0 else "worse"
        return "same"


@dataclass(frozen=True)
class Comparison:
    """Both sides' scores, the per-task changes, the difference of the rates over the common tasks
    (candidate - baseline) and its interval."""

    baseline: Side
    candidate: Side
    base_score: TargetScore
    cand_score: TargetScore
    tasks: list[TaskChange]
    difference: float
    ci: tuple[float, float]

    @property
    def regression(self) -> float:
        """How much the candidate's rate fell below the baseline's on the common tasks (0 when it rose)."""
        return max(0.0, -self.difference)


def paired_bootstrap(pairs: list[tuple[float, float]], *, seed: int = SEED) -> tuple[float, float]:
    """Percentile interval of mean(candidate - baseline) resampling the paired tasks."""
    if not pairs:
        return (0.0, 0.0)
    rng = random.Random(seed)
    diffs = [c - b for b, c in pairs]
    n = len(diffs)
    means = sorted(sum(diffs[rng.randrange(n)] for _ in range(n)) / n for _ in range(BOOTSTRAP))
    return (
        round(means[int((1 - LEVEL) / 2 * BOOTSTRAP)], 4),
        round(means[int((1 + LEVEL) / 2 * BOOTSTRAP) - 1], 4),
    )


def compare_runs(baseline: Side, candidate: Side) -> Comparison:
    """Compare two sides (see the module docstring)."""
    base_rates = per_task_rates(baseline.trials)
    cand_rates = per_task_rates(candidate.trials)
    ids = sorted(set(base_rates) | set(cand_rates))
    changes = [TaskChange(t, base_rates.get(t), cand_rates.get(t)) for t in ids]
    common = [(base_rates[t], cand_rates[t]) for t in ids if t in base_rates and t in cand_rates]
    diff = sum(c - b for b, c in common) / len(common) if common else 0.0
    return Comparison(
        baseline,
        candidate,
        score_target(baseline.label, baseline.trials, baseline.run.manifest.trials),
        score_target(candidate.label, candidate.trials, candidate.run.manifest.trials),
        changes,
        round(diff, 4),
        paired_bootstrap(common),
    )


def render_comparison(cmp: Comparison) -> str:
    """The comparison as Markdown (plain text in a terminal)."""
    b, c = cmp.base_score, cmp.cand_score
    common = sum(1 for t in cmp.tasks if t.change not in ("new", "gone"))
    lines = [
        f"# eval compare: {cmp.baseline.label} -> {cmp.candidate.label}",
        "",
        "| | baseline | candidate |",
        "|---|---|---|",
        f"| resolved | {b.resolved}/{b.trials} ({b.rate:.0%}) | {c.resolved}/{c.trials} ({c.rate:.0%}) |",
        f"| tokens | {b.tokens} | {c.tokens} |",
        f"| cost | {_usd(b.cost)} | {_usd(c.cost)} |",
        f"| asks | {b.burden.asks} | {c.burden.asks} |",
        "",
        f"Difference of the resolution rate (candidate - baseline, {common} common tasks): "
        f"{cmp.difference:+.1%}, {int(LEVEL * 100)}% CI [{cmp.ci[0]:+.1%}, {cmp.ci[1]:+.1%}]",
        "",
        "| task | baseline | candidate | change |",
        "|---|---|---|---|",
    ]
    for t in cmp.tasks:
        lines.append(f"| {t.task} | {_rate(t.baseline)} | {_rate(t.candidate)} | {t.change} |")
    return "\n".join(lines) + "\n"


def _rate(value: float | None) -> str:
    return "-" if value is None else f"{value:.0%}"


def _usd(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:.4f}"
