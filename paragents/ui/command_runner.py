"""Slash commands typed in a panel's prompt box (or picked in the palette), run for the app.

``ui/core/commands.py`` parses a line into a :class:`~paragents.ui.core.commands.SlashCommand`; here
:data:`HANDLERS` maps each command name to the coroutine that runs it. Handlers call the Runtime facade
(``app.runtime``, a ``SessionsAPI``) and the app's public methods. :func:`run_command` looks the
handler up, refuses session commands without an open session, and turns every readable error
(config, session, store, LLM, policy) into a notification.

The fan-out and Lanes screens are imported by their handlers, on first use: at start they would add
the fan-out and lane-review packages (~40 modules, 3-11% of the app's import time measured with
``-X importtime``) before the first frame."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from paragents.config import ConfigError, describe_changes
from paragents.sessions.decisions import decision_line
from paragents.ui.budgets.hooks import run_budget_command
from paragents.ui.core.commands import SlashCommand
from paragents.ui.screens.info import (
    TableScreen,
    config_screen,
    help_screen,
    mcp_screen,
    permissions_screen,
)
from paragents.ui.screens.sessions import SessionsScreen
from paragents.ui.screens.setup import SetupScreen
from paragents.ui.serve import hooks as serve_hooks

if TYPE_CHECKING:
    from paragents.ui.app_api import AppAPI

Handler = Callable[["AppAPI", str, SlashCommand], Awaitable[None]]
"""A command's coroutine: ``(app, session id, command)``; the id is "" for app-wide commands."""
READABLE_ERRORS = ("SessionError", "StoreError", "LLMError", "PolicyError")
"""Error types (by name: the UI does not import every layer) whose message is shown, not raised."""


async def run_command(app: AppAPI, sid: str | None, command: SlashCommand) -> None:
    """Run ``command`` for session ``sid`` (the panel it was typed in) on ``app``. Readable errors
    become notifications; anything else is raised (a bug)."""
    handler = HANDLERS[command.name]
    if command.name in SESSION_COMMANDS and (sid is None or sid not in app.panels):
        app.notify(f"/{command.name} needs an open session: ctrl+n opens one.", severity="warning")
        return
    try:
        await handler(app, sid or "", command)
    except (ConfigError, ValueError, OSError) as exc:
        app.show_error(exc)
    except Exception as exc:
        if type(exc).__name__ not in READABLE_ERRORS:
            raise
        app.show_error(exc)


# --- app-wide commands -----------------------------------------------------------------------------
async def new(app: AppAPI, sid: str, command: SlashCommand) -> None:
    opts = command.options
    workdir = Path(opts["dir"]) if "dir" in opts else None
    lane = {"lane": opts["lane"] or True} if "lane" in opts else {}
    base = {"base": opts["base"]} if "base" in opts else {}
    if "on" in opts:  # where the lane runs (docs/remote.md)
        base["on"] = opts["on"]
    if "agent" in opts:  # an external ACP agent (paragents.sessions.acp)
        view = await app.runtime.lifecycle.new_agent_session(
            opts["agent"], command.arg, workdir=workdir, lane=lane.get("lane"), base=opts.get("base")
        )
        await app.add_panel(view)
        app.update_header()
    else:
        await app.open_session(command.arg, model=opts.get("model"), workdir=workdir, **lane, **base)
    made = app.runtime.sessions.get(app.active_sid or "") if lane else None
    if made is not None and made.lane:
        app.notify("\n".join(made.lane_notes), title="Lane", markup=False, timeout=12)


async def lanes(app: AppAPI, sid: str, command: SlashCommand) -> None:
    from paragents.ui.lanes.screen import LanesScreen  # deferred: start-up time (module docstring)

    actions = app.runtime.lanes.lane_actions()
    app.show_screen(LanesScreen(await actions.reviews(), actions, app.close_session))


async def show_help(app: AppAPI, sid: str, command: SlashCommand) -> None:
    app.show_screen(help_screen())


async def quit_app(app: AppAPI, sid: str, command: SlashCommand) -> None:
    await app.action_quit()


async def setup(app: AppAPI, sid: str, command: SlashCommand) -> None:
    app.show_screen(SetupScreen(app.runtime.settings.loaded.config), app.setup_closed)


