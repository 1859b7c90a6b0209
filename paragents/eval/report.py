"""``eval report``: a run as Markdown (``report.md``) and as one self-contained HTML page with SVG charts
(``report.html``, :mod:`paragents.eval.html`): the summary table per target, each task's results, the
human burden, and what each task's local run did differently from its own environment. Task ids,
target labels, errors and notes are untrusted text: Markdown table cells are escaped, the HTML page
escapes everything. Nothing here imports Textual."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

from paragents.eval.results import RunResults, TrialResult
from paragents.eval.scores import LEVEL, TargetScore, score_run


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


def render_markdown(results: RunResults) -> str:
    """The whole report as Markdown."""
    m = results.manifest
    scores = score_run(results)
    out = [
        "# paragents eval report",
        "",
        f"Tasks: {cell(m.tasks)} ({len(m.task_ids)}), trials per task: {m.trials}, fan-out: {m.fanout}, "
        f"answer policy: {cell(m.answer.get('name', '?'))}, on: {m.on}"
        + (f", replay of {cell(m.replay_of)}" if m.replay_of else ""),
        "",
        "## Summary",
        "",
        markdown_table(summary_rows(scores)),
        "",
        "resolved: the hidden tests passed; CI: bootstrap over tasks; pass@k: Chen et al.'s estimator; "
        "burden/solve: asks + conflicts + budget pauses + loop-guard trips per resolved trial.",
        "",
        "## Tasks",
        "",
        markdown_table(task_rows(results)),
        "",
        "✓ resolved, ✗ not resolved, ! the trial could not run.",
    ]
    errors = [t for t in results.ordered() if t.error]
    if errors:
        out += ["", "## Trial errors", ""]
        out += [f"- {cell(t.name)}: {cell(t.status)}: {cell(t.error)}" for t in errors[:50]]
    if m.task_notes:
        out += ["", "## Task notes (how the local run differs from the task's own environment)", ""]
        for task, notes in m.task_notes.items():
            out += [f"- {cell(task)}: {cell('; '.join(notes))}"]
    return "\n".join(out) + "\n"


def write_reports(results: RunResults, out: Path) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into ``out``; return both paths."""
    from paragents.eval.html import render_html

    md = out / "report.md"
    md.write_text(render_markdown(results), "utf-8")
    page = out / "report.html"
    page.write_text(render_html(results), "utf-8")
    return md, page
