"""Scores, comparisons, the gate and the reports, on results made by hand (no run needed): pass@k,
the bootstrap intervals (fixed seed: the same results, the same interval), per-task changes, the
gate's exit codes and one-line reasons, and reports that escape what they show."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from paragents.cli import main
from paragents.eval.compare import compare_runs, pick
from paragents.eval.errors import EXIT_CONFIG, EXIT_GATE
from paragents.eval.html import render_html
from paragents.eval.report import render_markdown
from paragents.eval.results import Burden, RunManifest, RunResults, TargetInfo, TrialResult
from paragents.eval.scores import bootstrap_mean, pass_at_k, score_run


def trial(task: str, target: str, k: int, resolved: bool, **kw: object) -> TrialResult:
    data = {"name": f"{task}.{target}.{k}", "task": task, "target": target, "trial": k, "resolved": resolved}
    return TrialResult.model_validate({**data, "status": "completed", **kw})


def run(
    outcomes: dict[str, list[bool]], *, target: str = "model:m", cost: float | None = 0.01, **kw: object
) -> RunResults:
    trials = [
        trial(task, target, k, ok, cost=cost, tokens=100, burden=Burden(asks=1, denials=int(not ok)), **kw)
        for task, oks in outcomes.items()
        for k, ok in enumerate(oks, 1)
    ]
    manifest = RunManifest(
        tasks="sample", task_source="sample", task_ids=sorted(outcomes),
        targets=[TargetInfo(label=target, kind="model", name="m")], trials=len(next(iter(outcomes.values()))),
    )  # fmt: skip
    return RunResults(manifest=manifest, trials=trials)


def save(results: RunResults, where: Path) -> str:
    results.save(where)
    return str(where)


def test_pass_at_k_is_the_unbiased_estimator() -> None:
    assert pass_at_k(5, 0, 1) == 0.0
    assert pass_at_k(5, 5, 3) == 1.0
    assert pass_at_k(5, 1, 1) == pytest.approx(0.2)
    assert pass_at_k(5, 2, 3) == pytest.approx(1 - 1 / 10)  # 1 - C(3,3)/C(5,3)
    assert pass_at_k(4, 3, 2) == 1.0  # fewer failures than draws
    with pytest.raises(ValueError):
        pass_at_k(2, 1, 3)


def test_a_target_score_sums_its_trials_and_its_interval_is_reproducible() -> None:
    results = run({"a": [True, True], "b": [True, False], "c": [False, False], "d": [True, True]})
    (score,) = score_run(results)
    assert (score.trials, score.tasks, score.resolved, score.rate) == (8, 4, 5, 5 / 8)
    assert score.pass_at_1 == pytest.approx((1 + 0.5 + 0 + 1) / 4)
    assert score.pass_at_k == pytest.approx(3 / 4) and score.k == 2
    assert score.cost == pytest.approx(0.08) and score.cost_per_solve == pytest.approx(0.08 / 5)
    assert (score.burden.asks, score.burden.denials, score.burden_per_solve) == (8, 3, 8 / 5)
    assert score.ci == score_run(results)[0].ci  # fixed seed
    low, high = score.ci
    assert 0 <= low < score.pass_at_1 < high <= 1
    assert bootstrap_mean([1.0, 1.0]) == (1.0, 1.0)


def test_compare_names_each_task_change_and_bounds_the_difference(tmp_path: Path) -> None:
    base = save(run({"a": [True], "b": [True], "c": [False], "d": [True]}), tmp_path / "base")
    cand = save(run({"a": [True], "b": [False], "c": [True], "e": [True]}), tmp_path / "cand")
    cmp = compare_runs(pick(base), pick(cand))
    assert {t.task: t.change for t in cmp.tasks} == {
        "a": "same",
        "b": "broken",
        "c": "fixed",
        "d": "gone",
        "e": "new",
    }
    assert cmp.difference == 0.0  # a same, b -1, c +1 over the three common tasks
    assert cmp.ci[0] < 0 < cmp.ci[1]
    code = main(["eval", "compare", "--baseline", base, "--candidate", cand, "--json"])
    assert code == 0


def test_the_gate_fails_below_its_threshold_with_exit_8_and_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    weak = save(run({"a": [True], "b": [False], "c": [False], "d": [True]}), tmp_path / "weak")
    assert main(["eval", "gate", weak, "--min-resolved", "0.7"]) == EXIT_GATE
    err = capsys.readouterr().err.strip().splitlines()
    assert err == ["eval gate: model:m: resolved 50.0% (2/4) is below --min-resolved 70.0%"]
    assert main(["eval", "gate", weak, "--min-resolved", "0.5"]) == 0
    assert main(["eval", "gate", weak, "--max-cost-per-solve", "0.01"]) == EXIT_GATE  # $0.02 per solve
    assert main(["eval", "gate", weak, "--max-cost-per-solve", "0.02"]) == 0
    strong = save(run({"a": [True], "b": [True], "c": [True], "d": [True]}), tmp_path / "strong")
    assert main(["eval", "gate", weak, "--baseline", strong, "--max-regression", "0.1"]) == EXIT_GATE
    assert "regression above --max-regression 10.0%" in capsys.readouterr().err
    assert main(["eval", "gate", strong, "--baseline", weak, "--max-regression", "0"]) == 0
    unpriced = save(run({"a": [True]}, cost=None), tmp_path / "unpriced")
    assert main(["eval", "gate", unpriced, "--max-cost-per-solve", "1"]) == EXIT_GATE
    assert "the model has no prices" in capsys.readouterr().err
    # bad input is exit 2, never a pass
    assert main(["eval", "gate", weak]) == EXIT_CONFIG
    assert main(["eval", "gate", weak, "--max-regression", "0.1"]) == EXIT_CONFIG
    assert main(["eval", "gate", weak, "--min-resolved", "70"]) == EXIT_CONFIG
    assert main(["eval", "gate", str(tmp_path / "none"), "--min-resolved", "0.5"]) == EXIT_CONFIG


def test_reports_show_the_summary_and_escape_untrusted_text(tmp_path: Path) -> None:
    results = run({"a": [True], "b": [False]})
    hostile = results.trials[1].model_copy(
        update={"status": "error", "error": "<script>alert(1)</script> | `x`", "target": "model:m"}
    )
    results = results.model_copy(update={"trials": [results.trials[0], hostile]})
    results = results.model_copy(
        update={
            "manifest": results.manifest.model_copy(update={"task_notes": {"a": ["<img src=x onerror=y>"]}})
        }
    )
    md = render_markdown(results)
    assert "| model:m | 1/2 (50%) |" in md
    assert "\\| 'x'" in md  # a pipe cannot break the table
    assert "<img" not in md and "  - &lt;img src=x onerror=y&gt;" in md  # a task note is inert text
    page = render_html(results)
    assert "<script" not in page.lower() and "&lt;script&gt;" in page and "&lt;img src=x" in page
    assert page.count("<svg") == 3
    assert not re.findall(r"""(?:src|href)=["']?(?:https?:)?//""", page)  # nothing loaded from elsewhere
    assert "Resolved (with 95% CI)" in page
    out = tmp_path / "r"
    results.save(out)
    assert main(["eval", "report", str(out), "--json"]) == 0
    assert (out / "report.html").read_text().count("<svg") == 3 and (out / "report.md").read_text() == md
    assert json.loads((out / "results.json").read_text())["trials"][1]["error"].startswith("<script>")
