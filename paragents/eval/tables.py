"""The tables a report shows, as rows of plain strings (Markdown and HTML render the same rows): the
summary per target and each task's trials. Nothing here imports Textual."""

from __future__ import annotations

from collections import defaultdict

from paragents.eval.results import RunResults, TrialResult
from paragents.eval.scores import LEVEL, TargetScore


def usd(value: float | None) -> str:
    return "unpriced" if value is None else f"${value:.4f}"


def cell(text: object) -> str:
    """A Markdown table cell: one line, pipes and backticks escaped."""
    return " ".join(str(text).split()).replace("|", "\\|").replace("`", "'")[:200]


def summary_rows(scores: list[TargetScore]) -> list[list[str]]:
    """The summary table's rows (header first), as the Markdown and HTML reports show it."""
    k = max((s.k for s in scores), default=1)
    passes = ["pass@1", f"pass@{k}"] if k > 1 else ["pass@1"]
    rows = [
        ["target", "resolved", f"{int(LEVEL * 100)}% CI", *passes, "tokens", "cost",
         "cost/solve", "wall", "turns", "asks", "denials", "auto-allows", "conflicts", "budget pauses",
         "loop trips", "burden/solve"],
    ]  # fmt: skip
    for s in scores:
        b = s.burden
        rates = [f"{s.pass_at_1:.2f}", f"{s.pass_at_k:.2f}"][: len(passes)]
        rows.append(
            [
                s.target,
                f"{s.resolved}/{s.trials} ({s.rate:.0%})",
                f"{s.ci[0]:.0%}-{s.ci[1]:.0%}",
                *rates,
                f"{'~' if s.estimated else ''}{s.tokens}",
                usd(s.cost),
                "-" if s.cost_per_solve is None else f"${s.cost_per_solve:.4f}",
                f"{s.wall_seconds:.0f}s",
                str(s.turns),
                str(b.asks),
                str(b.denials),
                str(b.auto_allows),
                str(b.conflicts),
                str(b.budget_pauses),
                str(b.loop_guard_trips),
                "-" if s.burden_per_solve is None else f"{s.burden_per_solve:.1f}",
            ]
        )
    return rows


def markdown_table(rows: list[list[str]]) -> str:
    head, *body = rows
    lines = ["| " + " | ".join(cell(c) for c in head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(cell(c) for c in row) + " |" for row in body]
    return "\n".join(lines)


def task_rows(results: RunResults) -> list[list[str]]:
    """One row per task: each target's trials as ``✓``/``✗``/``!`` (error)."""
    labels = [t.label for t in results.manifest.targets]
    marks: dict[str, dict[str, list[TrialResult]]] = defaultdict(lambda: defaultdict(list))
    for t in results.ordered():
        marks[t.task][t.target].append(t)
    rows = [["task", *labels]]
    for task in results.manifest.task_ids:
        row = [task]
        for label in labels:
            row.append("".join(_mark(t) for t in marks[task][label]) or "-")
        rows.append(row)
    return rows


def _mark(t: TrialResult) -> str:
    if t.status == "error":
        return "!"
    return "✓" if t.resolved else "✗"
