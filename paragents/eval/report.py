"""``eval report``: a run as Markdown (``report.md``) and as one self-contained HTML page with SVG charts
(``report.html``, :mod:`paragents.eval.html`): the summary table per target, each task's results, the
human burden, and what each task's local run did differently from its own environment. Task ids,
target labels, errors and notes are untrusted text: Markdown table cells are escaped, the HTML page
escapes everything. Nothing here imports Textual."""

from __future__ import annotations

from pathlib import Path

from paragents.eval.html import render_html
from paragents.eval.results import RunResults
from paragents.eval.scores import score_run
from paragents.eval.tables import cell, markdown_table, summary_rows, task_rows


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
        out += ["", "## Task notes (where each task ran, and how that differs from its own environment)", ""]
        for task, notes in m.task_notes.items():
            out += [f"- {cell(task)}:", *(f"  - {note_line(n)}" for n in notes)]
    return "\n".join(out) + "\n"


def note_line(text: str) -> str:
    """A task note as one Markdown line (untrusted text: backticks and markup made inert, no cut)."""
    return " ".join(text.split()).replace("`", "'").replace("<", "&lt;").replace(">", "&gt;")


def write_reports(results: RunResults, out: Path) -> tuple[Path, Path]:
    """Write ``report.md`` and ``report.html`` into ``out``; return both paths."""
    md = out / "report.md"
    md.write_text(render_markdown(results), "utf-8")
    page = out / "report.html"
    page.write_text(render_html(results), "utf-8")
    return md, page
