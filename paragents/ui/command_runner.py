"""Slash commands typed in a panel's prompt box (or picked in the palette), run for the app.

:func:`run_command` is what ``ParagentsApp.run_command`` does: it calls the Runtime facade and opens
screens; every readable error (config, session, store, LLM, policy) becomes a notification."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from paragents.config import ConfigError
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
        elif name == "close":
            await app.close_session(sid)
        elif name == "cancel":
            if not rt.cancel(sid):
                app.notify("Nothing is running in this session.")
        elif name == "clear":
            await rt.clear_session(sid)
            await app.panels[sid].clear_transcript()
        elif name in ("rename", "model", "mode"):
            method = {"rename": rt.rename_session, "model": rt.set_model, "mode": rt.set_mode}[name]
            await method(sid, command.arg or "")
            app.panels[sid].sync(rt.sessions[sid])
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
