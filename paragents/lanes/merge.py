"""Bringing a lane back: squash, rebase or merge commit into its target branch, or the commands of a
pull request. Every merge is pre-checked with ``git merge-tree``, needs the verify command to pass,
and moves the target only from the tip it was checked against (``update-ref`` with the old value, or
``merge --ff-only`` in the checkout that has the target checked out, so that checkout stays in step)."""

from __future__ import annotations

import shlex
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from paragents.lanes.contained import LaneSandbox, run_in_lane
from paragents.lanes.create import lane_env
from paragents.lanes.errors import LaneError, LaneMoved
from paragents.lanes.git import git
from paragents.lanes.merge_result import MergeResult
from paragents.lanes.predict import merge_conflicts, snapshot_tree
from paragents.lanes.pull_request import open_pull_request
from paragents.lanes.repo import toplevel
from paragents.lanes.status import lane_status
from paragents.store.lane_verify import LaneVerifyRepo
from paragents.store.lanes import LanesRepo
from paragents.store.records import LaneRecord

STRATEGIES = ("squash", "rebase", "merge", "pr")

EXIT_VERIFY = 4
EXIT_CONFLICT = 5
EXIT_HOLDS_WORK = 6


class LaneStore(Protocol):
    """The store's tables a lane command reads and writes: the lanes and their last verify results
    (``paragents.store.Store`` is one)."""

    @property
    def lanes(self) -> LanesRepo: ...
    @property
    def lane_verify(self) -> LaneVerifyRepo: ...


async def find_lane(lanes: LanesRepo, where: Path, name: str) -> tuple[Path, LaneRecord]:
    """Return (repository top level, lane ``name``); LaneError when there is no such lane."""
    repo = await toplevel(where)
    lane = await lanes.get(str(repo), name)
    if lane is None:
        names = ", ".join(lane.name for lane in await lanes.all(str(repo))) or "none"
        raise LaneError(f"no lane named {name!r} in {repo} (lanes: {names})", exit_code=2)
    return repo, lane


async def run_verify(
    lane: LaneRecord,
    command: str,
    on_output: Callable[[str], None] | None = None,
    results: LaneVerifyRepo | None = None,
    tree: str = "",
    sandbox: LaneSandbox | None = None,
) -> str:
    """Run the verify command in the lane's sandbox; LaneError with exit code 4 (output kept) when it
    fails. With ``results`` the result is kept as the lane's last verify result (on its HEAD and
    ``tree``)."""
    done = await run_in_lane(
        command,
        Path(lane.path),
        sandbox or LaneSandbox(),
        env=lane_env(lane),
        timeout=3600.0,
        on_output=on_output,
    )
    output = done.output
    code = done.exit_code if done.exit_code is not None else 124
    why = f"`{command}` exited with {code}" if done.exit_code is not None else f"`{command}` did not finish"
    if results is not None:
        head = (await git("rev-parse", f"refs/heads/{lane.branch}", cwd=Path(lane.path))).out.strip()
        await results.record(lane.id, command=command, commit=head, tree=tree, exit_code=code, output=output)
    if code:
        raise LaneError(f"verify failed in lane {lane.name}: {why}", exit_code=EXIT_VERIFY, output=output)
    return output


async def _checked_out_at(repo: Path, branch: str) -> Path | None:
    out = (await git("worktree", "list", "--porcelain", cwd=repo)).out
    path: str | None = None
    for line in out.splitlines():
        if line.startswith("worktree "):
            path = line[len("worktree ") :]
        elif line == f"branch refs/heads/{branch}" and path is not None:
            return Path(path)
    return None


async def _move_target(repo: Path, target: str, old: str, new: str) -> None:
    checkout = await _checked_out_at(repo, target)
    if checkout is None:
        await git("update-ref", f"refs/heads/{target}", new, old, cwd=repo, what=f"moving {target}")
        return
    result = await git("merge", "--ff-only", "-q", new, cwd=checkout, check=False)
    if not result.ok:
        where = shlex.quote(str(checkout))
        raise LaneError(
            f"{target} is checked out in {checkout} and git refused to move it ({result.err}): set the "
            f"changes there aside with `git -C {where} stash push -u` (or commit them with `git -C {where} "
            f"commit -am MESSAGE`), then merge again; `git -C {where} stash pop` brings them back after"
        )


