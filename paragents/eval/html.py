"""The HTML report of a run: one self-contained page (no script, no stylesheet or font from elsewhere)
with three SVG charts drawn by pygal (resolution per target with its confidence interval, cost per
solve, human burden per solve), the summary table, the per-task results and the task notes. Every
piece of text is escaped; pygal's inline script (useless without its JavaScript) is dropped.
Nothing here imports Textual."""

from __future__ import annotations

import html
import re

from paragents.eval.results import RunResults
from paragents.eval.scores import LEVEL, TargetScore, score_run
from paragents.eval.tables import summary_rows, task_rows, usd

_SCRIPT = re.compile(r"<script\b.*?</script>", re.S | re.I)
_DECL = re.compile(r"<\?xml[^>]*\?>")

CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 2rem auto; max-width: 1200px; color: #1d2330; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.15rem; margin-top: 2rem; }
table { border-collapse: collapse; margin: .5rem 0; font-size: 13px; }
th, td { border: 1px solid #d5d9e2; padding: .25rem .5rem; text-align: right; }
th:first-child, td:first-child { text-align: left; }
th { background: #eef1f6; }
.charts { display: flex; flex-wrap: wrap; gap: 1rem; }
.chart { border: 1px solid #d5d9e2; border-radius: 6px; padding: .5rem; width: 370px; }
.wide { overflow-x: auto; }
.marks td { text-align: center; letter-spacing: .15em; }
.marks td:first-child { text-align: left; letter-spacing: normal; }
.meta, .note { color: #5b6475; }
.ok { color: #1a7f37; } .no { color: #b42318; }
"""


def _svg(chart: object) -> str:
    text = chart.render(is_unicode=True)  # type: ignore[attr-defined]
    return _DECL.sub("", _SCRIPT.sub("", text))


def _style() -> object:
    from pygal.style import Style

    return Style(
        background="white",
        plot_background="white",
        foreground="#1d2330",
        foreground_strong="#1d2330",
        foreground_subtle="#8a93a6",
        colors=("#3a6fd8", "#d8893a", "#3aa56f", "#a53a8f", "#5b6475"),
        font_family="system-ui, sans-serif",
        title_font_size=15,
        label_font_size=11,
        major_label_font_size=11,
        value_font_size=11,
    )


def _bar(title: str, labels: list[str], values: list[object], *, percent: bool = False) -> str:
    import pygal

    chart = pygal.Bar(
        js=[],
        style=_style(),
        width=370,
        height=270,
        title=title,
        show_legend=False,
        print_values=True,
        print_values_position="top",
        truncate_label=24,
        max_scale=5,
        min_scale=3,
        show_minor_y_labels=False,
        range=(0, 1) if percent else None,
        value_formatter=(lambda v: f"{v:.0%}") if percent else (lambda v: f"{v:g}"),
        disable_xml_declaration=True,
        no_data_text="nothing to show",
    )
    chart.x_labels = labels
    chart.add(title, values)
    return _svg(chart)


def short_label(target: str) -> str:
    """A target as a chart's axis shows it: without its ``@URL`` (the tables keep it)."""
    return target.split("@", 1)[0]


def charts(scores: list[TargetScore]) -> list[str]:
    """The three charts' SVG (see the module docstring)."""
    labels = [short_label(s.target) for s in scores]
    level = int(LEVEL * 100)
    resolution = [{"value": s.rate, "ci": {"low": s.ci[0], "high": s.ci[1]}} for s in scores]
    cost = [None if s.cost_per_solve is None else round(s.cost_per_solve, 4) for s in scores]
    burden = [None if s.burden_per_solve is None else round(s.burden_per_solve, 2) for s in scores]
    return [
        _bar(f"Resolved (with {level}% CI)", labels, list(resolution), percent=True),
        _bar("Cost per solve (USD)", labels, list(cost)),
        _bar("Human burden per solve", labels, list(burden)),
    ]


def _table(rows: list[list[str]], klass: str = "") -> str:
    head, *body = rows
    attrs = f" class={klass}" if klass else ""
    out = [
        f"<table{attrs}><thead><tr>",
        *(f"<th>{html.escape(c)}</th>" for c in head),
        "</tr></thead><tbody>",
    ]
    for row in body:
        out.append("<tr>")
        for c in row:
            mark = (
                ' class="ok"'
                if set(c) <= {"✓"} and c
                else (' class="no"' if c and set(c) <= {"✗", "!"} else "")
            )
            out.append(f"<td{mark}>{html.escape(c)}</td>")
        out.append("</tr>")
    out.append("</tbody></table>")
    return "".join(out)


def render_html(results: RunResults) -> str:
    """The report page (see the module docstring)."""
    m = results.manifest
    scores = score_run(results)
    esc = html.escape
    meta = (
        f"Tasks: {esc(m.tasks)} ({len(m.task_ids)}) · trials per task: {m.trials} · fan-out: {m.fanout} · "
        f"answer policy: {esc(str(m.answer.get('name', '?')))} · on: {esc(m.on)}"
        + (f" · replay of {esc(m.replay_of)}" if m.replay_of else "")
    )
    parts = [
        "<!DOCTYPE html><html lang=en><head><meta charset=utf-8>",
        "<meta name=viewport content='width=device-width, initial-scale=1'>",
        "<title>paragents eval report</title>",
        f"<style>{CSS}</style></head><body>",
        "<h1>paragents eval report</h1>",
        f"<p class=meta>{meta}</p>",
        "<div class=charts>",
        *(f"<div class=chart>{svg}</div>" for svg in charts(scores)),
        "</div>",
        "<h2>Summary</h2>",
        f"<div class=wide>{_table(summary_rows(scores))}</div>",
        "<p class=note>resolved: the hidden tests passed; CI: bootstrap over tasks; cost per solve: "
        f"{esc(', '.join(f'{s.target} {usd(s.cost_per_solve)}' for s in scores))}.</p>",
        "<h2>Tasks</h2>",
        _table(task_rows(results), "marks"),
        "<p class=note>✓ resolved, ✗ not resolved, ! the trial could not run.</p>",
    ]
    errors = [t for t in results.ordered() if t.error]
    if errors:
        parts.append("<h2>Trial errors</h2><ul>")
        parts += [f"<li>{esc(t.name)}: {esc(t.status)}: {esc(t.error or '')}</li>" for t in errors[:50]]
        parts.append("</ul>")
    if m.task_notes:
        parts.append("<h2>Task notes</h2><ul>")
        parts += [
            f"<li>{esc(task)}<ul>{''.join(f'<li>{esc(n)}</li>' for n in notes)}</ul></li>"
            for task, notes in m.task_notes.items()
        ]
        parts.append("</ul>")
    parts.append("</body></html>\n")
    return "".join(parts)
