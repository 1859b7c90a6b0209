"""What the compare screen and ``paragents fanout`` show and do: the candidates with their evidence
in evidence order (the judge's ranking beside it), and the user's actions, each recorded as the
group's choice. Nothing is merged automatically.

- **apply**: the lanes merge flow (``merge_lane``, squash) of one candidate's lane into its target,
  with the same guard as ``/lanes`` (a dialog with the git commands; refused when its verify failed
  or does not cover exactly its tree, unless the user ticks the override);
- **graft**: selected hunks of another candidate, checked with ``git apply --check`` and applied in the
  chosen candidate's lane as one more commit (apply it, or again, to bring them back);
- **discard all**: close the siblings and remove their lanes with ``lanes gc`` rules; lanes holding
  unmerged work are bundled first (``--force``), so nothing is lost.

Nothing here imports Textual."""

from __future__ import annotations

import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents.fanout.errors import (
    EXIT_CONFIG,
    EXIT_NO_PATCH,
    EXIT_PATCH,
    EXIT_RUNTIME,
    FanoutError,
)
from paragents.fanout.evidence import (
    CandidateView,
    candidate_view,
    evidence_order,
    overlap_cell,
    select_hunks,
)
from paragents.fanout.host import FanoutHost
from paragents.fanout.judge import latest_answer
from paragents.lanes import LaneError
from paragents.lanes.bring_back import LaneState, MergePlan, lane_state, plan_merge
from paragents.lanes.gc import GcDecision, gc
from paragents.lanes.git import IDENTITY, git
from paragents.lanes.merge import find_lane, merge_lane
from paragents.lanes.merge_result import MergeResult
from paragents.lanes.review import LaneReview
from paragents.store import GroupRecord, StoreError

if TYPE_CHECKING:
    from paragents.store.fanout import FanoutRepo


@dataclass
class Comparison:
    """A group and its candidates in evidence order, with the judge's advice when there is one."""

    group: GroupRecord
    candidates: list[CandidateView]
    judge_error: str | None = None
    judge_risks: tuple[str, ...] = ()

    def find(self, name_or_idx: str | int) -> CandidateView:
        for c in self.candidates:
            if str(c.record.idx) == str(name_or_idx) or c.name == name_or_idx:
                return c
        raise FanoutError(f"no candidate {name_or_idx!r} in fan-out {self.group.name}")

    def best(self) -> CandidateView | None:
        """The candidate to bring back without asking: the judge's first passing candidate when it
        answered, else the first in evidence order; only one that left a patch and did not fail
        verify (None when there is none)."""
        ok = [
            c
            for c in self.candidates
            if c.has_patch and not c.worker_failed and (c.verify is None or c.verify.passed)
        ]
        ranked = [c for c in ok if c.judge_rank is not None]
        if ranked:
            return min(ranked, key=lambda c: c.judge_rank or 0)
        return ok[0] if ok else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "group": {k: v for k, v in self.group.as_dict().items() if k != "candidates"},
            "order": [c.name for c in self.candidates],
            "judge_error": self.judge_error,
            "judge_risks": list(self.judge_risks),
            "candidates": [
                {
                    **{k: v for k, v in c.record.as_dict().items() if k != "patch"},
                    "diffstat": c.diffstat(),
                    "hunks": [h.key for h in c.hunks],
                    "judge_rank": c.judge_rank,
                    "judge_reason": c.judge_reason,
                    "overlaps_shown": overlap_cell(c, self.candidates),
                }
                for c in self.candidates
            ],
        }


async def compare(fanout: FanoutRepo, group_id: str) -> Comparison:
    """Read group ``group_id`` back with its candidates in evidence order and the judge's advice."""
    group = await fanout.get_group(group_id)
    if group is None:
        raise FanoutError(f"no fan-out group {group_id!r} (`paragents runs list` shows them)", EXIT_CONFIG)
    return compare_from(group)


def compare_from(group: GroupRecord) -> Comparison:
    """A stored group's candidates in evidence order, with the judge's advice beside them."""
    cands = [candidate_view(c) for c in group.candidates]
    answer, error = latest_answer(group.judge)
    risks: tuple[str, ...] = ()
    if answer is not None:
        for c in cands:
            if c.name in answer.ranking:
                c.judge_rank = answer.ranking.index(c.name) + 1
            c.judge_reason = answer.reasons.get(c.name, "")
        risks = tuple(answer.risks)
    if error is not None:
        error = f"judge failed ({len(group.judge)} attempt(s)): {error}"
    return Comparison(group, evidence_order(cands), error, risks)


