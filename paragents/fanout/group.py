"""A best-of-N fan-out group: N sibling sessions, each in its own lane made from the same base
commit, given the same prompt (and, through their lanes, the same project instructions), run under
the scheduler's cap; followed until each finishes, then its work committed on its lane's branch, the
verify command run in its lane and its evidence stored (docs/fanout.md). Nothing here imports Textual.

The siblings' asks are watched (:attr:`FanoutGroup.pending`) so an allow rule answered for the group
(:meth:`FanoutGroup.allow`) also unblocks the siblings already waiting on a matching ask."""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from paragents import events as ev
from paragents.agent.spend import request_cost
from paragents.agent.tokens import cost_usd
from paragents.fanout.errors import EXIT_CONFIG, FanoutError
from paragents.fanout.evidence import commit_work, overlaps, patch_of
from paragents.fanout.host import FanoutHost
from paragents.fanout.judge import JudgeFailed, judge_group
from paragents.fanout.request import FanoutRequest, check_request
from paragents.fanout.verify import run_verify
from paragents.lanes import LaneError, lane_env, resolve_base, toplevel
from paragents.lanes.gc import remove_lane
from paragents.lanes.git import git
from paragents.models import TurnStatus, Usage
from paragents.sessions.view import SessionError
from paragents.store import LaneRecord, StoreError

if TYPE_CHECKING:
    from paragents.sessions.api import SessionsAPI


def slugify(prompt: str, limit: int = 20) -> str:
    """A short name for the group from its prompt's first words (``"Fix the login"`` -> ``fix-the-login``)."""
    words = re.findall(r"[a-z0-9]+", prompt.lower())
    slug = ""
    for word in words:
        if len(slug) + len(word) + 1 > limit:
            break
        slug = f"{slug}-{word}" if slug else word
    return slug or (words[0][:limit] if words else "fanout")


@dataclass
class Sibling:
    """One candidate: its number (1..N), session, model and lane; ``head`` once its work is committed."""

    idx: int
    session_id: str
    name: str
    model: str
    lane: LaneRecord
    head: str | None = None
    state: str = "running"


