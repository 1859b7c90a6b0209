"""``paragents runs show ID`` for a specialist review or a split (a best-of-N is shown as its
comparison, :func:`paragents.cli.fanout.print_comparison`): the group's stored evidence as a JSON
document or as plain lines (never markup: prompts, findings and names are untrusted)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from rich.text import Text

from paragents.fanout.report import ReviewReport

if TYPE_CHECKING:
    from rich.console import Console

    from paragents.store import GroupRecord


def run_doc(group: GroupRecord) -> dict[str, Any]:
    """The JSON document of a review or split group: the group, its candidates (each with its
    evidence) and the choice; a review adds its ``report`` and ``findings``, a split its ``plan``,
    ``schedule``, ``integration`` lane and ``results``."""
    settings = group.settings
    doc: dict[str, Any] = {
        "group": {k: v for k, v in group.as_dict().items() if k != "candidates"},
        "kind": group.kind,
        "candidates": [c.as_dict() for c in group.candidates],
        "choice": group.choice,
        "error": settings.get("error"),
    }
    if group.kind == "review":
        report = settings.get("report")
        doc["report"] = report
        doc["findings"] = (report or {}).get("findings", [])
    else:
        for key in ("plan", "schedule", "integration", "results"):
            doc[key] = settings.get(key)
    return doc


def _lines(group: GroupRecord) -> list[str]:
    settings = group.settings
    out = [f"{group.kind} {group.name} ({group.id}): {group.state}", f"prompt: {group.prompt}"]
    if settings.get("error"):
        out.append(f"error: {settings['error']}")
    if group.kind == "review":
        for c in group.candidates:
            ev = c.evidence
            what = ev.get("error") or (
                f"{len(ev.get('findings', []))} finding(s)" if "findings" in ev else ev.get("role", "")
            )
            out.append(f"{c.idx}. {c.session_name}  [{c.state}]  model {c.model}  {what}")
        report = settings.get("report")
        if report:
            out.extend(ReviewReport.model_validate(report).lines())
        return out
    plan = settings.get("plan") or {}
    if plan:
        out.append("plan:")
    for task in plan.get("subtasks", []):
        deps = ", ".join(task.get("depends_on", [])) or "-"
        out.append(f"  {task['id']}: {task['title']} [{', '.join(task['paths'])}] depends on {deps}")
    for c in group.candidates:
        ev = c.evidence
        lane = f"  lane {c.lane} (branch {c.branch})" if c.lane else ""
        detail = f"  ({ev['detail']})" if ev.get("detail") else ""
        out.append(
            f"{c.idx}. {ev.get('subtask', c.session_name)}  [{c.state}]"
            f"  session {c.session_name}{lane}{detail}"
        )
    lane_doc = settings.get("integration")
    if lane_doc:
        out.append(
            f"integration lane {lane_doc['lane']} (branch {lane_doc['branch']}): "
            f"paragents lanes diff {lane_doc['lane']}"
        )
    return out


def print_run(out: Console, group: GroupRecord, choice: str) -> None:
    """Print a review or split group as plain lines, then the user's choice."""
    for n, line in enumerate(_lines(group)):
        out.print(Text(line, style="bold" if n == 0 else ""))
    out.print(Text(f"your choice: {choice}"))
