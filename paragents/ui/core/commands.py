"""Slash commands typed in a session's prompt box: their table and a pure parser.

No Textual import here, so the parser is unit-testable on its own. :func:`parse_command` turns a
line such as ``/new api --model qwen --dir ../api`` into a :class:`SlashCommand`, or returns a
:class:`CommandError` whose ``message`` is one readable sentence (unknown command, missing or
extra argument) naming the commands that exist. The app maps each command name to an action.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from paragents.permissions import PermissionMode

PERMISSION_MODES: tuple[str, ...] = tuple(mode.value for mode in PermissionMode)
"""Claude Code's permission modes (``paragents.permissions.PermissionMode``), accepted by ``/mode``."""
SANDBOX_MODES: tuple[str, ...] = ("off", "auto", "required")
"""Sandbox modes of ``run_command``, accepted by ``/sandbox``."""


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """One slash command: ``name`` (without the slash), ``usage`` line and one-line ``help``."""

    name: str
    usage: str
    help: str


COMMANDS: tuple[CommandSpec, ...] = (
    CommandSpec(
        "new",
        "/new [name] [--model M] [--agent NAME] [--dir PATH] [--lane[=NAME]] [--base REF] [--on WHERE]",
        "Open a new session (--agent: an external ACP agent: qwen, opencode, claude, codex, gemini...)",
    ),
    CommandSpec(
        "lane",
        "/lane [gc|adapt]",
        "Show the lanes (git worktrees); gc: remove those whose work landed; adapt: ask this lane to fit a "
        "predicted conflict",
    ),
    CommandSpec("lanes", "/lanes", "Review the lanes: commits and diff of each"),
    CommandSpec(
        "fanout",
        "/fanout N PROMPT|compare|allow",
        "Best-of-N in lanes (--models a,b --verify CMD --judge); compare by evidence; allow a rule for all",
    ),
    CommandSpec("close", "/close", "Close the focused session (it stays in /sessions)"),
    CommandSpec("rename", "/rename NAME", "Rename the focused session"),
    CommandSpec("model", "/model NAME", "Switch the focused session's model"),
    CommandSpec("mode", "/mode MODE", "Permission mode: " + "|".join(PERMISSION_MODES)),
    CommandSpec("sandbox", "/sandbox [off|auto|required]", "Show or switch the session's command sandbox"),
    CommandSpec("clear", "/clear", "Start a new conversation in the focused session"),
    CommandSpec("cancel", "/cancel", "Cancel the focused session's running turn"),
    CommandSpec("compact", "/compact [focus]", "Summarise older messages in requests (focus steers it)"),
    CommandSpec("remember", "/remember [--project] TEXT", "Store a note for this session (or the project)"),
    CommandSpec("memory", "/memory", "Show loaded AGENTS.md/CLAUDE.md files, notes and compaction"),
    CommandSpec("decide", "/decide TEXT", "Record a project-wide decision every session sees"),
    CommandSpec("decisions", "/decisions [search]", "List (or search) the project's decisions"),
    CommandSpec(
        "review", "/review [security,test,...] [--base REF]", "Read-only review of the diff by specialists"
    ),
    CommandSpec(
        "split", "/split PROMPT", "Plan subtasks, approve, run them in lanes into one integration lane"
    ),
    CommandSpec("fork", "/fork [name]", "Start a new session with a copy of this one's history"),
    CommandSpec("sessions", "/sessions", "List stored sessions; Enter reopens one"),
    CommandSpec("takeover", "/takeover", "Take over a session another live paragents holds (read-only here)"),
    CommandSpec(
        "budget",
        "/budget [session|project] [2.00usd|500k|30m|one-more|stop]",
        "Show or raise the session's (or the project's daily) budget; answer a budget pause",
    ),
    CommandSpec("mute", "/mute", "Mute (or unmute) this session's notifications"),
    CommandSpec(
        "agent",
        "/agent new",
        "External ACP agent: start a new agent session in this panel (the transcript stays above)",
    ),
    CommandSpec("inbox", "/inbox", "Every pending approval and conflict, oldest first (F2)"),
    CommandSpec("overview", "/overview", "One row per session, like top; Enter focuses it (F3)"),
    CommandSpec("serve", "/serve [PORT|stop]", "Serve the HTTP API and phone page on 127.0.0.1 (or stop it)"),
    CommandSpec("pair", "/pair", "Show a one-time link and QR code that signs a phone in"),
    CommandSpec("setup", "/setup", "Edit endpoint, model and API key"),
    CommandSpec("reload", "/reload", "Re-read runtime_config.json and apply it (says what changed)"),
    CommandSpec("show-config", "/show-config", "Show the effective configuration and its sources"),
    CommandSpec(
        "permissions",
        "/permissions [mode MODE]",
        "Show the effective permission rules (mode: set the session's)",
    ),
    CommandSpec(
        "mcp",
        "/mcp [restart NAME]",
        "MCP servers: state, PID, memory, tools, sessions using them, errors (/mcp__SERVER__PROMPT runs a "
        "server's prompt)",
    ),
    CommandSpec("help", "/help", "List commands and keys"),
    CommandSpec("quit", "/quit", "Quit paragents (sessions are restored next time)"),
)
"""Every slash command, in the order shown by ``/help`` and completion."""

