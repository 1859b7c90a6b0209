"""``paragents sessions list | show NAME | export NAME --format md|json``: read persisted sessions."""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from paragents import paths
from paragents.store import Store
from paragents.store.connection import pid_alive


def _when(ts: float) -> str:
    return dt.datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M")


def _shown_state(state: str, pid: int | None) -> str:
    """Return the state to show: a session left running/waiting by a process that is gone is
    ``interrupted`` (``idle`` when it was only queued), as the next start will record it."""
    if state in ("running", "waiting", "queued", "budget") and not pid_alive(pid):
        return "idle" if state == "queued" else "interrupted"
    return state


def transcript_markdown(name: str, messages: list[dict[str, Any]]) -> str:
    """Return a session's messages as a Markdown document (user, assistant, tool calls and results)."""
    lines = [f"# Session {name}", ""]
    for msg in messages:
        role = msg.get("role")
        if role == "user":
            lines += ["## User", "", str(msg.get("content") or ""), ""]
        elif role == "assistant":
            lines += ["## Assistant" + (" (incomplete)" if msg.get("incomplete") else ""), ""]
            if msg.get("reasoning_content"):
                lines += ["> " + line for line in str(msg["reasoning_content"]).splitlines()] + [""]
            if msg.get("content"):
                lines += [str(msg["content"]), ""]
            for call in msg.get("tool_calls") or []:
                fn = call.get("function", {})
                lines += [f"**tool call** `{fn.get('name')}` `{fn.get('arguments')}`", ""]
        elif role == "tool":
            lines += [
                f"**tool result** ({msg.get('tool_call_id')}, {msg.get('outcome') or 'ok'}):",
                "",
                "```",
                str(msg.get("content")),
                "```",
                "",
            ]
    return "\n".join(lines)


async def run_sessions(args: Any) -> int:
    """Run a ``sessions`` subcommand; return the exit code (2 when the session does not exist)."""
    project_dir = Path(args.dir or ".").expanduser().resolve()
    console = Console(highlight=False)
    db = paths.db_path()
    if not db.exists():
        console.print("no sessions yet (no store at " + str(db) + ")")
        return 0 if args.sessions_command == "list" else 2
    store = await Store.open(db)
    try:
        if args.sessions_command == "list":
            recs = await store.sessions.all(None if getattr(args, "all", False) else project_dir)
            table = Table("name", "state", "model", "messages", "tokens", "updated", "open", "project")
            for r in recs:
                count = await store.messages.count(r.id)
                table.add_row(
                    r.name,
                    _shown_state(r.state, r.pid),
                    r.model,
                    str(count),
                    str(r.usage.total_tokens),
                    _when(r.updated_at),
                    "yes" if r.is_open else "",
                    str(r.project_dir),
                )
            console.print(table)
            return 0
        rec = await store.sessions.find(project_dir, args.name)
        if rec is None:
            print(f"paragents sessions: no session named {args.name!r} in {project_dir}", file=sys.stderr)
            return 2
        stored = await store.messages.load(rec.id)
        messages = [s.for_display() for s in stored]  # incomplete replies marked, tool outcomes kept
        if args.sessions_command == "export" and args.format == "json":
            print(
                json.dumps(
                    {"session": rec.name, "model": rec.model, "messages": messages},
                    indent=2,
                    ensure_ascii=False,
                )
            )
        else:
            print(transcript_markdown(rec.name, messages))
        return 0
    finally:
        await store.close()
