"""Which MCP servers a project has: user-level ``mcp.servers`` (runtime_config.json, trusted) and the
project's ``.mcp.json`` (Claude Code's shape), gated by ``enableAllProjectMcpServers`` /
``enabledMcpjsonServers`` / ``disabledMcpjsonServers`` in the permission files; ``${VAR}`` expansion.

A project server nobody trusted yet is ``trust == "unknown"``: the session that first needs it asks
(its command line shown) and an "always" answer is kept by ``remember_trust`` in the user's trust
records (paragents.trust), by the hash of the server's entry: a changed command asks again, and no
file inside the project (which the model can write) can trust a server."""

from __future__ import annotations

import json
import os
import re
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from paragents import jsonfile, treefiles, trust
from paragents.config import McpServerSettings, McpSettings

MCP_JSON = ".mcp.json"
LOCAL_SETTINGS = Path(".paragents") / "permissions.local.json"
Trust = Literal["trusted", "unknown", "refused"]
_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


class McpConfigError(Exception):
    """A ``.mcp.json`` or an MCP server entry is invalid; ``str(err)`` names the file and server."""


@dataclass(frozen=True)
class ServerEntry:
    """One configured server: its name, settings, where it came from and whether it may start."""

    name: str
    settings: McpServerSettings
    origin: Literal["user", "project"]
    trust: Trust = "trusted"

    def command_line(self) -> str:
        """The stdio command line as written (``${VAR}`` unexpanded), or the URL of an HTTP server."""
        s = self.settings
        if s.transport == "stdio":
            return shlex.join([s.command or "", *s.args])
        return s.url or ""


_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")


def expand(text: str, env: Mapping[str, str], where: str) -> str:
    """Expand ``${VAR}`` and ``${VAR:-default}`` from ``env``; raise McpConfigError naming ``where``
    and the variable when one is unset and has no default."""

    def sub(match: re.Match[str]) -> str:
        name, default = match.group(1), match.group(2)
        if name in env:
            return env[name]
        if default is not None:
            return default
        raise McpConfigError(f"{where}: ${{{name}}} is not set; export it or give a default (${{{name}:-x}})")

    return _VAR.sub(sub, text)


def expanded(entry: ServerEntry, env: Mapping[str, str]) -> McpServerSettings:
    """Return ``entry``'s settings with ``${VAR}`` expanded in command, args, env, cwd, url, headers."""
    s = entry.settings
    where = f"MCP server '{entry.name}'"
    return s.model_copy(
        update={
            "command": expand(s.command, env, where) if s.command else s.command,
            "args": tuple(expand(a, env, where) for a in s.args),
            "env": {k: expand(v, env, where) for k, v in s.env.items()},
            "cwd": expand(s.cwd, env, where) if s.cwd else s.cwd,
            "url": expand(s.url, env, where) if s.url else s.url,
            "headers": {k: expand(v, env, where) for k, v in s.headers.items()},
        }
    )


def _raw_settings(files: Sequence[Path], root: tuple[str, ...] | None = None) -> list[dict[str, Any]]:
    out = []
    for path in files:
        try:
            data = json.loads(_read_settings(path, root))
        except (OSError, ValueError):
            continue  # the permission loader reports unreadable files
        if isinstance(data, dict):
            out.append(data)
    return out


def project_trust(
    name: str,
    settings_files: Sequence[Path],
    project_dir: Path | None = None,
    settings: McpServerSettings | None = None,
) -> Trust:
    """Return whether the project server ``name`` may start: refused when any permission file lists it
    in ``disabledMcpjsonServers``; trusted when a file outside the project (the user's, the managed
    one) sets ``enableAllProjectMcpServers`` or lists it in ``enabledMcpjsonServers``, or when the user
    trusted this very entry before (its hash, kept in the user's state: paragents.trust); else unknown
    (asked when a session first needs it). A project's own files cannot trust its servers: the model
    could write them."""
    root = (os.path.realpath(project_dir), os.path.abspath(project_dir)) if project_dir is not None else None
    raw = _raw_settings(settings_files, root)
    if any(name in (d.get("disabledMcpjsonServers") or []) for d in raw):
        return "refused"
    outside = [
        d
        for path, d in zip(settings_files, _raw_settings_each(settings_files, root), strict=True)
        if d is not None and (root is None or not _inside(path, root))
    ]
    if any(d.get("enableAllProjectMcpServers") is True for d in outside):
        return "trusted"
    if any(name in (d.get("enabledMcpjsonServers") or []) for d in outside):
        return "trusted"
    recorded = trust.trust_key(project_dir, f"{MCP_JSON}#{name}") if project_dir is not None else None
    if settings is not None and recorded == trust.digest_of(_entry(settings)):
        return "trusted"
    return "unknown"