async def reload(app: AppAPI, sid: str, command: SlashCommand) -> None:
    """``/reload``: re-read the config files, apply them and say what changed (or which file and field
    is wrong; the running config then stays as it was)."""
    rt = app.runtime
    try:
        changes = await rt.settings.reload_config()
    except ConfigError as exc:
        app.notify(
            f"Config not reloaded (the old one stays): {exc}", severity="error", timeout=12, markup=False
        )
        return
    app.sync_panels()
    app.notify(describe_changes(changes, rt.settings.loaded.files), timeout=10, markup=False)


async def show_config(app: AppAPI, sid: str, command: SlashCommand) -> None:
    app.show_screen(config_screen(app.runtime.settings.config_rows()))


async def permissions(app: AppAPI, sid: str, command: SlashCommand) -> None:
    if "mode" in command.options:  # /permissions mode MODE: paragents' permission mode of the session
        if not sid or sid not in app.panels:
            app.notify("/permissions mode needs an open session: ctrl+n opens one.", severity="warning")
            return
        await app.runtime.controls.set_mode(sid, command.options["mode"])
        app.sync_panel(sid)
        return
    app.show_screen(permissions_screen(app.runtime.approvals.rules_report()))


async def inbox(app: AppAPI, sid: str, command: SlashCommand) -> None:
    app.action_inbox()


async def overview(app: AppAPI, sid: str, command: SlashCommand) -> None:
    app.action_overview()


async def sessions(app: AppAPI, sid: str, command: SlashCommand) -> None:
    records = await app.runtime.lifecycle.list_sessions()
    app.show_screen(SessionsScreen(records, set(app.panels)), app.session_picked)


# --- commands of the focused session ---------------------------------------------------------------
async def close(app: AppAPI, sid: str, command: SlashCommand) -> None:
    await app.close_session(sid)


async def cancel(app: AppAPI, sid: str, command: SlashCommand) -> None:
    if not app.runtime.cancel(sid):
        app.notify("Nothing is running in this session.")


async def clear(app: AppAPI, sid: str, command: SlashCommand) -> None:
    await app.runtime.lifecycle.clear_session(sid)  # its ConversationCleared empties the panel
    app.sync_panel(sid)


async def rename(app: AppAPI, sid: str, command: SlashCommand) -> None:
    await app.runtime.controls.rename_session(sid, command.arg or "")
    app.sync_panel(sid)


async def model(app: AppAPI, sid: str, command: SlashCommand) -> None:
    if app.runtime.controls.runs_agent(sid):  # an external ACP agent: its own models (a note in its panel)
        await app.runtime.controls.agent_model(sid, command.arg)
        return
    await app.runtime.controls.set_model(sid, command.arg or "")
    app.sync_panel(sid)
    app.runtime.notice(sid, f"Model set to {app.runtime.sessions[sid].model} (from the next request).")


async def mode(app: AppAPI, sid: str, command: SlashCommand) -> None:
    if app.runtime.controls.runs_agent(sid):  # an external ACP agent: its own modes (a note in its panel)
        await app.runtime.controls.agent_mode(sid, command.arg)
        return
    await app.runtime.controls.set_mode(sid, command.arg or "")
    app.sync_panel(sid)
    app.runtime.notice(sid, f"Permission mode set to {app.runtime.sessions[sid].mode}.")


async def sandbox(app: AppAPI, sid: str, command: SlashCommand) -> None:
    if command.arg:
        app.runtime.controls.set_sandbox(sid, command.arg)
    app.notify(app.runtime.controls.sandbox_report(sid), title="Sandbox", markup=False, timeout=12)


async def takeover(app: AppAPI, sid: str, command: SlashCommand) -> None:
    await app.runtime.lifecycle.take_over(sid)


async def compact(app: AppAPI, sid: str, command: SlashCommand) -> None:
    outcome = await app.runtime.memory.compact(sid, command.arg)
    if outcome.ok:
        app.notify(outcome.message)


async def remember(app: AppAPI, sid: str, command: SlashCommand) -> None:
    project = bool(command.options.get("project"))
    await app.runtime.memory.remember(sid, command.arg or "", project=project)
    app.notify("Noted for the whole project." if project else "Noted for this session.")


async def memory(app: AppAPI, sid: str, command: SlashCommand) -> None:
    report = await app.runtime.memory.memory(sid)
    app.show_screen(TableScreen("Memory", ("kind", "from / by", "text"), report.rows()))