def _message(lane: LaneRecord, subjects: list[str], strategy: str) -> str:
    head = f"{'Squash' if strategy == 'squash' else 'Merge'} lane {lane.name} ({lane.branch})"
    return head + ("\n\n" + "\n".join(f"- {s}" for s in subjects) if subjects else "")


async def merge_lane(
    store: LaneStore,
    where: Path,
    name: str,
    strategy: str,
    *,
    verify: str | None = None,
    run_verify_first: bool = False,
    override: bool = False,
    message: str | None = None,
    on_output: Callable[[str], None] | None = None,
    expect_head: str | None = None,
    sandbox: LaneSandbox | None = None,
) -> MergeResult:
    """Bring lane ``name`` back into its target branch with ``strategy``; return what was done. Every
    place a lane lands (``lanes merge``, the Lanes screen, the fan-out compare screen) comes here.

    ``verify`` (the configured verify command): the lane's last verify result must be a pass of that
    command on exactly the tree being merged, unless ``override`` (the user ticked "merge although
    verify has not passed"); ``run_verify_first`` runs it in the lane's sandbox first (headless).
    Raises LaneError: exit_code 4 when verify failed or has not passed on this tree, 5 when
    merge-tree predicts a conflict (or the rebase stops on one), 1 for other refusals (uncommitted
    files, a remote target), each naming the command to run. With ``expect_head`` (the commit that
    was reviewed) a lane whose branch moved since raises :class:`LaneMoved`."""
    if strategy not in STRATEGIES:
        raise LaneError(f"unknown strategy {strategy!r}: use one of {', '.join(STRATEGIES)}")
    repo, lane = await find_lane(store.lanes, where, name)
    status = await lane_status(repo, lane)
    target = lane.base_ref
    if status.broken:
        raise LaneError(status.broken)
    if not status.exists:
        raise LaneError(
            f"the worktree of lane {name} ({lane.path}) is gone: run `paragents lanes gc` to see options"
        )
    if expect_head is not None and status.head != expect_head:
        raise LaneMoved(
            f"lane {name} moved since it was reviewed ({expect_head[:12]} -> {status.head[:12] or 'gone'}): "
            "the review starts over"
        )
    quoted = shlex.quote(lane.path)
    if status.dirty:
        raise LaneError(
            f"lane {name} has {len(status.dirty)} uncommitted or untracked file(s), so the merge would not "
            f"take exactly what is there: commit them with `paragents lanes merge {name} --commit` (or "
            f"`git -C {quoted} add -A && git -C {quoted} commit`), or set them aside with "
            f"`git -C {quoted} stash push -u`"
        )
    if strategy == "pr":
        return await open_pull_request(repo, lane, message, on_output)
    if not status.ahead:
        return MergeResult(
            name, strategy, target, None, f"nothing to merge: {target} already has lane {name}"
        )
    if not (await git("show-ref", "--verify", "-q", f"refs/heads/{target}", cwd=repo, check=False)).ok:
        raise LaneError(
            f"lane {name} targets {target}, which is not a local branch: "
            f"`paragents lanes merge {name} --strategy pr` pushes it and opens a pull request"
        )
    reviewed = status.head
    old = (await git("rev-parse", f"refs/heads/{target}", cwd=repo)).out.strip()
    files = await merge_conflicts(repo, old, reviewed)
    if files:
        raise LaneError(
            f"merging lane {name} into {target} would conflict in {', '.join(files)}: resolve it in the "
            f"lane (`git -C {shlex.quote(lane.path)} rebase {target}`), then merge again",
            exit_code=EXIT_CONFLICT,
        )
    tree = (await git("rev-parse", f"{reviewed}^{{tree}}", cwd=repo)).out.strip()  # the lane is clean
    if verify and run_verify_first:  # after the cheap pre-check; update-ref checks the target
        await run_verify(lane, verify, on_output, store.lane_verify, tree, sandbox)
    if verify and not override:
        await _require_verified(store.lane_verify, lane, verify, tree)
    subjects = (await git("log", "--reverse", "--format=%s", f"{old}..{reviewed}", cwd=repo)).out.splitlines()
    text = message or _message(lane, subjects, strategy)
    if strategy == "rebase":
        new = await _rebase(repo, lane, target, old)
    else:
        merged = await git("merge-tree", "--write-tree", "--no-messages", old, reviewed, cwd=repo)
        parents = ["-p", old] + (["-p", reviewed] if strategy == "merge" else [])
        new = (await git("commit-tree", merged.out.split()[0], *parents, "-m", text, cwd=repo)).out.strip()
    now_head = (await git("rev-parse", f"refs/heads/{lane.branch}", cwd=repo)).out.strip()
    if strategy != "rebase" and now_head != reviewed:
        raise LaneError(f"lane {name} moved while it was being merged: review it again")
    await _move_target(repo, target, old, new)
    landed = (await git("rev-parse", f"refs/heads/{lane.branch}^{{tree}}", cwd=repo)).out.strip()
    await store.lanes.update(lane.id, base_commit=new if strategy == "rebase" else None, landed_tree=landed)
    count = len(subjects)
    return MergeResult(
        name,
        strategy,
        target,
        new,
        f"{strategy}: {count} commit(s) of lane {name} now on {target} at {new[:12]}",
    )


