"""The session API in facets (issue 29, door 2): the Runtime assigns each facet to the component that
implements it and writes no command twice; an observer sees each event once and can leave; a fan-out
worker runs with only the tools and the instructions it was given."""

from __future__ import annotations

import inspect

from paragents import events as ev
from paragents.sessions.api import SessionsAPI
from paragents.sessions.runtime import Runtime
from tests.runtime_env import Env, reply

FACETS = {
    *("lifecycle", "opening", "controls", "prompts", "lanes", "budgets"),
    *("approvals", "memory", "mcp", "settings", "reservations"),
}
SESSION_WIDE = {
    *("project_dir", "config", "sessions", "notes", "set_sink", "observe", "unobserve", "notice"),
    *("submit", "cancel", "wait_idle", "shutdown"),
}


def test_the_api_is_twelve_session_wide_members_and_its_facets() -> None:
    members = {name for name in vars(SessionsAPI) if not name.startswith("_")}
    assert members == SESSION_WIDE | FACETS


async def test_the_runtime_assigns_components_and_writes_no_command_twice(env: Env) -> None:
    own = {
        name
        for name, value in vars(Runtime).items()
        if inspect.isfunction(value) or isinstance(value, classmethod)
    }
    assert own == {"__init__", "create", "shutdown"}  # no pass-through: commands live in the facets
    rt = await env.runtime()
    components = [getattr(rt, name) for name in FACETS]
    assert all(c is not rt for c in components) and len({id(c) for c in components}) == len(FACETS)
    await rt.shutdown()


async def test_an_observer_sees_each_event_once_and_can_leave(env: Env) -> None:
    rt = await env.runtime()
    view = await rt.lifecycle.new_session("a")
    seen: list[str] = []

    def observer(event: ev.Event) -> None:
        if isinstance(event, ev.Notice):
            seen.append(event.text)

    rt.observe(observer)
    rt.observe(observer)  # twice is once
    rt.notice(view.id, "first")
    rt.unobserve(observer)
    rt.unobserve(observer)  # not observing any more: nothing to do, no error
    rt.notice(view.id, "second")
    assert seen == ["first"]
    assert [n.text for n in env.sink.of(ev.Notice, view.id)][-2:] == ["first", "second"]  # the sink saw both
    await rt.shutdown()


async def test_a_worker_runs_with_only_the_tools_and_instructions_it_was_given(env: Env) -> None:
    rt = await env.runtime()
    view = await rt.lifecycle.new_session("worker")
    env.server.add(reply("done"), session="worker")
    rt.controls.use_tools(view.id, ["read_file", "no_such_tool"], ["Answer with one JSON object.", ""])
    rt.submit(view.id, "look")
    await rt.wait_idle(view.id)
    (request,) = env.server.requests
    tools = [t["function"]["name"] for t in request.body_json.get("tools") or []]
    assert tools == ["read_file"]  # only what it was given; an unknown name is left out
    system = request.body_json["messages"][0]["content"]
    assert system.endswith("\n\nAnswer with one JSON object.")
    await rt.shutdown()


async def test_a_worker_with_no_tools_gets_none(env: Env) -> None:
    rt = await env.runtime()
    view = await rt.lifecycle.new_session("patch")
    env.server.add(reply("a diff"), session="patch")
    rt.controls.use_tools(view.id, [])  # the review's patch is written as text: nothing runs
    rt.submit(view.id, "write the patch")
    await rt.wait_idle(view.id)
    (request,) = env.server.requests
    assert not request.body_json.get("tools")
    await rt.shutdown()