_BY_NAME = {spec.name: spec for spec in COMMANDS}


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """A parsed command: ``name`` (e.g. "new") and its arguments.

    - ``arg``: the positional argument (name for /new and /rename, model for /model, mode for /mode),
      or None when absent. Multi-word names are joined with single spaces.
    - ``options``: ``--model`` / ``--dir`` values of ``/new`` keyed ``"model"`` / ``"dir"``.
    """

    name: str
    arg: str | None = None
    options: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class CommandError:
    """A line that looked like a command but is not valid; ``message`` says why and what exists."""

    message: str


def is_command(text: str) -> bool:
    """Return True when ``text`` is meant as a slash command (starts with "/", not "//")."""
    stripped = text.lstrip()
    return stripped.startswith("/") and not stripped.startswith("//")


def known_names() -> str:
    """Return the command names as one readable list: "/new, /close, ..."."""
    return ", ".join("/" + spec.name for spec in COMMANDS)


def complete(prefix: str) -> list[CommandSpec]:
    """Return the commands whose "/name" starts with ``prefix`` (e.g. "/se" → sessions, setup).

    ``prefix`` must be the start of the line without a space (completion only covers the name)."""
    if not prefix.startswith("/") or " " in prefix:
        return []
    head = prefix[1:].lower()
    return [spec for spec in COMMANDS if spec.name.startswith(head)]


