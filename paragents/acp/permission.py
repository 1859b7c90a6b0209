"""One policy over external agents: an ACP tool call (its kind, ``rawInput`` and ``locations``) mapped
onto paragents' rule families, and the agent's permission option that carries paragents' answer.

``execute`` -> ``Bash(command)`` (the tree-sitter-bash analysis), ``edit``/``delete``/``move`` ->
``Edit(path)``, ``read``/``search`` -> ``Read(path)``, ``fetch`` -> ``WebFetch``; any other kind, or a
call without the command or path the rule needs, asks. Nothing here imports Textual."""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from acp.schema import PermissionOption, ToolCallUpdate

from paragents.conflicts.reads import make_diff
from paragents.models import CallPreview, ToolCall
from paragents.permissions import Decision

if TYPE_CHECKING:
    from pathlib import Path

    from paragents.permissions import Policy

_PATH_KEYS = ("path", "file_path", "filePath", "absolute_path", "absolutePath", "notebook_path", "dir_path")
_COMMAND_KEYS = ("command", "cmd")
WRITE_KINDS = ("edit", "delete", "move")
"""ACP tool kinds that change files: checked as ``Edit`` and by the conflict checker."""


@dataclass(frozen=True)
class MappedCall:
    """An ACP tool call as paragents' policy sees it: one ``(tool, arguments)`` check per path (a move
    has two), or none when the call cannot be mapped (then the user is asked); ``call`` is the
    paragents ToolCall shown in the panel and the audit, ``summary`` its one line."""

    checks: tuple[tuple[str, dict[str, Any]], ...]
    call: ToolCall
    summary: str
    kind: str


def _raw(update: ToolCallUpdate) -> dict[str, Any]:
    raw = update.raw_input
    return raw if isinstance(raw, dict) else {}


def _paths(update: ToolCallUpdate) -> list[str]:
    found = [loc.path for loc in update.locations or () if loc.path]
    raw = _raw(update)
    for key in _PATH_KEYS:
        value = raw.get(key)
        if isinstance(value, str) and value and value not in found:
            found.append(value)
    return found


def _command(update: ToolCallUpdate) -> str | None:
    raw = _raw(update)
    for key in _COMMAND_KEYS:
        value = raw.get(key)
        if isinstance(value, str) and value.strip():
            return value
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
            return shlex.join(value)
    return None


def map_call(update: ToolCallUpdate) -> MappedCall:
    """Map an ACP tool call (from ``session/request_permission``) onto the rule families."""
    kind = str(update.kind or "other")
    raw = _raw(update)
    title = update.title or kind
    checks: list[tuple[str, dict[str, Any]]] = []
    name = f"acp_{kind}"
    summary = title
    if kind == "execute":
        command = _command(update)
        if command is not None:
            checks.append(("Bash", {"command": command}))
            name, summary = "run_command", command
    elif kind in WRITE_KINDS:
        paths = _paths(update)
        checks.extend(("Edit", {"path": p}) for p in paths)
        if paths:
            name, summary = "write_file", f"{title} ({', '.join(paths)})" if title not in paths else title
    elif kind in ("read", "search"):
        paths = _paths(update) or (["."] if kind == "search" else [])
        checks.extend(("Read", {"path": p}) for p in paths)
        if paths:
            name = "read_file"
    elif kind == "fetch":
        checks.append(("WebFetch", {"url": raw.get("url", "")}))
    arguments = json.dumps(raw, ensure_ascii=False, default=str) if raw else "{}"
    call = ToolCall(id=update.tool_call_id, name=name, arguments=arguments)
    return MappedCall(tuple(checks), call, summary, kind)


def decide_mapped(
    policy: Policy, mapped: MappedCall, *, cwd: Path, mode: str, session_rules: Sequence[str] = ()
) -> Decision:
    """The policy's one answer for an agent's permission request: every check of ``mapped`` is
    decided (a deny wins, then an ask); a call with no command or path to check asks. What a
    session does with the request and what ``paragents permissions check --tool acp:KIND`` prints."""
    if not mapped.checks:
        why = f"the agent's {mapped.kind} call names no command or path to check, so it asks"
        return Decision("ask", why, scope="default")
    decisions: list[Decision] = []
    for tool, args in mapped.checks:
        try:
            decisions.append(
                policy.decide(tool, args, cwd=cwd, mode=mode, session_rules=tuple(session_rules))
            )
        except ValueError as err:
            return Decision("ask", f"the agent's {mapped.kind} call cannot be checked ({err}), so it asks")
    for kind in ("deny", "ask"):
        found = next((d for d in decisions if d.decision == kind), None)
        if found is not None:
            return found
    return decisions[0]


def preview_of(update: ToolCallUpdate, mapped: MappedCall, cwd: str = "") -> CallPreview | None:
    """What the call will do, from the agent's own content (a diff) or its command line (run in the
    agent's ``cwd`` from its raw input, else ``cwd``: the session's directory)."""
    for item in update.content or ():
        if getattr(item, "type", None) == "diff":
            old = getattr(item, "old_text", None)
            new = getattr(item, "new_text", "") or ""
            path = getattr(item, "path", "") or ""
            if old is None:
                return CallPreview("content", new, f"new file {path}")
            return CallPreview("diff", make_diff(old, new, path.rsplit("/", 1)[-1]), path)
    if mapped.kind == "execute" and mapped.checks:
        raw_cwd = _raw(update).get("cwd")
        where = raw_cwd if isinstance(raw_cwd, str) and raw_cwd else cwd
        return CallPreview("command", str(mapped.checks[0][1]["command"]), cwd=where)
    return None


def pick_option(options: Sequence[PermissionOption], allow: bool, always: bool = False) -> str | None:
    """Return the id of the agent's option carrying an answer: allow (``always``: allow_always when the
    agent has it) or reject; the once-option first. None when the agent offers no such option."""
    if allow:
        order = ("allow_always", "allow_once") if always else ("allow_once", "allow_always")
    else:
        order = ("reject_once", "reject_always")
    for kind in order:
        for option in options:
            if option.kind == kind:
                return option.option_id
    return None