async def decide(app: AppAPI, sid: str, command: SlashCommand) -> None:
    await app.runtime.memory.decide(sid, command.arg or "")
    app.notify("Decision recorded: every session of the project sees it from its next request.")


async def decisions(app: AppAPI, sid: str, command: SlashCommand) -> None:
    found = await app.runtime.memory.decisions(command.arg)
    rows = [(str(d.id), decision_line(d)) for d in found] or [("", "no decisions yet: /decide TEXT")]
    app.show_screen(TableScreen("Decisions", ("#", "decision"), rows))


async def review(app: AppAPI, sid: str, command: SlashCommand) -> None:
    from paragents.ui.fanout.team import run_review  # deferred: start-up time (module docstring)

    await run_review(app, sid, command.arg)


async def split(app: AppAPI, sid: str, command: SlashCommand) -> None:
    from paragents.ui.fanout.team import run_split  # deferred: start-up time (module docstring)

    await run_split(app, sid, command.arg or "")


async def lane(app: AppAPI, sid: str, command: SlashCommand) -> None:
    rt = app.runtime
    if command.arg == "adapt":
        await rt.lanes.adapt_lane(sid)
        app.notify("Asked this lane's agent to adapt to the predicted conflict (queued).")
    else:
        text = await (rt.lanes.lane_gc() if command.arg == "gc" else rt.lanes.lane_report(sid))
        app.notify(text, title="Lanes", markup=False, timeout=15)


async def fanout(app: AppAPI, sid: str, command: SlashCommand) -> None:
    from paragents.ui.fanout.hooks import run_fanout_command  # deferred: start-up time (module docstring)

    await run_fanout_command(app, sid, command)


async def budget(app: AppAPI, sid: str, command: SlashCommand) -> None:

    await run_budget_command(app, sid, command)


async def mcp(app: AppAPI, sid: str, command: SlashCommand) -> None:
    if "prompt" in command.options:  # /mcp__server__prompt ARGS: the prompt's text is sent as a prompt
        text = await app.runtime.mcp.mcp_prompt(
            sid, command.options["prompt"], command.options.get("args", "")
        )
        app.runtime.submit(sid, text)
        app.sync_panel(sid)
        return
    if command.arg:
        app.notify(await app.runtime.mcp.mcp_restart(command.arg), title="MCP", markup=False)
        return
    app.show_screen(mcp_screen(app.runtime.mcp.mcp_report(sid)))


async def agent(app: AppAPI, sid: str, command: SlashCommand) -> None:
    """``/agent new``: a new external agent session in this panel (paragents.sessions.acp)."""
    await app.runtime.lifecycle.start_new_agent_session(sid)


async def fork(app: AppAPI, sid: str, command: SlashCommand) -> None:
    await app.add_panel(await app.runtime.lifecycle.fork(sid, command.arg))


APP_HANDLERS: dict[str, Handler] = {
    "new": new,
    "help": show_help,
    "quit": quit_app,
    "setup": setup,
    "reload": reload,
    "show-config": show_config,
    "permissions": permissions,
    "inbox": inbox,
    "overview": overview,
    "sessions": sessions,
    "lanes": lanes,
    "serve": serve_hooks.serve,
    "pair": serve_hooks.pair,
    "fanout": fanout,
}
"""Commands that need no open session."""
SESSION_HANDLERS: dict[str, Handler] = {
    "close": close,
    "cancel": cancel,
    "clear": clear,
    "rename": rename,
    "model": model,
    "mode": mode,
    "sandbox": sandbox,
    "takeover": takeover,
    "lane": lane,
    "budget": budget,
    "mute": budget,
    "compact": compact,
    "remember": remember,
    "memory": memory,
    "decide": decide,
    "decisions": decisions,
    "review": review,
    "split": split,
    "fork": fork,
    "mcp": mcp,
    "agent": agent,
}
"""Commands of the session whose prompt box they were typed in."""
HANDLERS: dict[str, Handler] = {**APP_HANDLERS, **SESSION_HANDLERS}
"""Every command's handler by name (one per entry of ``ui/commands.COMMANDS``; a test checks it)."""
SESSION_COMMANDS = frozenset(SESSION_HANDLERS)
