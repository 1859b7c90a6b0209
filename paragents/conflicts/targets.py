"""What a tool call will write: resolved paths, named resources, and whether targets are unknowable.

``write_file``/``edit_file`` write their ``path``; ``run_command`` writes what the permission layer's
shell parser (:func:`paragents.permissions.write_targets`, tree-sitter-bash) finds: redirects, ``tee``,
``cp``/``mv``/``rm``/``touch``/``mkdir``/``sed -i``... A command whose targets cannot be known (a
dynamic path, ``xargs`` writers, a syntax error) is flagged ``unknown``. Named resources come from
``RuntimeConfig.resources`` (Bash rule patterns, Claude Code syntax).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from paragents.conflicts.ports import PORT_PREFIX, command_ports
from paragents.permissions import parse_command, write_targets
from paragents.permissions.rules import bash_matches
from paragents.tools.fsutil import resolve_path

WRITE_TOOLS = ("write_file", "edit_file")
"""Tools whose ``path`` argument is the one file they write (stale reads are checked for these)."""
SHELL_TOOL = "run_command"
"""The tool whose ``command`` argument is a bash line."""
RESOURCE_PREFIX = "resource:"
"""Reservations of named resources store their path as ``resource:NAME``."""
_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True)
class CallTargets:
    """What one call writes: ``paths`` (absolute, symlinks resolved, may end in a glob), ``resources``
    (names from the config), ``unknown`` True when some write targets cannot be known beforehand, and
    ``file`` the single file of write_file/edit_file (None for commands)."""

    paths: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    unknown: bool = False
    file: str | None = None
    commands: tuple[str, ...] = field(default=(), compare=False)
    ports: tuple[int, ...] = ()
    """TCP ports the command names (checked against lanes' ``port:N`` reservations, never reserved)."""

    @property
    def empty(self) -> bool:
        """True when the call writes nothing we know of and is not flagged unknown (nothing to check)."""
        return not (self.paths or self.resources or self.unknown or self.ports)


def normalize(path: str | Path) -> str:
    """Return ``path`` absolute with symlinks resolved (non-strict: missing parts are kept)."""
    return os.path.realpath(os.fspath(path))


def _glob_free(path: str) -> tuple[str, bool]:
    """Return (the longest leading part of ``path`` without glob characters, True if a glob was cut)."""
    parts = Path(path).parts
    for i, part in enumerate(parts):
        if _GLOB_CHARS & set(part):
            return str(Path(*parts[:i])) if i else "/", True
    return path, False


def paths_overlap(a: str, b: str) -> bool:
    """Return True when writes to ``a`` and ``b`` (absolute paths, possibly with glob parts) may touch
    the same file: the same path, one a directory holding the other, or (conservatively) globs whose
    fixed leading directories nest."""
    if a.startswith((RESOURCE_PREFIX, PORT_PREFIX)) or b.startswith((RESOURCE_PREFIX, PORT_PREFIX)):
        return a == b
    pa, _ = _glob_free(a)
    pb, _ = _glob_free(b)
    if pa == pb:
        return True
    # a directory (or a glob's fixed leading part) and anything under it
    return pb.startswith(pa.rstrip("/") + "/") or pa.startswith(pb.rstrip("/") + "/")


def _command_lines(command: str) -> list[str]:
    """Return each simple command of ``command`` (and each wrapped command) as words joined by spaces."""
    lines: list[str] = []
    for simple in parse_command(command).commands:
        for layer in simple.layers or (simple.words,):
            text = " ".join(layer)
            if text and text not in lines:
                lines.append(text)
    return lines


def _resource_spec(pattern: str) -> str | None:
    """Return the Bash specifier of a resource pattern written ``Bash(spec)`` or bare ``spec``."""
    text = pattern.strip()
    if text.startswith("Bash(") and text.endswith(")"):
        text = text[5:-1]
    return text or None


def matching_resources(command: str, resources: Iterable[Any]) -> tuple[str, ...]:
    """Return the names of ``resources`` (``SharedResource``: ``name``, ``commands`` Bash patterns)
    used by some simple command of ``command``."""
    resources = list(resources)
    if not resources:
        return ()
    lines = _command_lines(command)
    names: list[str] = []
    for res in resources:
        for pattern in res.commands:
            spec = _resource_spec(pattern)
            if any(bash_matches(spec, line) for line in lines):
                names.append(res.name)
                break
    return tuple(names)


MCP_PATH_KEYS = ("path", "file_path", "filePath", "paths", "file_paths")
"""Arguments of an MCP tool that declare the paths it works on (conflict checks apply to them)."""


def mcp_targets(args: dict[str, Any], workdir: Path) -> CallTargets:
    """The paths an MCP tool call declares in its arguments (``path``, ``file_path``, ``paths``...),
    taken as written by the call (the agent skips read-only tools)."""
    found: list[str] = []
    for key in MCP_PATH_KEYS:
        value = args.get(key)
        for item in value if isinstance(value, list) else [value]:
            if isinstance(item, str) and item and "\x00" not in item:
                norm = normalize(resolve_path(workdir, item))
                if norm not in found:
                    found.append(norm)
    return CallTargets(paths=tuple(found))


def call_targets(
    tool: str, args: dict[str, Any], workdir: Path, resources: Iterable[Any] = ()
) -> CallTargets:
    """Return what the call of ``tool`` (paragents tool name) with validated ``args`` writes, relative
    paths taken from ``workdir``. Reads and unknown tools return an empty :class:`CallTargets`."""
    if tool in WRITE_TOOLS and isinstance(args.get("path"), str):
        file = normalize(resolve_path(workdir, args["path"]))
        return CallTargets(paths=(file,), file=file)
    if tool.startswith("mcp__"):
        return mcp_targets(args, workdir)
    if tool == SHELL_TOOL and isinstance(args.get("command"), str):
        command = args["command"]
        cwd = args.get("cwd")  # the command's relative paths resolve in its cwd (checked by the policy)
        base = Path(os.path.realpath(workdir / os.path.expanduser(cwd))) if isinstance(cwd, str) else workdir
        found, unknown = write_targets(command, base)
        paths: list[str] = []
        for p in found:
            fixed, globbed = _glob_free(str(p))
            norm = normalize(fixed) if not globbed else str(p).replace(fixed, normalize(fixed), 1)
            if norm not in paths:
                paths.append(norm)
        return CallTargets(
            paths=tuple(paths),
            resources=matching_resources(command, resources),
            unknown=unknown,
            commands=(command,),
            ports=command_ports(command),
        )
    return CallTargets()
