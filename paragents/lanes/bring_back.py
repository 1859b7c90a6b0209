"""What the Lanes review screen does before bringing a lane back: the lane's exact state (HEAD and
working tree) that a review is bound to, the verify command run and kept in the store, a merge plan
(the git commands a strategy will run, pre-checked with ``merge-tree``) and the prompt that asks
the lane's own agent to resolve a predicted conflict. Plain data and git; no Textual."""

from __future__ import annotations

import shlex
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from paragents.lanes.contained import LaneSandbox, run_in_lane
from paragents.lanes.create import lane_env
from paragents.lanes.errors import LaneError, LaneMoved
from paragents.lanes.git import git
from paragents.lanes.merge import LaneStore, _checked_out_at, find_lane
from paragents.lanes.predict import merge_conflicts, snapshot_tree
from paragents.lanes.pull_request import pr_commands
from paragents.lanes.repo import project_hash, recovery_dir
from paragents.lanes.status import lane_status
from paragents.store.lanes import LanesRepo
from paragents.store.records import LaneRecord, VerifyRecord

VERIFY_TIMEOUT = 3600.0
"""Seconds a verify command may run before it is stopped (counted as failed)."""


@dataclass(frozen=True)
class LaneState:
    """What a review is bound to: the lane branch's commit and the working tree (a tree object,
    untracked files included)."""

    head: str
    tree: str
    head_tree: str = ""
    """The tree of ``head``; equal to ``tree`` when the lane has no uncommitted files."""

    @property
    def clean(self) -> bool:
        return self.tree == self.head_tree

    def describe(self) -> str:
        """ "commit abd011d" or "commit abd011d plus uncommitted files (tree 1a2b3c)"."""
        if self.clean:
            return f"commit {self.head[:12]}"
        return f"commit {self.head[:12]} plus its uncommitted files (tree {self.tree[:12]})"


async def lane_state(repo: Path, lane: LaneRecord) -> LaneState:
    """The lane's HEAD (its branch) and a snapshot of its working tree. LaneError when it is gone."""
    if not Path(lane.path).is_dir():
        raise LaneError(f"the worktree of lane {lane.name} ({lane.path}) is gone")
    head = await git("rev-parse", "--verify", "-q", f"refs/heads/{lane.branch}", cwd=repo, check=False)
    with tempfile.TemporaryDirectory(prefix="paragents-review-") as scratch:
        tree = await snapshot_tree(Path(lane.path), Path(scratch))
    head_tree = await git(
        "rev-parse", "--verify", "-q", f"refs/heads/{lane.branch}^{{tree}}", cwd=repo, check=False
    )
    return LaneState(head.out.strip(), tree, head_tree.out.strip())


async def check_unmoved(repo: Path, lane: LaneRecord, reviewed: LaneState) -> LaneState:
    """Raise :class:`LaneMoved` when the lane's HEAD or working tree differs from ``reviewed``."""
    now = await lane_state(repo, lane)
    if now.head != reviewed.head:
        raise LaneMoved(
            f"lane {lane.name} moved since the review was opened (HEAD {reviewed.head[:12]} -> "
            f"{now.head[:12]}): the review starts over"
        )
    if now.tree != reviewed.tree:
        raise LaneMoved(
            f"the files of lane {lane.name} changed since the review was opened: the review starts over"
        )
    return now