async def _choice(
    fanout: FanoutRepo, group: GroupRecord, entry: dict[str, Any], state: str | None = None
) -> None:
    """Record one user action in the group's choice: the latest of each kind under its name
    (``apply``, ``graft``, ``discard``) and every action in ``history``."""
    fresh = await fanout.get_group(group.id)
    choice = dict((fresh or group).choice or {})
    stamped = {**entry, "at": time.time()}
    choice["history"] = [*choice.get("history", []), stamped]
    choice[str(entry["action"])] = stamped
    await fanout.update_group(group.id, choice=choice, state=state)


def applied_candidate(group: GroupRecord) -> str | None:
    """The candidate the user applied (None: none yet)."""
    applied = (group.choice or {}).get("apply")
    return str(applied["candidate"]) if isinstance(applied, dict) else None


def choice_summary(group: GroupRecord) -> str:
    """The user's actions in order, e.g. "apply fix-3, graft fix-2 -> fix-3, discard" ("-": none)."""
    parts = []
    for item in (group.choice or {}).get("history", []):
        action = item.get("action")
        if action == "graft":
            parts.append(f"graft {item.get('from')} -> {item.get('candidate')}")
        elif action == "apply":
            parts.append(f"apply {item.get('candidate')}")
        else:
            parts.append(str(action))
    return ", ".join(parts) or "-"


async def _stash_left_overs(path: Path) -> str | None:
    """Files the verify command left behind (caches, build output) would block the merge: stash them
    in the lane (``git stash -u``; kept, nothing lost); return a note, or None when it was clean."""
    status = await git("status", "--porcelain", "--untracked-files=all", cwd=path)
    if not status.out.strip():
        return None
    await git("stash", "push", "-u", "-q", "-m", "paragents fan-out: left by verify", cwd=path, env=IDENTITY)
    return (
        f"files left in the lane after the candidate finished were stashed there (`git -C {path} stash list`)"
    )


async def prepare_apply(host: FanoutHost, group_id: str, which: str | int) -> tuple[LaneReview, MergePlan]:
    """What landing candidate ``which`` will do, for the merge dialog: the review of its lane (bound
    to its state now) and the squash plan (the git commands, merge-tree's answer, the verify result on
    exactly this tree). Files the verify command left behind are stashed in the lane first.
    FanoutError (exit 5) when the candidate left no patch."""
    rt = host.rt
    cmp = await compare(host.store.fanout, group_id)
    cand = cmp.find(which)
    if not cand.has_patch or cand.record.lane is None:
        raise FanoutError(f"candidate {cand.name} left no patch to apply", EXIT_NO_PATCH)
    await _stash_left_overs(Path(cand.record.lane_path or "."))
    try:
        repo, lane = await find_lane(host.store.lanes, rt.project_dir, cand.record.lane)
        state = await lane_state(repo, lane)
        plan = await plan_merge(host.store, rt.project_dir, lane.name, "squash", state, cmp.group.verify)
    except LaneError as exc:
        raise FanoutError(f"cannot land {cand.name}: {exc}", EXIT_RUNTIME) from None
    review = LaneReview(
        lane.name,
        f"fan-out {cmp.group.name}: candidate {cand.name}",
        state.head,
        state=state,
        verify=plan.verify,
        session_id=lane.session_id,
        target=lane.base_ref,
    )
    return review, plan


async def apply_candidate(
    host: FanoutHost,
    group_id: str,
    which: str | int,
    *,
    message: str | None = None,
    reviewed: LaneState | None = None,
    override: bool = False,
) -> MergeResult:
    """Land one candidate with the lanes merge flow (squash into its lane's target, the same guard
    as ``/lanes``: refused when its verify failed or does not cover exactly this tree, unless
    ``override``); record it as the group's choice. ``reviewed``: the state the dialog showed (the
    merge is refused when the lane moved since). FanoutError: exit 5 when it has no patch, 6 when the
    merge would conflict, also 5 when verify has not passed (and no override)."""
    rt = host.rt
    cmp = await compare(host.store.fanout, group_id)
    cand = cmp.find(which)
    if reviewed is None:
        review, _plan = await prepare_apply(host, group_id, which)
        reviewed = review.state
    assert reviewed is not None and cand.record.lane is not None
    try:
        result = await merge_lane(
            host.store,
            rt.project_dir,
            cand.record.lane,
            "squash",
            verify=cmp.group.verify,
            override=override,
            message=message or None,
            expect_head=reviewed.head,
        )
    except LaneError as exc:
        code = {5: EXIT_PATCH, 4: EXIT_NO_PATCH}.get(exc.exit_code, EXIT_RUNTIME)
        raise FanoutError(f"applying {cand.name} failed: {exc}", code) from None
    entry: dict[str, Any] = {
        "action": "apply",
        "candidate": cand.name,
        "commit": result.commit,
        "target": result.target,
    }
    if override:
        entry["override"] = True
    await _choice(host.store.fanout, cmp.group, entry, state="applied")
    return result