def parse_command(text: str) -> SlashCommand | CommandError:
    """Parse one prompt line starting with "/" into a command.

    Takes the raw line; returns a :class:`SlashCommand` or a :class:`CommandError` (never raises).
    Quoting follows POSIX shell words (``shlex``), so ``/rename "my api"`` and ``/new "a b"`` work."""
    head, _, rest = text.strip().partition(" ")
    if head.lower() == "/fanout":  # the prompt is taken as written (quotes and apostrophes included)
        first, _, after = rest.strip().partition(" ")
        if first in ("--split", "--review"):  # the spelling of /split and /review
            return parse_command(f"/{first[2:]} {after}".strip())
        return SlashCommand("fanout", rest.strip() or None)
    try:
        words = shlex.split(text.strip())
    except ValueError as exc:
        return CommandError(f"Cannot read the command ({exc}); close the quotes and try again.")
    if not words or not words[0].startswith("/") or words[0] == "/":
        return CommandError(f"Type a command name after '/'. Commands: {known_names()}.")
    if words[0].startswith("/mcp__"):  # an MCP server's prompt: /mcp__server__prompt ARGS
        rest = text.strip()[len(words[0]) :].strip()
        return SlashCommand("mcp", None, {"prompt": words[0][1:], "args": rest})
    name = words[0][1:].lower()
    args = words[1:]
    spec = _BY_NAME.get(name)
    if spec is None:
        matches = complete("/" + name[:2]) if name else []
        hint = f" Did you mean {', '.join('/' + m.name for m in matches)}?" if matches else ""
        return CommandError(f"Unknown command /{name}.{hint} Commands: {known_names()}.")
    if name == "new":
        return _parse_new(args, spec)
    if name in ("decide", "split") and not args:
        return CommandError(f"/{name} needs some text. Usage: {spec.usage}")
    if name in ("compact", "fork", "budget", "decide", "decisions", "review", "split"):
        return SlashCommand(name, " ".join(args) or None)
    if name == "remember":
        project = bool(args) and args[0] == "--project"
        text = " ".join(args[1:] if project else args)
        if not text:
            return CommandError(f"/remember needs the note text. Usage: {spec.usage}")
        return SlashCommand(name, text, {"project": "1"} if project else {})
    if name == "agent":
        if args != ["new"]:
            return CommandError(f"/agent takes 'new'. Usage: {spec.usage}")
        return SlashCommand(name, "new")
    if name == "lane":
        if args not in ([], ["gc"], ["adapt"]):
            return CommandError(f"/lane takes nothing, 'gc' or 'adapt'. Usage: {spec.usage}")
        return SlashCommand(name, args[0] if args else None)
    if name == "serve":
        if len(args) > 1 or (
            args and args[0] != "stop" and not (args[0].isdigit() and int(args[0]) <= 65535)
        ):
            return CommandError(f"/serve takes a port number (0-65535) or 'stop'. Usage: {spec.usage}")
        return SlashCommand(name, args[0] if args else None)
    if name == "mcp":
        if args and (args[0] != "restart" or len(args) != 2):
            return CommandError(f"/mcp takes nothing or 'restart NAME'. Usage: {spec.usage}")
        return SlashCommand(name, args[1] if args else None)
    if name == "permissions" and args:
        if len(args) != 2 or args[0] != "mode" or args[1] not in PERMISSION_MODES:
            return CommandError(f"/permissions takes nothing or 'mode MODE' ({', '.join(PERMISSION_MODES)}).")
        return SlashCommand(name, None, {"mode": args[1]})
    if name == "sandbox":
        if len(args) > 1 or (args and args[0] not in SANDBOX_MODES):
            return CommandError(f"/sandbox takes one of {', '.join(SANDBOX_MODES)}. Usage: {spec.usage}")
        return SlashCommand(name, args[0] if args else None)
    if name in ("rename", "model", "mode"):
        if not args:
            return CommandError(f"/{name} needs an argument. Usage: {spec.usage}")
        value = " ".join(args)
        if name == "mode" and value not in PERMISSION_MODES:
            return CommandError(f"Unknown mode '{value}'. Modes: {', '.join(PERMISSION_MODES)}.")
        if name == "model" and len(args) > 1:
            return CommandError(f"/model takes one model name. Usage: {spec.usage}")
        return SlashCommand(name, value)
    if args:
        return CommandError(f"/{name} takes no arguments. Usage: {spec.usage}")
    return SlashCommand(name)


def _parse_new(args: list[str], spec: CommandSpec) -> SlashCommand | CommandError:
    options: dict[str, str] = {}
    names: list[str] = []
    i = 0
    while i < len(args):
        word = args[i]
        if word.startswith("--"):
            key, eq, value = word[2:].partition("=")
            if key == "lane":  # a flag, or --lane=NAME
                options["lane"] = value if eq else ""
                i += 1
                continue
            if key not in ("model", "dir", "base", "agent", "on"):
                return CommandError(f"/new has no option --{key}. Usage: {spec.usage}")
            if not eq:
                if i + 1 >= len(args):
                    return CommandError(f"--{key} needs a value. Usage: {spec.usage}")
                i += 1
                value = args[i]
            if not value:
                return CommandError(f"--{key} needs a value. Usage: {spec.usage}")
            options[key] = value
        else:
            names.append(word)
        i += 1
    return SlashCommand("new", " ".join(names) or None, options)


def help_rows() -> list[tuple[str, str]]:
    """Return ``(usage, help)`` rows for every command, for the help screen."""
    return [(spec.usage, spec.help) for spec in COMMANDS]