async def run_verify_kept(
    store: LaneStore,
    where: Path,
    name: str,
    command: str,
    on_output: Callable[[str], None] | None = None,
    *,
    timeout: float = VERIFY_TIMEOUT,
    sandbox: LaneSandbox | None = None,
) -> VerifyRecord:
    """Run ``command`` in lane ``name``'s sandbox (output streamed to ``on_output``) and keep its
    result (exit code, output tail, the commit and the working tree it ran on, uncommitted files
    included) as the lane's last verify result. A failing command is a result, not an error;
    LaneError only when the lane is gone."""
    repo, lane = await find_lane(store.lanes, where, name)
    before = await lane_state(repo, lane)
    done = await run_in_lane(
        command,
        Path(lane.path),
        sandbox or LaneSandbox(),
        env=lane_env(lane),
        timeout=timeout,
        on_output=on_output,
    )
    output = done.output
    code = done.exit_code if done.exit_code is not None else 124
    if done.exit_code is None:
        output += f"\n(stopped after {timeout:g} s)"
        if on_output:
            on_output(f"(stopped after {timeout:g} s)")
    after = await lane_state(repo, lane)
    if after != before:  # the lane moved while the command ran: the result covers neither state
        code = code or 1
        output += "\n(the lane changed while verify ran: run it again)"
    return await store.lane_verify.record(
        lane.id, command=command, commit=before.head, tree=before.tree, exit_code=code, output=output
    )


@dataclass
class MergePlan:
    """What one strategy will do to lane ``lane``: ``commands`` (the git commands, in order), the
    ``conflicts`` merge-tree predicts against the target's tip ``old``, and the verify result."""

    lane: str
    strategy: str
    target: str
    old: str
    head: str
    commands: list[str]
    tree: str = ""
    conflicts: tuple[str, ...] = ()
    verify: VerifyRecord | None = None
    verify_command: str | None = None
    subjects: list[str] = field(default_factory=list)
    dirty: int = 0
    problem: str | None = None
    """Why this merge cannot run at all (uncommitted files, nothing to merge, a remote target)."""

    @property
    def verified(self) -> bool:
        """True when no verify command is configured, or its last result passed on this commit."""
        if not self.verify_command:
            return True
        v = self.verify
        return v is not None and v.passed and v.command == self.verify_command and v.covers(self.tree)

    def verify_line(self) -> str:
        """One line saying where verify stands for this commit."""
        if not self.verify_command:
            return "verify: no lanes.verify command is configured"
        v = self.verify
        if v is None:
            return f"verify: `{self.verify_command}` has not run on this lane"
        if v.command != self.verify_command:
            return f"verify: the last run was `{v.command}`, not `{self.verify_command}`: run it again"
        if not v.covers(self.tree):
            return (
                f"verify: the last run was on other files (tree {v.tree[:12]}), not this tree: run it again"
            )
        outcome = "passed" if v.passed else f"FAILED (exit {v.exit_code})"
        return f"verify: `{v.command}` {outcome} on exactly this tree ({self.tree[:12]})"


def _q(text: str) -> str:
    return shlex.quote(text)


async def _move_command(repo: Path, target: str, new: str, old: str) -> str:
    checkout = await _checked_out_at(repo, target)
    if checkout is None:
        return f"git update-ref refs/heads/{target} {new} {old[:12]}"
    return f"git -C {_q(str(checkout))} merge --ff-only {new}"