def _raw_settings_each(
    files: Sequence[Path], root: tuple[str, ...] | None = None
) -> list[dict[str, Any] | None]:
    """Each file's data (None when unreadable or not an object), in order."""
    out: list[dict[str, Any] | None] = []
    for path in files:
        try:
            data = json.loads(_read_settings(path, root))
        except (OSError, ValueError):
            data = None
        out.append(data if isinstance(data, dict) else None)
    return out


def _read_settings(path: Path, roots: tuple[str, ...] | None) -> str:
    """A settings file's text; a file of the project (``roots``: its real and its given path) only as a
    regular file, never through a symbolic link (paragents.treefiles): a command could link
    ``.claude/settings.json`` to a file outside the project that turns every project server on."""
    named = os.path.abspath(path)
    for root in roots or ():
        if _under(named, root):
            return treefiles.read_text(Path(named), root=Path(root))
    return path.read_text(encoding="utf-8")


def _under(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _inside(path: Path, roots: tuple[str, ...]) -> bool:
    """Whether ``path`` is in the project: where it points (its real path) or where it is named (a
    link in the project pointing outside is still the project's file)."""
    real, named = os.path.realpath(path), os.path.abspath(path)
    return any(_under(p, root) for p in (real, named) for root in roots)


def _entry(settings: McpServerSettings) -> dict[str, Any]:
    """The entry as trusted: everything it runs (command, args, env, cwd, url, headers)."""
    return settings.model_dump(mode="json")


def read_mcp_json(path: Path, problems: list[str] | None = None) -> dict[str, McpServerSettings]:
    """Read a ``.mcp.json`` (``{"mcpServers": {NAME: {...}}}``); {} when absent. Raises McpConfigError
    naming the file (and the server and field) for bad JSON, a bad shape or a bad entry; with
    ``problems`` given, a bad entry is added there instead and the file's other servers still load."""
    try:
        data = jsonfile.load(path, tree=path.parent)  # never through a link a command left (treefiles)
    except jsonfile.JsonFileMissing:
        return {}
    except jsonfile.JsonFileError as exc:
        raise McpConfigError(f"{exc}; no project MCP server was started: fix or remove the file") from None
    servers = data.get("mcpServers") if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        raise McpConfigError(f'{path}: expected {{"mcpServers": {{"NAME": {{...}}}}}} at the top level')
    out: dict[str, McpServerSettings] = {}
    for name, raw in servers.items():
        try:
            out[name] = parse_server(name, raw, str(path))
        except McpConfigError as exc:
            if problems is None:
                raise
            problems.append(f"{exc}; that server was skipped (the file's other servers load)")
    return out


def parse_server(name: str, raw: Any, where: str) -> McpServerSettings:
    """Validate one server entry; raise McpConfigError ``"<where>: server 'NAME': field: problem"``."""
    if not _NAME.match(name):
        raise McpConfigError(f"{where}: server name {name!r} must be letters, digits, '_' or '-' (max 64)")
    try:
        settings = McpServerSettings.model_validate(raw)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = ".".join(str(p) for p in first["loc"]) or "(entry)"
        msg = str(first["msg"]).removeprefix("Value error, ")
        raise McpConfigError(f"{where}: server '{name}': {loc}: {msg}") from None
    problem = settings.problem()
    if problem:
        raise McpConfigError(f"{where}: server '{name}': {problem}")
    return settings


def load_servers(
    project_dir: Path, config: McpSettings, settings_files: Sequence[Path]
) -> tuple[dict[str, ServerEntry], list[str]]:
    """Return every configured server by name (the project's ``.mcp.json`` over the user's on a name
    clash) and the readable problems found (a bad ``.mcp.json`` is a problem, not a crash)."""
    problems: list[str] = []
    entries: dict[str, ServerEntry] = {}
    for name, settings in config.servers.items():
        problem = settings.problem() if _NAME.match(name) else "name must be letters, digits, '_' or '-'"
        if problem:
            problems.append(f"runtime_config.json: mcp.servers '{name}': {problem}")
            continue
        entries[name] = ServerEntry(name, settings, "user")
    try:
        project = read_mcp_json(project_dir / MCP_JSON, problems)
    except McpConfigError as exc:
        problems.append(str(exc))
        project = {}
    for name, settings in project.items():
        trusted = project_trust(name, settings_files, project_dir, settings)
        entries[name] = ServerEntry(name, settings, "project", trusted)
    return entries, problems


def remember_trust(project_dir: Path, name: str, settings: McpServerSettings | None = None) -> Path:
    """Remember that the user trusts the project server ``name`` as its entry is now (``settings``):
    its hash goes to the user's trust records (paragents.trust), outside the project; a changed entry
    asks again. Returns the records' path."""
    if settings is None:
        found = read_mcp_json(project_dir / MCP_JSON).get(name)
        if found is None:
            raise McpConfigError(f"{project_dir / MCP_JSON}: no server '{name}' to trust")
        settings = found
    trust.remember_key(project_dir, f"{MCP_JSON}#{name}", _entry(settings))
    return trust.trust_path()