@dataclass
class FanoutGroup:
    """A running (or finished) group; see the module docstring."""

    host: FanoutHost
    id: str
    name: str
    request: FanoutRequest
    repo: Path
    base_ref: str
    base_commit: str
    siblings: list[Sibling]
    verify_timeout: float
    started: float = field(default_factory=time.monotonic)
    pending: dict[str, ev.PermissionRequested] = field(default_factory=dict)
    """Unanswered asks of the siblings, by request id."""
    rules: list[str] = field(default_factory=list)
    """Allow rules answered for the whole group."""
    denied: dict[str, list[dict[str, str]]] = field(default_factory=dict)
    """Per sibling session id: its tool calls that were denied (``call``, and ``by``: "policy", "no
    terminal" (a headless run refused the ask) or "the user")."""
    done: asyncio.Event = field(default_factory=asyncio.Event)
    on_finished: list[Callable[[FanoutGroup], None]] = field(default_factory=list)
    judge_error: str | None = None
    error: str | None = None
    _task: asyncio.Task[None] | None = None

    @property
    def rt(self) -> SessionsAPI:
        """The session API the group drives."""
        return self.host.rt

    @property
    def session_ids(self) -> set[str]:
        return {s.session_id for s in self.siblings}

    def start(self) -> None:
        """Watch the siblings' asks and follow them to the end (a task on the running loop)."""
        self.rt.observe(self.observe)
        self._task = asyncio.get_running_loop().create_task(self.follow(), name=f"fan-out {self.name}")

    async def stop(self) -> None:
        """Stop following (the app quits); the sessions and lanes stay."""
        self.rt.unobserve(self.observe)
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    def observe(self, event: ev.Event) -> None:
        """Observer: remember the siblings' asks until they are answered."""
        if event.session_id not in self.session_ids:
            return
        if isinstance(event, ev.PermissionRequested):
            self.pending[event.request_id] = event
        elif isinstance(event, ev.PermissionResolved):
            self.pending.pop(event.request_id, None)
        elif isinstance(event, ev.ToolCallFinished) and event.status == "denied":
            entry = {"call": f"{event.call.name} {event.call.arguments[:160]}", "by": denied_by(event.output)}
            self.denied.setdefault(event.session_id, []).append(entry)

    async def allow(self, rules: list[str]) -> int:
        """Answer "allow ``rules``" for every sibling: each gets them as session rules, the group keeps
        them as evidence, and every waiting ask the policy now allows is answered (allowed once).
        Returns how many waiting asks this unblocked. SessionError for a malformed rule."""
        for sib in self.siblings:
            if sib.session_id in self.rt.sessions:
                await self.rt.approvals.add_session_rules(sib.session_id, rules)
        self.rules.extend(r for r in rules if r not in self.rules)
        group = await self.host.store.fanout.get_group(self.id)
        settings = dict(group.settings) if group else {}
        settings["rules"] = list(self.rules)
        await self.host.store.fanout.update_group(self.id, settings=settings)
        answered = 0
        for event in list(self.pending.values()):
            view = self.rt.sessions.get(event.session_id)
            if view is None or event.reply.done():
                continue
            try:
                args = json.loads(event.call.arguments or "{}")
            except json.JSONDecodeError:
                continue
            decision = self.rt.approvals.decide(
                event.session_id, event.call.name, args if isinstance(args, dict) else {}
            )
            if decision.decision == "allow":
                event.reply.set_result(ev.PermissionAnswer("allow_once"))
                answered += 1
        return answered

    async def follow(self) -> None:
        """Follow every sibling to its end, then record overlaps and (when asked) the judge's answer.
        A store or git failure ends the group with :attr:`error` set (never an unretrieved task error)."""
        try:
            await self._follow()
        except (StoreError, LaneError, OSError) as exc:
            self.error = f"the fan-out stopped following its sessions: {exc}"
        finally:
            self.done.set()
            self.rt.unobserve(self.observe)
        for listener in self.on_finished:
            listener(self)

    async def _follow(self) -> None:
        await asyncio.gather(*(self._follow_one(s) for s in self.siblings))
        heads = {s.idx: s.head for s in self.siblings if s.head and s.head != self.base_commit}
        try:
            found = await overlaps(self.repo, self.base_commit, heads)
        except LaneError:
            found = {}
        store = self.host.store
        group = await store.fanout.get_group(self.id)
        for cand in group.candidates if group else ():
            if cand.idx in found:
                evidence = {**cand.evidence, "overlaps": {str(k): v for k, v in found[cand.idx].items()}}
                await store.fanout.update_candidate(self.id, cand.idx, evidence=evidence)
        if self.request.judge:
            try:
                await judge_group(
                    self.host.store.fanout,
                    self.host.chat(),
                    self.rt.config,
                    self.id,
                    self.request.judge_model,
                    self._bill_judge,
                )
            except JudgeFailed as exc:
                self.judge_error = str(exc)
        await store.fanout.update_group(self.id, state="finished", finished=True)

    async def _bill_judge(self, model: str, usage: Usage, estimated: bool) -> None:
        """Record one judge request as spent: a usage row (no turn) of the group's first candidate
        session, so it counts in the group's spend, the project's today and their budgets (the
        candidates' own evidence was taken before the judge ran)."""
        store = self.host.store
        sid = self.siblings[0].session_id
        record = await store.sessions.get(sid)
        cost = request_cost(self.rt.config, model, usage)
        await store.turns.add_usage(sid, None, model, usage, estimated=estimated, cost_usd=cost)
        if record is not None:  # add_usage took the judge's prompt as the context size: keep the session's
            await store.sessions.update(sid, last_prompt_tokens=record.last_prompt_tokens)

    async def _follow_one(self, sib: Sibling) -> None:
        store = self.host.store
        with contextlib.suppress(KeyError):  # closed before it finished
            await self.rt.wait_idle(sib.session_id)
        view = self.rt.sessions.get(sib.session_id)
        result = view.last_result if view is not None else None
        failed = result is None or result.status is not TurnStatus.COMPLETED
        error = (result.error if result is not None else "the session was closed") if failed else None
        seconds = round(time.monotonic() - self.started, 3)
        evidence: dict[str, Any] = {"seconds": seconds, "error": error}
        usage = await store.turns.usage_by_model(session_id=sib.session_id)
        evidence["tokens"] = sum(
            u.total_tokens or u.prompt_tokens + u.completion_tokens for u in usage.values()
        )
        costs = [
            cost_usd(u, s.input_price_per_mtok, s.output_price_per_mtok)
            for m, u in usage.items()
            for s in [self.rt.config.model_settings(m)]
        ]
        evidence["cost"] = None if any(c is None for c in costs) else round(sum(c or 0.0 for c in costs), 6)
        patch = ""
        try:
            await self.rt.lanes.refresh_lane(sib.lane)  # a container/Pod lane's work comes here first
            lane_path = Path(sib.lane.path)
            sib.head = await commit_work(lane_path, f"fan-out {self.name}: candidate {sib.name}")
            await self.rt.lanes.refresh_lane(sib.lane)  # and the commit made here goes to it
            patch, files = await patch_of(self.repo, self.base_commit, sib.head)
            evidence["files"] = files
            evidence["head"] = sib.head
        except (LaneError, SessionError) as exc:
            evidence["error"] = f"{error + '; ' if error else ''}its work could not be read: {exc}"
            failed = True
        denied = self.denied.get(sib.session_id, [])
        if denied:
            evidence["denied"] = denied
        verify = None
        if self.request.verify and sib.head is not None:
            verify = await self._verify(sib)
        sib.state = "failed" if failed else ("denied" if denied and not patch else "finished")
        await store.fanout.update_candidate(
            self.id, sib.idx, state=sib.state, verify=verify, evidence=evidence, patch=patch
        )

    async def _verify(self, sib: Sibling) -> dict[str, Any]:
        """Run the group's verify command in the candidate's lane sandbox and keep it twice: as the
        candidate's evidence and as the lane's verify result, bound to the tree of the candidate's
        commit (so landing it from the compare screen is refused when it failed or is stale)."""
        path = Path(sib.lane.path)
        rt = self.rt
        sandbox = rt.lanes.lane_sandbox(sib.lane)
        assert self.request.verify is not None and sib.head is not None
        result = await run_verify(self.request.verify, path, lane_env(sib.lane), self.verify_timeout, sandbox)
        tree = await git("rev-parse", f"{sib.head}^{{tree}}", cwd=path, check=False)
        await self.host.store.lane_verify.record(
            sib.lane.id,
            command=self.request.verify,
            commit=sib.head,
            tree=tree.out.strip() if tree.ok else "",
            exit_code=result.exit_code if result.exit_code is not None else 124,
            output=result.tail,
        )
        return result.as_dict()


