"""``/mode`` and ``/model`` of a session run by an external ACP agent: they address the agent's own
modes (``session/set_mode``) and its model (``session/set_config_option`` on its option of category
"model"); see :mod:`paragents.acp.controls`. Each call says its outcome in one note in the session's
panel, also when the agent offers no modes or models or refuses ("method not found"): paragents'
own permission mode is never changed instead (``/permissions mode MODE`` does that). Nothing here
imports Textual."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import TYPE_CHECKING, Any

from paragents import events as ev
from paragents.acp.launch import AcpLaunchError
from paragents.sessions.acp import agent_of

if TYPE_CHECKING:
    from paragents.acp.agent import AcpAgent
    from paragents.acp.controls import Choice, ConfigOption

PERMISSION_HINT = "paragents' permission mode is changed with /permissions mode MODE"


def runs_agent(core: Any, sid: str) -> bool:
    """True when session ``sid`` is run by an external ACP agent."""
    return agent_of(core, sid) is not None


async def _started(core: Any, sid: str) -> AcpAgent | None:
    """The session's agent, started (its session open, so its modes and options are known); None
    after a note saying why not."""
    agent = agent_of(core, sid)
    if agent is None:
        return None
    try:
        await agent.link.start()
    except AcpLaunchError as exc:
        core.emit(ev.Notice(sid, str(exc), "error"))
        return None
    return agent


def _rows(choices: tuple[Choice, ...], current: str | None) -> list[str]:
    rows = []
    for c in choices:
        mark = "*" if c.id == current else " "
        label = c.id if c.name in ("", c.id) else f"{c.id} ({c.name})"
        rows.append(f" {mark} {label}" + (f": {c.description}" if c.description else ""))
    return rows


def _options_rows(options: tuple[ConfigOption, ...], skip: ConfigOption | None) -> list[str]:
    rows = []
    for o in options:
        if o is skip:
            continue
        values = f" ({', '.join(c.id for c in o.choices)})" if o.choices else ""
        rows.append(f"   {o.name}: {o.label()}{values}")
    return rows


async def _switch(
    core: Any, sid: str, agent: AcpAgent, call: Awaitable[Any], method: str, what: str, chosen: str
) -> bool:
    """Await the agent's ``method`` switching its ``what`` to ``chosen``; True when done, else one
    note saying why not ("method not found" is remembered: the agent is not asked again)."""
    # deferred: start-up time, the ACP SDK (seconds to import) loads only for a session an external agent runs
    from acp import RequestError

    from paragents.acp.controls import not_supported

    who = agent.controls.agent_name
    try:
        await call
    except RequestError as exc:
        if not_supported(exc):
            agent.controls.unsupported.add(method)
            core.emit(ev.Notice(sid, f"{who} does not support switching {what}s ({method})"))
        else:
            core.emit(ev.Notice(sid, f"{who} refused {what} {chosen!r}: {exc}", "warning"))
        return False
    except (ConnectionError, OSError) as exc:
        core.emit(ev.Notice(sid, f"{who} could not switch {what}s: {exc}", "warning"))
        return False
    return True


async def agent_mode(core: Any, sid: str, wanted: str | None) -> None:
    """``/mode [ID]`` for an ACP session: list the agent's modes, or switch to ``wanted``."""

    agent = await _started(core, sid)
    if agent is None:
        return
    ctl, who = agent.controls, agent.controls.agent_name
    option = ctl.mode_option if not ctl.modes else None
    modes = ctl.modes or (option.choices if option is not None else ())
    current = ctl.mode if ctl.modes else (option.current if option is not None else None)
    if not modes or "session/set_mode" in ctl.unsupported:
        core.emit(ev.Notice(sid, f"{who} does not offer modes ({PERMISSION_HINT})"))
        return
    if not wanted:
        text = f"{who}'s modes (/mode ID switches; * is the current one):\n" + "\n".join(
            _rows(modes, current)
        )
        core.emit(ev.Notice(sid, text))
        return
    low = wanted.lower()
    found: Choice | None = next((m for m in modes if low in (m.id.lower(), m.name.lower())), None)
    if found is None:
        names = ", ".join(m.id for m in modes)
        core.emit(
            ev.Notice(sid, f"{who} has no mode {wanted!r}; its modes: {names} ({PERMISSION_HINT})", "warning")
        )
        return
    switched = ctl.set_mode(agent.link.conn, agent.link.remote_id or "", found)
    if not await _switch(core, sid, agent, switched, "session/set_mode", "mode", found.id):
        return
    announced = agent.log.mode == found.id  # its current_mode_update came first and was shown
    agent.log.mode = found.id
    if not announced:
        core.emit(ev.Notice(sid, f"{who}'s mode is now {ctl.mode_name or found.id}"))


async def agent_model(core: Any, sid: str, wanted: str | None) -> None:
    """``/model [ID]`` for an ACP session: list the agent's models (and its other config options), or
    switch its model to ``wanted``."""

    agent = await _started(core, sid)
    if agent is None:
        return
    ctl, who = agent.controls, agent.controls.agent_name
    option = ctl.model_option
    if option is None or "session/set_config_option" in ctl.unsupported:
        others = _options_rows(ctl.options, None)
        more = ("\nits options:\n" + "\n".join(others)) if others else ""
        core.emit(ev.Notice(sid, f"{who} does not offer a choice of model{more}"))
        return
    if not wanted:
        rows = _rows(option.choices, option.current)
        others = _options_rows(ctl.options, option)
        text = f"{who}'s models (/model ID switches; * is the current one):\n" + "\n".join(rows)
        if others:
            text += "\nits other options:\n" + "\n".join(others)
        core.emit(ev.Notice(sid, text))
        return
    found = option.find(wanted)
    if found is None:
        names = ", ".join(c.id for c in option.choices)
        core.emit(ev.Notice(sid, f"{who} has no model {wanted!r}; its models: {names}", "warning"))
        return
    switched = ctl.set_option(agent.link.conn, agent.link.remote_id or "", option, found.id)
    if not await _switch(core, sid, agent, switched, "session/set_config_option", "model", found.id):
        return
    core.emit(ev.Notice(sid, f"{who}'s model is now {ctl.model or found.id}"))
