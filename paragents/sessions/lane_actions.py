"""The actions of the Lanes review screen over the session layer: reviews, the verify command
(kept in the store), merge plans bound to the reviewed state, merges (a passing verify on that
state, or an explicit override), push-and-PR, discard (gc's no-work-lost rules: bundle and recovery
commit first), the commit message drafted by the lane's model, and "resolve in this lane" (a prompt
queued to the lane's own session). Nothing here imports Textual."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from paragents.lanes import LaneError
from paragents.lanes.bring_back import (
    LaneState,
    MergePlan,
    check_unmoved,
    lane_state,
    plan_discard,
    plan_merge,
    resolve_prompt,
    run_verify_kept,
)
from paragents.lanes.commit import commit_lane
from paragents.lanes.gc import GcDecision, gc
from paragents.lanes.git import git
from paragents.lanes.merge import find_lane, merge_lane
from paragents.lanes.merge_result import MergeResult
from paragents.lanes.message import LaneWork, draft_message, recent
from paragents.lanes.review import LaneReview, lane_reviews
from paragents.sessions.lanes import lane_sandbox
from paragents.sessions.view import SessionError
from paragents.store import LaneRecord, VerifyRecord

if TYPE_CHECKING:
    from paragents.sessions.core import SessionsCore


class LaneActions:
    """Lane review actions for one runtime (``runtime.lane_actions()``). Errors are SessionError with
    a readable message; :class:`~paragents.lanes.errors.LaneMoved` passes through (the review
    starts over)."""

    def __init__(self, core: SessionsCore) -> None:
        self.core = core

    @property
    def where(self) -> Path:
        return self.core.project_dir

    @property
    def verify_command(self) -> str | None:
        return self.core.config.lanes.verify

    async def _fetch_remote(self) -> None:
        """The lanes that run in a container or Pod: their work comes here first (what is reviewed
        is what they hold); one that does not answer is reviewed as last fetched, with a note."""
        for lane in await self.core.store.lanes.all():
            if lane.remote and Path(lane.path).is_dir():
                try:
                    await self.core.remote.refresh(lane)
                except SessionError as exc:
                    self.core.notes.append(f"{exc} (the Lanes screen shows its last fetched state)")

    async def _fetch(self, name: str) -> LaneRecord:
        _repo, lane = await find_lane(self.core.store.lanes, self.where, name)
        await self.core.remote.refresh(lane)
        return lane

    async def reviews(self) -> list[LaneReview]:
        await self._fetch_remote()
        try:
            return await lane_reviews(self.core.store, self.where)
        except LaneError as exc:
            raise SessionError(f"lanes: {exc}") from exc

    async def verify(self, name: str, on_output: Callable[[str], None] | None = None) -> VerifyRecord:
        """Run ``lanes.verify`` in lane ``name``'s sandbox, streaming its output; keep and return the
        result (bound to the lane's exact tree, uncommitted files included)."""
        command = self.verify_command
        if not command:
            raise SessionError('no verify command: set "lanes": {"verify": "..."} in the config')
        lane = await self._fetch(name)  # a remote lane: the tree verify is bound to is its tree now
        sandbox = lane_sandbox(self.core, lane)
        return await run_verify_kept(self.core.store, self.where, name, command, on_output, sandbox=sandbox)

    async def commit(self, name: str, message: str, reviewed: LaneState) -> LaneState:
        """Commit lane ``name``'s uncommitted files on its branch with ``message`` (exactly the
        ``reviewed`` tree; LaneMoved when it changed); return the lane's new state. A remote lane takes
        the commit made here (its files must not have changed meanwhile: else LaneMoved first)."""
        lane = await self._fetch(name)
        state = await commit_lane(self.core.store.lanes, self.where, name, message, reviewed=reviewed)
        await self.core.remote.refresh(lane)
        return state

    async def plan(self, name: str, strategy: str, reviewed: LaneState) -> MergePlan:
        """What ``strategy`` will do (LaneMoved when the lane moved since ``reviewed``)."""
        return await plan_merge(self.core.store, self.where, name, strategy, reviewed, self.verify_command)

    async def merge(
        self, name: str, strategy: str, reviewed: LaneState, message: str, *, override: bool = False
    ) -> MergeResult:
        """Bring lane ``name`` back exactly as ``reviewed``. Refused (SessionError) when verify has not
        passed on that state unless ``override``; LaneMoved when the lane moved."""
        await self._fetch(name)  # a remote lane: LaneMoved below when it changed since the review
        plan = await self.plan(name, strategy, reviewed)
        if strategy != "pr":
            if plan.problem:
                raise SessionError(plan.problem)
            if plan.conflicts:
                raise SessionError(
                    f"merge-tree predicts a conflict in {', '.join(plan.conflicts)}: resolve it in the lane"
                )
            if not plan.verified and not override:
                raise SessionError(f"merge refused: {plan.verify_line()} (override to merge anyway)")
        result = await merge_lane(
            self.core.store,
            self.where,
            name,
            strategy,
            verify=self.verify_command if strategy != "pr" else None,
            override=override,
            message=message or None,
            expect_head=reviewed.head,
        )
        await self.landed()
        return result

    async def landed(self) -> None:
        """A lane landed: run a prediction round now, so it stops being predicted against its own
        landed work (its inbox items and panel titles clear) without waiting for the timer."""
        watcher = self.core.lane_watcher
        if watcher is not None:
            await watcher.run_round()

    async def still(self, name: str, reviewed: LaneState) -> None:
        """LaneMoved when lane ``name`` is no longer in the ``reviewed`` state."""
        repo, lane = await find_lane(self.core.store.lanes, self.where, name)
        await check_unmoved(repo, lane, reviewed)

    async def draft(self, name: str, strategy: str) -> tuple[str, str]:
        """(commit message, where it came from): drafted by the lane session's model from its turns,
        else built from its prompts. ``strategy`` "commit" drafts the message of the lane's
        uncommitted changes (their files against HEAD)."""
        repo, lane = await find_lane(self.core.store.lanes, self.where, name)
        prompts: list[str] = []
        replies: list[str] = []
        model: str | None = self.core.config.model or None
        if lane.session_id is not None:
            prompts = [t.prompt for t in await self.core.store.turns.all(lane.session_id)]
            for stored in await self.core.store.messages.load(lane.session_id):
                content = stored.message.get("content")
                if stored.role == "assistant" and isinstance(content, str) and content.strip():
                    replies.append(content)
            record = await self.core.store.sessions.get(lane.session_id)
            model = (record.model if record is not None else None) or model
        subjects = (
            await git("log", "--reverse", "--format=%s", f"{lane.base_ref}..{lane.branch}", cwd=repo)
        ).out
        if strategy == "commit":
            state = await lane_state(repo, lane)
            stat = (await git("diff", "--stat=100", state.head, state.tree, cwd=repo, check=False)).out
        else:
            stat = (await git("diff", "--stat=100", lane.base_commit, lane.branch, cwd=repo, check=False)).out
        work = LaneWork(
            name,
            strategy,
            recent(prompts),
            recent(replies, 8),
            recent(subjects.splitlines()),
            recent(stat.splitlines(), 40),
        )
        return await draft_message(self.core.client, model, work, label=f"lane {name}")

    def session_of(self, review: LaneReview) -> str | None:
        """The id of the lane's session when it is open here, else None."""
        return review.session_id if review.session_id in self.core.sessions else None

    async def resolve(self, name: str, files: tuple[str, ...]) -> str:
        """Queue "resolve in this lane" to the lane's own session; return the queued prompt's id."""
        _repo, lane = await find_lane(self.core.store.lanes, self.where, name)
        sid = lane.session_id
        if sid is None or sid not in self.core.sessions:
            raise SessionError(f"the session of lane {name} is not open here: open it (/sessions) first")
        text = await resolve_prompt(self.core.store.lanes, self.where, name, files)
        return self.core.submit(sid, text)

    async def discard_plan(self, name: str) -> list[str]:
        """The git commands :meth:`discard` runs."""
        return await plan_discard(self.core.store.lanes, self.where, name)

    async def discard(self, name: str) -> GcDecision:
        """Remove lane ``name`` under gc's rules with force: a verified bundle of unmerged commits and
        a recovery commit of uncommitted files first. Refused while its session is open or busy."""
        decisions = await gc(self.core.store, self.where, apply=True, force=True, names=[name])
        if not decisions:
            raise SessionError(f"no lane named {name}")
        return decisions[0]