async def plan_merge(
    store: LaneStore, where: Path, name: str, strategy: str, reviewed: LaneState, verify_command: str | None
) -> MergePlan:
    """The plan of bringing lane ``name`` back with ``strategy``, bound to the ``reviewed`` state
    (LaneMoved when the lane moved since)."""
    repo, lane = await find_lane(store.lanes, where, name)
    await check_unmoved(repo, lane, reviewed)
    status = await lane_status(repo, lane)
    target = lane.base_ref
    verify = await store.lane_verify.last(lane.id)
    if strategy == "pr":
        commands = pr_commands(lane, None)  # the dialog's message becomes --title / --body when not empty
        commands[1] = commands[1].replace("--fill", "--title <first line below> --body <the rest>")
        return MergePlan(name, strategy, target, "", reviewed.head, commands, reviewed.tree)
    plan = MergePlan(
        name,
        strategy,
        target,
        "",
        reviewed.head,
        [],
        reviewed.tree,
        verify=verify,
        verify_command=verify_command,
    )
    plan.dirty = len(status.dirty)
    tip = await git("rev-parse", "--verify", "-q", f"refs/heads/{target}", cwd=repo, check=False)
    if not tip.ok:
        plan.problem = f"lane {name} targets {target}, which is not a local branch: push and open a PR"
        return plan
    old = plan.old = tip.out.strip()
    plan.subjects = (
        await git("log", "--reverse", "--format=%h %s", f"{old}..{reviewed.head}", cwd=repo)
    ).out.splitlines()
    if status.dirty:
        plan.problem = (
            f"{len(status.dirty)} uncommitted or untracked file(s) in the lane: commit them there (or ask "
            "its agent to) so the merge takes exactly what was reviewed"
        )
    elif not status.ahead:
        plan.problem = f"nothing to merge: {target} already has lane {name}"
    plan.conflicts = await merge_conflicts(repo, old, reviewed.head)
    short = reviewed.head[:12]
    move = await _move_command(repo, target, "<new>", old)
    if strategy == "rebase":
        plan.commands = [f"git -C {_q(lane.path)} rebase {old[:12]}", move.replace("<new>", "<rebased HEAD>")]
    else:
        parents = f"-p {old[:12]}" + (f" -p {short}" if strategy == "merge" else "")
        plan.commands = [
            f"git merge-tree --write-tree {old[:12]} {short}   -> <tree>",
            f"git commit-tree <tree> {parents} -m <the message below>   -> <new>",
            move,
        ]
    return plan


async def resolve_prompt(lanes: LanesRepo, where: Path, name: str, files: tuple[str, ...]) -> str:
    """The prompt that asks lane ``name``'s own agent to resolve the conflict merge-tree predicts
    with its target in ``files``: the files, both sides' commits touching them, what to do."""
    repo, lane = await find_lane(lanes, where, name)
    target = lane.base_ref
    base = (await git("merge-base", target, lane.branch, cwd=repo)).out.strip()
    ours = await git("log", "--format=%h %s", f"{base}..{lane.branch}", "--", *files, cwd=repo)
    theirs = await git("log", "--format=%h %s", f"{base}..{target}", "--", *files, cwd=repo)
    diff = await git("diff", "--no-color", base, target, "--", *files, cwd=repo)
    return "\n".join(
        [
            f"Merging this lane ({lane.branch}) into {target} would conflict in: {', '.join(files)}.",
            f"\nYour commits touching them:\n{ours.out.strip() or '(none)'}",
            f"\nCommits on {target} touching them since this lane started:\n{theirs.out.strip() or '(none)'}",
            f"\nTheir change to these files:\n```diff\n{diff.out.strip()[:8000]}\n```",
            f"\nResolve it in this lane: rebase onto {target} (`git rebase {target}`), keep both intents "
            "where they differ, do not undo their change, run the tests, and commit. Say what you changed.",
        ]
    )


async def plan_discard(lanes: LanesRepo, where: Path, name: str) -> list[str]:
    """The git commands discarding lane ``name`` runs (gc's no-work-lost rules with force): a
    verified bundle of its unmerged commits and a recovery commit of its uncommitted files first."""
    repo, lane = await find_lane(lanes, where, name)
    status = await lane_status(repo, lane)
    bundle = f"{recovery_dir()}/{project_hash(repo)}-{name}-<time>.bundle"
    lines: list[str] = []
    if status.dirty:
        lines += [
            f"git commit-tree <snapshot of {len(status.dirty)} uncommitted file(s)> -p HEAD   -> <wip>",
            f"git update-ref refs/paragents/recovery/{name} <wip>",
        ]
    if status.dirty or status.unlanded:
        refs = f"refs/heads/{lane.branch}" + (f" refs/paragents/recovery/{name}" if status.dirty else "")
        lines += [
            f"git bundle create {_q(bundle)} {refs} ^{lane.base_ref}",
            f"git bundle verify {_q(bundle)}",
        ]
    else:
        lines.append(f"(nothing to save: lane {name} holds no unmerged commit and no uncommitted file)")
    lines += [f"git worktree remove --force {_q(lane.path)}", f"git branch -D {lane.branch}"]
    return lines
