"""``eval gate RUN``: pass or fail a run against thresholds, for CI (docs/eval.md, "Gate").

- ``--min-resolved R``: every target (or ``--target``) resolved at least the share R of its trials;
- ``--max-regression D`` with ``--baseline B``: its rate fell by at most D below the baseline's on
  their common tasks (the point estimate; the report shows the interval);
- ``--max-cost-per-solve USD``: its cost per resolved trial is at most USD (a run that solved nothing,
  or whose model has no prices, fails: the cost per solve cannot be shown to be under the cap).

Exit code 0 when every check passes, :data:`~paragents.eval.errors.EXIT_GATE` (8) with one line naming
the first failed check otherwise. Nothing here imports Textual."""

from __future__ import annotations

from dataclasses import dataclass

from paragents.eval.compare import Side, compare_runs, pick
from paragents.eval.errors import EXIT_GATE, EXIT_OK, EvalError
from paragents.eval.results import TargetInfo, load_results
from paragents.eval.scores import score_target


@dataclass(frozen=True)
class GateResult:
    """``code`` (0 or 8), the failed checks' one-line ``reasons`` and the checks that ``passed``."""

    code: int
    reasons: list[str]
    passed: list[str]


def gate(
    run: str,
    *,
    min_resolved: float | None = None,
    max_regression: float | None = None,
    max_cost_per_solve: float | None = None,
    baseline: str | None = None,
    target: str | None = None,
) -> GateResult:
    """Check ``run`` (a run directory) against the thresholds given (see the module docstring)."""
    if min_resolved is None and max_regression is None and max_cost_per_solve is None:
        raise EvalError(
            "eval gate: give at least one of --min-resolved, --max-regression, --max-cost-per-solve"
        )
    if max_regression is not None and baseline is None:
        raise EvalError("eval gate: --max-regression needs --baseline RUN")
    for name, value in (("--min-resolved", min_resolved), ("--max-regression", max_regression)):
        if value is not None and not 0 <= value <= 1:
            raise EvalError(f"eval gate: {name} is a share between 0 and 1 (0.7 = 70%), not {value}")
    first = pick(run + (f"#{target}" if target else "")) if target or "#" in run else None
    sides = [first] if first is not None else [pick(f"{run}#{t.label}") for t in _targets(run)]
    reasons: list[str] = []
    passed: list[str] = []
    for side in sides:
        score = score_target(side.target, side.trials, side.run.manifest.trials)
        who = side.target
        if min_resolved is not None:
            text = f"{who}: resolved {score.rate:.1%} ({score.resolved}/{score.trials})"
            if score.rate + 1e-12 < min_resolved:
                reasons.append(f"{text} is below --min-resolved {min_resolved:.1%}")
            else:
                passed.append(f"{text} >= {min_resolved:.1%}")
        if max_cost_per_solve is not None:
            if score.cost is None:
                reasons.append(f"{who}: cost per solve cannot be checked: the model has no prices")
            elif not score.resolved:
                reasons.append(f"{who}: nothing was resolved, so the cost per solve is unbounded")
            elif (score.cost_per_solve or 0.0) > max_cost_per_solve:
                reasons.append(
                    f"{who}: cost per solve ${score.cost_per_solve:.4f} is above --max-cost-per-solve "
                    f"${max_cost_per_solve:.4f}"
                )
            else:
                passed.append(
                    f"{who}: cost per solve ${score.cost_per_solve:.4f} <= ${max_cost_per_solve:.4f}"
                )
        if max_regression is not None and baseline is not None:
            base = _baseline_side(baseline, side)
            cmp = compare_runs(base, side)
            text = f"{who}: {cmp.difference:+.1%} against {base.label}"
            if cmp.regression > max_regression + 1e-12:
                reasons.append(f"{text} is a regression above --max-regression {max_regression:.1%}")
            else:
                passed.append(f"{text} (at most -{max_regression:.1%} allowed)")
    return GateResult(EXIT_GATE if reasons else EXIT_OK, reasons, passed)


def _targets(run: str) -> list[TargetInfo]:

    return load_results(run).manifest.targets


def _baseline_side(baseline: str, side: Side) -> Side:
    """The baseline's side for ``side``: ``B#TARGET`` as given, else the same target label, else its
    only target."""
    if "#" in baseline:
        return pick(baseline)
    labels = [t.label for t in load_results(baseline).manifest.targets]
    if side.target in labels:
        return pick(f"{baseline}#{side.target}")
    if len(labels) == 1:
        return pick(f"{baseline}#{labels[0]}")
    raise EvalError(f"--baseline {baseline}: name its target as {baseline}#TARGET ({', '.join(labels)})")