def denied_by(output: str) -> str:
    """Who denied a tool call, from the text the model was told: "policy", "no terminal" or "the user"."""
    if output.startswith("denied by policy"):
        return "policy"
    if output.startswith("denied: no terminal"):
        return "no terminal"
    return "the user"


async def _free_slug(host: FanoutHost, repo: Path, slug: str, n: int) -> str:
    taken = {rec.name for rec in await host.rt.lifecycle.list_sessions()}
    lanes = {lane.name for lane in await host.store.lanes.all(str(repo))}
    base, k = slug, 1
    while any(f"{slug}-{i}" in taken or f"{slug}-{i}" in lanes for i in range(1, n + 1)):
        k += 1
        slug = f"{base}{k}"
    return slug


async def start_best_of(host: FanoutHost, request: FanoutRequest, *, open_panel: bool = True) -> FanoutGroup:
    """Open the group's N siblings (sessions ``<slug>-1..N`` in lanes from one base commit), give each
    the prompt and start following them. Raises FanoutError: exit 2 for a bad request or no git
    repository (with a commit on a branch); 1 when a sibling could not be opened (none is left open)."""
    rt = host.rt
    config = rt.config
    check_request(request, config)
    try:
        repo = await toplevel(rt.project_dir)
        base = await resolve_base(repo, "head")
    except LaneError as exc:
        raise FanoutError(f"a fan-out works in lanes (git worktrees): {exc}", EXIT_CONFIG) from None
    slug = await _free_slug(host, repo, slugify(request.prompt), request.n)
    group_id = uuid.uuid4().hex[:12]
    store = host.store
    settings: dict[str, Any] = {
        "n": request.n,
        "models": list(request.models),
        "judge": request.judge,
        "judge_model": request.judge_model,
        "rules": [],
    }
    await store.fanout.create_group(
        group_id=group_id,
        kind="best_of",
        project_dir=str(rt.project_dir),
        name=slug,
        prompt=request.prompt,
        base_ref=base.ref,
        base_commit=base.commit,
        verify=request.verify,
        settings=settings,
    )
    siblings: list[Sibling] = []
    try:
        for idx in range(1, request.n + 1):
            name = f"{slug}-{idx}"
            model = request.model_for(idx, config.model)
            view = await rt.lifecycle.new_session(
                name, model=model, mode=request.mode, lane=name, base=base.ref, open_panel=open_panel,
                on=request.on,
            )  # fmt: skip
            lane = await store.lanes.of_session(view.id)
            if lane is None:
                raise FanoutError(f"session {name} got no lane")
            siblings.append(Sibling(idx, view.id, name, model, lane))
            if lane.base_commit != base.commit:
                raise FanoutError(f"{base.ref} moved while the fan-out was opening its lanes: try again")
            await store.fanout.add_candidate(
                group_id,
                idx,
                session_id=view.id,
                session_name=name,
                model=model,
                lane=lane.name,
                lane_path=lane.path,
                branch=lane.branch,
            )
            rt.budgets.join_group(view.id, group_id)
    except (SessionError, FanoutError, StoreError, LaneError) as exc:
        await _undo(host, repo, siblings)
        await store.fanout.update_group(group_id, state="failed", finished=True)
        code = exc.exit_code if isinstance(exc, FanoutError) else 1
        raise FanoutError(f"the fan-out could not open its sessions: {exc}", code) from None
    group = FanoutGroup(
        host, group_id, slug, request, repo, base.ref, base.commit, siblings, config.fanout.verify_timeout
    )
    group.start()
    for sib in siblings:
        rt.submit(sib.session_id, request.prompt)
    return group


async def _undo(host: FanoutHost, repo: Path, siblings: list[Sibling]) -> None:
    """Close the siblings opened so far and remove their lanes (they hold no work yet)."""
    for sib in siblings:
        with contextlib.suppress(SessionError, StoreError):
            await host.rt.lifecycle.close_session(sib.session_id)
        with contextlib.suppress(LaneError, StoreError):
            await remove_lane(host.store.lanes, repo, sib.lane, force=True)
