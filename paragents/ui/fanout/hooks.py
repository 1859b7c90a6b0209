"""Fan-out in the app, kept out of ``app.py``: the ``/fanout`` command (start a best-of-N, ``compare``,
``allow RULE...`` for the whole group), the app's running groups, the inbox's group tags, and the
compare screen opened when every candidate finished (docs/fanout.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from paragents.fanout.compare import (
    CandidateLanding,
    Comparison,
    compare,
    discard_all,
    graft_hunks,
    prepare_apply,
)
from paragents.fanout.errors import FanoutError
from paragents.fanout.group import FanoutGroup, start_best_of
from paragents.fanout.request import USAGE, parse_fanout
from paragents.ui.core.commands import SlashCommand
from paragents.ui.fanout.compare import CompareActions, CompareScreen

if TYPE_CHECKING:
    from paragents.ui.app_api import AppAPI


def groups(app: Any) -> dict[str, FanoutGroup]:
    """The fan-out groups this app started, by id (kept on the app)."""
    found: dict[str, FanoutGroup] | None = getattr(app, "fanout_groups", None)
    if found is None:
        found = {}
        app.fanout_groups = found
    return found


def group_of(app: Any, sid: str) -> FanoutGroup | None:
    """The group session ``sid`` is a sibling of, or None."""
    return next((g for g in groups(app).values() if sid in g.session_ids), None)


def group_tags(app: Any) -> dict[str, str]:
    """Session id -> group name, for the inbox's tags (an eval run's trials too: ui/eval/hooks.py)."""
    tags = {sid: g.name for g in groups(app).values() for sid in g.session_ids}
    return {**getattr(app, "eval_tags", {}), **tags}


async def run_fanout_command(app: AppAPI, sid: str, command: SlashCommand) -> None:
    """``/fanout N [...] PROMPT`` | ``/fanout compare [ID]`` | ``/fanout allow [RULE ...]``."""
    text = (command.arg or "").strip()
    word, _, rest = text.partition(" ")
    try:
        if word == "compare":
            await open_compare(app, rest.strip() or _latest(app, sid))
        elif word == "allow":
            await _allow(app, sid, rest.split())
        else:
            await _start(app, text)
    except FanoutError as exc:
        app.notify(str(exc), title="Fan-out", severity="error", timeout=12, markup=False)


def _latest(app: Any, sid: str) -> str:
    group = group_of(app, sid) or next(reversed(groups(app).values()), None)
    if group is None:
        raise FanoutError(f"no fan-out in this app yet: {USAGE} (`paragents runs list` shows older ones)")
    return group.id


async def _start(app: AppAPI, text: str) -> None:
    request = parse_fanout(text)
    group = await start_best_of(app.runtime, request, open_panel=True)
    groups(app)[group.id] = group
    for sib in group.siblings:
        view = app.runtime.sessions.get(sib.session_id)
        if view is not None:
            await app.add_panel(view, focus=sib.idx == 1)

    def finished(done: FanoutGroup) -> None:
        app.call_after_refresh(app.run_worker, open_compare(app, done.id), group="fanout")

    group.on_finished.append(finished)
    names = f"{group.siblings[0].name}..{group.siblings[-1].name}"
    app.notify(
        f"fan-out {group.name} ({group.id}): {names} work in their own lanes from {group.base_commit[:10]}; "
        "the compare screen opens when all finish (/fanout compare)",
        title="Fan-out",
        timeout=10,
        markup=False,
    )


async def _allow(app: AppAPI, sid: str, rules: list[str]) -> None:
    """Allow ``rules`` for every sibling of this session's group (none given: the rules the waiting ask
    of this session suggests) and unblock the asks they now allow."""
    group = group_of(app, sid)
    if group is None:
        raise FanoutError("this session is not part of a fan-out: type /fanout allow in one of its panels")
    if not rules:
        mine = [e for e in group.pending.values() if e.session_id == sid and not e.reply.done()]
        mine = mine or [e for e in group.pending.values() if not e.reply.done()]
        if not mine:
            example = "/fanout allow 'Bash(pytest *)'"
            raise FanoutError(f"nothing waits for an answer in this fan-out: name the rule, e.g. {example}")
        rules = list(mine[0].suggested_rules)
    unblocked = await group.allow(rules)
    app.notify(
        f"allowed {', '.join(rules)} for fan-out {group.name}: {unblocked} waiting ask(s) answered",
        title="Fan-out",
        markup=False,
    )


def actions_for(app: AppAPI, group_id: str) -> Any:
    """The compare screen's actions, bound to the runtime (discard closes the panels first)."""
    rt = app.runtime

    async def land(name: str) -> tuple[Any, Any, Any]:
        review, plan = await prepare_apply(rt, group_id, name)
        return CandidateLanding(rt, group_id, name), review, plan

    async def graft(onto: str, source: str, keys: set[str]) -> str:
        return await graft_hunks(rt, group_id, onto, source, keys)

    async def discard() -> str:
        stored = await rt.store.fanout.get_group(group_id)  # also a group of an earlier run of the app
        for cand in stored.candidates if stored else ():
            if cand.session_id is not None and cand.session_id in app.panels:
                await app.close_session(cand.session_id)
        decisions = await discard_all(rt, group_id)
        kept = [d for d in decisions if d.action != "removed"]
        bundled = [d for d in decisions if d.bundle]
        text = f"removed {len(decisions) - len(kept)} lane(s)"
        if bundled:
            text += f"; unmerged work of {', '.join(d.lane for d in bundled)} bundled first: " + "; ".join(
                str(d.bundle) for d in bundled
            )
        if kept:
            text += "; kept: " + "; ".join(f"{d.lane} ({', '.join(d.reasons)})" for d in kept)
        return text

    async def reload() -> Comparison:
        return await compare(rt.store.fanout, group_id)

    return CompareActions(land, graft, discard, reload)


async def open_compare(app: AppAPI, group_id: str) -> None:
    """Show the compare screen of group ``group_id``."""
    group = groups(app).get(group_id)
    if group is not None and not group.done.is_set():
        waiting = [s.name for s in group.siblings if s.state == "running"]
        app.notify(f"still running: {', '.join(waiting)}; showing what is known so far", markup=False)
    cmp = await compare(app.runtime.store.fanout, group_id)
    app.show_screen(CompareScreen(cmp, actions_for(app, cmp.group.id)))


async def allow_for_group(app: AppAPI, event: Any) -> str:
    """The inbox's "allow for this fan-out" on one sibling's ask: its suggested rules for the whole
    group; returns the sentence to show."""
    group = group_of(app, event.session_id)
    if group is None:
        return "this ask is not from a fan-out session"
    rules = list(event.suggested_rules)
    if not rules:
        return "this ask suggests no rule to allow; answer it on its own"
    unblocked = await group.allow(rules)
    return f"allowed {', '.join(rules)} for fan-out {group.name}: {unblocked} waiting ask(s) answered"
