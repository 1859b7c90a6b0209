"""Slash commands typed in a panel's prompt box (or picked in the palette), run for the app.

:func:`run_command` is what ``ParagentsApp.run_command`` does: it calls the Runtime facade and opens
screens; every readable error (config, session, store, LLM, policy) becomes a notification."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paragents.config import ConfigError, describe_changes
from paragents.ui.budget_hooks import run_budget_command
from paragents.ui.commands import SlashCommand
from paragents.ui.screens.info import TableScreen, config_screen, help_screen, permissions_screen
from paragents.ui.screens.sessions import SessionsScreen
from paragents.ui.screens.setup import SetupScreen


async def run_command(app: Any, sid: str | None, command: SlashCommand) -> None:
    """Run ``command`` for session ``sid`` (the panel it was typed in) on ``app`` (a ``ParagentsApp``).
    Readable errors become notifications; anything else is raised (a bug)."""
    rt = app.runtime
    name = command.name
    try:
        if name == "new":
            opts = command.options
            await app._new_session(
                command.arg, model=opts.get("model"), workdir=Path(opts["dir"]) if "dir" in opts else None
            )
        elif name == "help":
            app.push_screen(help_screen())
        elif name == "quit":
            await app.action_quit()
        elif name == "setup":
            app.push_screen(SetupScreen(rt.loaded.config), app._after_setup)
        elif name == "reload":
            await reload_config(app)
        elif name == "show-config":
            app.push_screen(config_screen(rt.config_rows()))
        elif name == "permissions":
            app.push_screen(permissions_screen(getattr(rt, "policy", None)))
        elif name == "inbox":
            app.action_inbox()
        elif name == "overview":
            app.action_overview()
        elif name == "sessions":
            records = await rt.list_sessions()
            app.push_screen(SessionsScreen(records, set(app.panels)), app._after_sessions)
        elif sid is None or sid not in app.panels:
            app.notify(f"/{name} needs an open session: ctrl+n opens one.", severity="warning")
        elif name in ("budget", "mute"):
            await run_budget_command(app, sid, command)
        elif name == "close":
            await app.close_session(sid)
        elif name == "cancel":
            if not rt.cancel(sid):
                app.notify("Nothing is running in this session.")
        elif name == "clear":
            await rt.clear_session(sid)
            await app.panels[sid].clear_transcript()
            app.panels[sid].sync(rt.sessions[sid])
        elif name in ("rename", "model", "mode"):
            method = {"rename": rt.rename_session, "model": rt.set_model, "mode": rt.set_mode}[name]
            await method(sid, command.arg or "")
            app.panels[sid].sync(rt.sessions[sid])
        elif name == "sandbox":
            if command.arg:
                rt.set_sandbox(sid, command.arg)
            app.notify(rt.sandbox_report(sid), title="Sandbox", markup=False, timeout=12)
        elif name == "takeover":
            await rt.take_over(sid)
        elif name == "compact":
            outcome = await rt.compact(sid, command.arg)
            if outcome.ok:
                app.notify(outcome.message)
        elif name == "remember":
            project = bool(command.options.get("project"))
            await rt.remember(sid, command.arg or "", project=project)
            app.notify("Noted for the whole project." if project else "Noted for this session.")
        elif name == "memory":
            report = await rt.memory(sid)
            app.push_screen(TableScreen("Memory", ("kind", "from / by", "text"), report.rows()))
        elif name == "fork":
            await app._add_panel(await rt.fork(sid, command.arg))
    except (ConfigError, ValueError, OSError) as exc:
        app._error(exc)
    except Exception as exc:
        if type(exc).__name__ in ("SessionError", "StoreError", "LLMError", "PolicyError"):
            app._error(exc)
        else:
            raise


async def reload_config(app: Any) -> None:
    """``/reload``: re-read the config files, apply them and say what changed (or which file and field
    is wrong; the running config then stays as it was)."""
    rt = app.runtime
    try:
        changes = await rt.reload_config()
    except ConfigError as exc:
        app.notify(
            f"Config not reloaded (the old one stays): {exc}", severity="error", timeout=12, markup=False
        )
        return
    for sid, panel in app.panels.items():
        if sid in rt.sessions:
            panel.sync(rt.sessions[sid])
    app.notify(describe_changes(changes, rt.loaded.files), timeout=10, markup=False)