class CandidateLanding:
    """The merge dialog's actions (``draft``, ``merge``, ``resolve``) for one fan-out candidate: those
    of the Lanes screen, except that a merge lands through :func:`apply_candidate` (and so is
    recorded as the group's choice)."""

    def __init__(self, host: FanoutHost, group_id: str, candidate: str) -> None:
        self.host = host
        self.rt = host.rt
        self.group_id = group_id
        self.candidate = candidate

    async def draft(self, lane: str, strategy: str) -> tuple[str, str]:
        drafted: tuple[str, str] = await self.rt.lanes.lane_actions().draft(lane, strategy)
        return drafted

    async def resolve(self, lane: str, files: tuple[str, ...]) -> str:
        queued: str = await self.rt.lanes.lane_actions().resolve(lane, files)
        return queued

    async def merge(
        self, lane: str, strategy: str, reviewed: LaneState, message: str, *, override: bool = False
    ) -> MergeResult:
        result = await apply_candidate(
            self.host, self.group_id, self.candidate, message=message, reviewed=reviewed, override=override
        )
        await self.rt.lanes.lane_actions().landed()  # its predictions clear now, not at the next timer round
        return result


async def graft_hunks(
    host: FanoutHost, group_id: str, onto: str | int, source: str | int, keys: set[str]
) -> str:
    """Apply the selected hunks (:attr:`Hunk.key`) of candidate ``source`` in candidate ``onto``'s lane,
    checked with ``git apply --check`` first, and commit them there; return what was done.
    FanoutError (exit 6) when they do not apply; nothing is changed then."""
    cmp = await compare(host.store.fanout, group_id)
    target, donor = cmp.find(onto), cmp.find(source)
    if target.record.lane_path is None or not Path(target.record.lane_path).is_dir():
        raise FanoutError(f"the lane of {target.name} is gone", EXIT_RUNTIME)
    patch = select_hunks(donor.record.patch or "", keys)
    if not patch:
        raise FanoutError("no hunk selected", EXIT_NO_PATCH)
    lane = Path(target.record.lane_path)
    with tempfile.NamedTemporaryFile("w", suffix=".patch", delete=False) as fh:
        fh.write(patch)
        patch_file = Path(fh.name)
    try:
        check = await git("apply", "--check", patch_file, cwd=lane, check=False)
        if not check.ok:
            raise FanoutError(
                f"the selected hunks of {donor.name} do not apply on {target.name}: {check.err}", EXIT_PATCH
            )
        await git("apply", "--index", patch_file, cwd=lane, what="git apply")
    finally:
        patch_file.unlink(missing_ok=True)
    count = len(keys)
    message = f"fan-out {cmp.group.name}: graft {count} hunk(s) of {donor.name} onto {target.name}"
    done = await git("commit", "-q", "--no-verify", "-m", message, cwd=lane, check=False)
    if not done.ok:
        await git("commit", "-q", "--no-verify", "-m", message, cwd=lane, env=IDENTITY)
    entry = {"action": "graft", "candidate": target.name, "from": donor.name, "hunks": sorted(keys)}
    await _choice(host.store.fanout, cmp.group, entry)
    lane_name = target.record.lane
    return f"{count} hunk(s) of {donor.name} committed in lane {lane_name}; apply {target.name} to land them"


async def discard_all(host: FanoutHost, group_id: str) -> list[GcDecision]:
    """Close the group's siblings and remove their lanes under ``lanes gc`` rules, bundling any
    unmerged work first (nothing lost); record it as the group's choice; return gc's decisions."""
    rt = host.rt
    cmp = await compare(host.store.fanout, group_id)
    for c in cmp.candidates:
        sid = c.record.session_id
        if sid is not None and sid in rt.sessions:
            await rt.lifecycle.close_session(sid)
    names = [c.record.lane for c in cmp.candidates if c.record.lane]
    try:
        decisions = await gc(host.store, rt.project_dir, apply=True, force=True, names=names)
    except (LaneError, StoreError) as exc:
        raise FanoutError(f"discarding the lanes failed: {exc}") from None
    entry = {
        "action": "discard",
        "lanes": {d.lane: d.action for d in decisions},
        "bundles": [d.bundle for d in decisions if d.bundle],
    }
    state = "applied" if applied_candidate(cmp.group) else "discarded"
    await _choice(host.store.fanout, cmp.group, entry, state=state)
    return decisions
