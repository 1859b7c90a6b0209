"""The one "destructive" classifier: does a call delete or overwrite what it cannot give back?

The approval bar, the inbox, the phone page (its second tap) and ``paragents permissions check --json``
all ask :func:`destructive_reason`. A command is looked at as the permission layer's shell parser
sees it (every simple command, every wrapped layer, the programs of ``bash -c``, here-strings,
heredocs and pipes into a shell), and a command the parser cannot see into is treated as the most
dangerous thing it could run: destructive.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from paragents.permissions import known_commands as known
from paragents.permissions.parsed import ParsedCommand
from paragents.permissions.shell import parse_command

_DELETERS = frozenset({"rm", "rmdir", "unlink", "shred", "wipefs", "srm", "truncate"})
_GIT_FORCE = frozenset(
    {"-f", "--force", "--force-with-lease", "--force-if-includes", "--mirror", "--delete", "-d"}
)
_CODE_CALLS = re.compile(
    r"rmtree|\bremove\s*\(|\bunlink(?:Sync)?\s*\(|\brmdir(?:Sync)?\s*\(|\bremovedirs\s*\(|\brmSync\s*\("
    r"|\bfs\.rm\b|\brm_r[f]?\b|\brimraf\b|\bFileUtils\.rm|\bFile\.delete|\bos\.system\s*\(|\bsubprocess\."
    r"|\btruncate\s*\(|writeFileSync|\bopen\s*\([^)]*,\s*['\"][wx]|\bwrite_text\s*\(|\bwrite_bytes\s*\(",
)
"""Calls in an interpreter one-liner's code that delete, overwrite or run other commands."""
_SHELL_WORDS = re.compile(r"\brm\s+-|\bshred\b|\bmkfs")


def destructive_reason(
    tool: str, arguments: Mapping[str, Any], *, destructive_hint: bool = False
) -> str | None:
    """Why the call of ``tool`` with ``arguments`` deletes or overwrites data, or None.

    ``tool`` is an agent tool (``run_command``), a family (``Bash``), an ACP kind mapped by
    :mod:`paragents.acp.permission` (``acp_delete``, ``acp_move``) or an MCP tool;
    ``destructive_hint``: an MCP tool whose server says so (``destructiveHint``)."""
    if destructive_hint:
        return f"{tool} is marked destructive by its server (destructiveHint)"
    if tool in ("acp_delete", "delete"):
        return "the agent deletes files"
    command = arguments.get("command")
    if tool in ("run_command", "Bash") or (isinstance(command, str) and tool.startswith("acp_execute")):
        if not isinstance(command, str):
            return "the command is missing, so what it runs is not known"
        return command_destructive(command)
    return None


def call_destructive(tool: str, arguments: str) -> str | None:
    """:func:`destructive_reason` of a tool call as an ask carries it (its arguments as JSON text);
    arguments that are not a JSON object are treated as a call that cannot be analysed."""
    try:
        parsed = json.loads(arguments or "{}")
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return (
            "its arguments cannot be read, so it may delete anything"
            if tool in ("run_command", "Bash")
            else None
        )
    return destructive_reason(tool, parsed)


def command_destructive(command: str) -> str | None:
    """Why the bash ``command`` deletes or overwrites files (or cannot be analysed), or None."""
    parsed = parse_command(command)
    return parsed_destructive(parsed)


def parsed_destructive(parsed: ParsedCommand) -> str | None:
    """:func:`command_destructive` of an already parsed command."""
    if parsed.problem:
        return f"{parsed.problem}, so it may delete anything"
    for cmd in parsed.commands:
        if cmd.opaque:
            return f"`{cmd.text}`: {cmd.opaque}, so it may delete anything"
        for layer in cmd.layers:
            why = words_destructive(layer)
            if why:
                return why
    for target in parsed.writes:
        op = target.origin.split(" ", 1)[0]
        if op in (">", ">|", "&>"):
            shown = target.path if target.path is not None else target.origin[len(op) + 1 :]
            return f"`{target.origin}` truncates {shown}"
    for code in parsed.codes:
        if _CODE_CALLS.search(code) or _SHELL_WORDS.search(code):
            return f"its code deletes, overwrites or runs commands: {code[:80]!r}"
    return None


def words_destructive(words: tuple[str, ...]) -> str | None:
    """Why one simple command (its words, quotes removed) deletes or overwrites data, or None."""
    name = known.command_name(words)
    text = " ".join(words)
    if name in _DELETERS or name.startswith("mkfs"):
        return f"`{text}` deletes or overwrites files"
    if name == "dd" and any(w.startswith("of=") for w in words[1:]):
        return f"`{text}` overwrites its output file"
    if name == "find" and "-delete" in words:
        return f"`{text}` deletes the files it finds"
    if name == "git":
        return _git_destructive(words, text)
    return None


def _git_destructive(words: tuple[str, ...], text: str) -> str | None:
    sub, args = known.git_subcommand(words)
    if sub == "clean":
        return f"`{text}` deletes untracked files"
    if sub == "push" and (
        any(a in _GIT_FORCE or (a.startswith("-") and not a.startswith("--") and "f" in a[1:]) for a in args)
        or any(a.startswith(("+", ":")) and len(a) > 1 for a in args)
        or any(a.startswith("--force-with-lease=") for a in args)
    ):
        return f"`{text}` rewrites or deletes remote history"
    if sub == "reset" and "--hard" in args:
        return f"`{text}` discards uncommitted changes"
    if sub in ("checkout", "restore") and (sub == "restore" or "--" in args or "." in args or "-f" in args):
        if sub == "restore" and "--staged" in args and "--worktree" not in args and "-W" not in args:
            return None
        return f"`{text}` discards uncommitted changes to files"
    if sub == "stash" and args[:1] and args[0] in ("drop", "clear"):
        return f"`{text}` deletes stashed changes"
    if sub == "branch" and any(a in ("-D", "--delete") for a in args):
        return f"`{text}` deletes a branch"
    if sub in ("filter-branch", "filter-repo"):
        return f"`{text}` rewrites the repository's history"
    return None