async def _require_verified(results: LaneVerifyRepo, lane: LaneRecord, command: str, tree: str) -> None:
    """LaneError (exit 4) unless the lane's last verify result is a pass of ``command`` on ``tree``."""
    record = await results.last(lane.id)
    run = f"run it (`paragents lanes merge {lane.name}` runs verify first, `v` on the Lanes screen)"
    if record is None:
        why = f"verify (`{command}`) has not run on lane {lane.name}: {run}"
    elif record.command != command:
        why = f"the last verify of lane {lane.name} ran `{record.command}`, not `{command}`: {run}"
    elif not record.covers(tree):
        why = f"lane {lane.name} changed since verify last ran (on {record.commit[:12]}): {run} again"
    elif not record.passed:
        failed = f"FAILED (exit {record.exit_code})"
        why = f"verify (`{command}`) {failed} on this tree of lane {lane.name}: fix it and {run} again"
    else:
        return
    raise LaneError(f"merge refused: {why}, or override it (`--no-verify`)", exit_code=EXIT_VERIFY)


async def _rebase(repo: Path, lane: LaneRecord, target: str, old: str) -> str:
    """Rebase the lane's branch onto ``old`` in its worktree (its HEAD was checked to be that branch
    by :func:`~paragents.lanes.git.git`); a rebase that stops is aborted (HEAD is detached meanwhile,
    so that one command skips the HEAD check)."""
    path = Path(lane.path)
    result = await git("rebase", "-q", old, cwd=path, check=False)
    if not result.ok:
        await git("rebase", "--abort", cwd=path, check=False, head=False)
        raise LaneError(
            f"rebasing lane {lane.name} onto {target} stopped on a conflict: {result.err or result.out}",
            exit_code=EXIT_CONFLICT,
        )
    return (await git("rev-parse", f"refs/heads/{lane.branch}", cwd=repo)).out.strip()


async def lane_diff(
    lanes: LanesRepo, where: Path, name: str
) -> tuple[LaneRecord, str, list[dict[str, object]]]:
    """Return (lane, the patch of its working tree against its base commit, untracked files
    included, per-file numstat rows)."""
    import tempfile

    repo, lane = await find_lane(lanes, where, name)
    if not Path(lane.path).is_dir():
        raise LaneError(f"the worktree of lane {name} ({lane.path}) is gone")
    with tempfile.TemporaryDirectory(prefix="paragents-diff-") as scratch:
        tree = await snapshot_tree(Path(lane.path), Path(scratch))
    patch = (await git("diff", "--no-color", lane.base_commit, tree, cwd=repo)).out
    stat = (await git("diff", "--numstat", lane.base_commit, tree, cwd=repo)).out
    rows: list[dict[str, object]] = []
    for line in stat.splitlines():
        added, deleted, path = line.split("\t", 2)
        rows.append(
            {
                "path": path,
                "added": int(added) if added != "-" else None,
                "deleted": int(deleted) if deleted != "-" else None,
            }
        )
    return lane, patch, rows
