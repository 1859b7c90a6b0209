"""``paragents fanout``: a best-of-N run to its end without a terminal UI, and the exit code its
evidence maps to (:mod:`paragents.fanout.errors`). Asks of the siblings are refused (no terminal to
ask; pass ``--allow RULE``), nothing is merged: ``--output patch`` prints the chosen candidate's patch
after checking with ``git merge-tree`` that it still merges onto its target's tip. Nothing here
imports Textual."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from paragents import events as ev
from paragents.fanout.compare import Comparison, compare
from paragents.fanout.errors import EXIT_JUDGE, EXIT_NO_PATCH, EXIT_OK, EXIT_PATCH, EXIT_WORKER
from paragents.fanout.evidence import CandidateView
from paragents.fanout.group import FanoutGroup, start_best_of
from paragents.fanout.host import FanoutHost
from paragents.fanout.request import FanoutRequest
from paragents.lanes.git import git
from paragents.lanes.predict import merge_conflicts

if TYPE_CHECKING:
    from paragents.sessions.api import SessionsAPI


@dataclass
class Outcome:
    """What a headless fan-out ended with: the comparison, the candidate chosen (or None), the exit
    code and why (empty when 0)."""

    comparison: Comparison
    chosen: CandidateView | None
    code: int
    reason: str = ""


def refuse_asks(event: ev.Event) -> None:
    """Sink/observer for a headless fan-out: refuse every ask (there is no terminal to ask)."""
    if isinstance(event, ev.PermissionRequested) and not event.reply.done():
        event.reply.set_result(
            ev.PermissionAnswer("reject_once", note=f"no terminal to ask ({event.reason})", headless=True)
        )


async def patch_applies(rt: SessionsAPI, cmp: Comparison, cand: CandidateView) -> list[str]:
    """The files in which the candidate's commit would conflict with its target's current tip
    (empty: it applies). Reads git objects only; no checkout is touched."""
    head = cand.record.evidence.get("head")
    target = cmp.group.base_ref or "HEAD"
    tip = await git("rev-parse", f"{target}^{{commit}}", cwd=rt.project_dir, check=False)
    if not head or not tip.ok:
        return [f"(cannot resolve {target})"]
    return list(await merge_conflicts(rt.project_dir, tip.out.strip(), str(head)))


async def run_fanout(host: FanoutHost, request: FanoutRequest) -> Outcome:
    """Run the group to its end and map its evidence to an exit code: 3 the judge's answer could not
    be parsed; 5 no candidate left a patch that passed verify; 6 the chosen patch no longer merges onto
    its target; 4 a worker failed (the others' evidence is still given); else 0."""
    host.rt.observe(refuse_asks)
    group = await start_best_of(host, request, open_panel=False)
    await group.done.wait()
    return await outcome_of(host, group)


def _denials(cmp: Comparison) -> str:
    """ "; denied: fix-1 (2 calls, by no terminal) ..." naming who denied each candidate's calls."""
    parts = []
    for c in cmp.candidates:
        denied = c.record.evidence.get("denied") or []
        if denied:
            who = ", ".join(dict.fromkeys(str(d.get("by")) for d in denied))
            parts.append(f"{c.name} ({len(denied)} call(s) denied by {who})")
    if not parts:
        return ""
    hint = "; pass --allow RULE for what a headless run may do" if "no terminal" in " ".join(parts) else ""
    return "; denied: " + "; ".join(parts) + hint


async def outcome_of(host: FanoutHost, group: FanoutGroup) -> Outcome:
    """The exit code a finished group's evidence maps to (see :func:`run_fanout`)."""
    rt = host.rt
    cmp = await compare(host.store.fanout, group.id)
    chosen = cmp.best()
    if group.judge_error:
        return Outcome(cmp, chosen, EXIT_JUDGE, group.judge_error)
    if group.error:
        return Outcome(cmp, chosen, 1, group.error)
    if chosen is None:
        return Outcome(
            cmp, None, EXIT_NO_PATCH, "no candidate left a patch that passed verify" + _denials(cmp)
        )
    conflicts = await patch_applies(rt, cmp, chosen)
    if conflicts:
        text = f"the patch of {chosen.name} does not apply on {cmp.group.base_ref}: {', '.join(conflicts)}"
        return Outcome(cmp, chosen, EXIT_PATCH, text)
    failed = [c.name for c in cmp.candidates if c.worker_failed]
    if failed:
        return Outcome(cmp, chosen, EXIT_WORKER, f"worker(s) failed: {', '.join(failed)}")
    return Outcome(cmp, chosen, EXIT_OK)
