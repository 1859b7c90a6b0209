"""Project trust: a project's files that add commands or weaken the sandbox and the permissions are
untrusted until the user accepts them (Claude Code's "Do you trust the files in this folder?", Codex's
``trust_level = "trusted"`` projects).

What needs trust (the *posture* of a project, :func:`project_posture`), per file:

- ``runtime_config.json`` (the project's): ``base_url`` (where requests and the API key go),
  ``mcp.servers`` and ``agents`` (programs started), ``notify.command`` /
  ``notify.webhook``, ``lanes.verify`` (commands run), ``lanes.backend``/``image``/``container``/
  ``kubernetes`` (where lanes run, in what image), and a ``sandbox`` that weakens it (mode off,
  network all, writable paths, ``autoAllow``, another ``bwrap`` program);
- ``permissions.json`` and ``.paragents/permissions.local.json``: allow rules, a ``defaultMode`` of
  acceptEdits or bypassPermissions, ``additionalDirectories``, ``enableAllProjectMcpServers`` /
  ``enabledMcpjsonServers``;
- lane setup files (``.paragents/worktree.toml``, ``conductor.json``,
  ``.codex/environments/environment.toml``, ``.cursor/worktrees.json``): the commands they run.

Only that part of each file is hashed (sha256 of its canonical JSON): a change elsewhere (the model,
a deny rule) needs no new answer, a change of what runs or is allowed does. The answers are kept in the
user's state directory (``trusted-projects.json``, mode 0600, outside every project and hidden from
the sandbox), by project directory and file. paragents itself records the files it writes (an "always"
answer) with :func:`record_written`. ``.mcp.json`` servers are asked one by one when a session first
needs one (``paragents.mcp.project``) and remembered here too, by the hash of their entry.

Nothing here imports anything of paragents but :mod:`paragents.paths`."""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paragents import paths

TRUST_FILE = "trusted-projects.json"
SETUP_FILES = (
    ".paragents/worktree.toml",
    "conductor.json",
    ".codex/environments/environment.toml",
    ".cursor/worktrees.json",
)
PERMISSION_FILES = ("permissions.json", ".paragents/permissions.local.json")
CONFIG_FILE = "runtime_config.json"
_SETUP_KEYS = frozenset(
    {"setup", "install", "cleanup", "archive", "scripts", "script", "setup-worktree", "setup-worktree-unix"}
)
TRUST_HINT = (
    "run `paragents trust{where}` after reviewing them, or start `paragents` in a terminal to be asked"
)


class UntrustedError(Exception):
    """A project's posture files are not trusted: ``str(err)`` names each file, what it runs or
    changes, and the command that trusts them; ``items`` are the untrusted files."""

    def __init__(self, project_dir: Path, items: list[PostureItem]) -> None:
        self.project_dir = project_dir
        self.items = items
        super().__init__(untrusted_message(project_dir, items))


@dataclass(frozen=True)
class PostureItem:
    """What one file of a project would make paragents run or allow: ``rel`` its path in the project,
    ``fields`` one ``(name, value shown)`` pair per setting, ``digest`` the hash of that part."""

    rel: str
    fields: tuple[tuple[str, str], ...]
    digest: str


def _digest(part: Any) -> str:
    return hashlib.sha256(json.dumps(part, sort_keys=True, ensure_ascii=False).encode()).hexdigest()


SECRET_KEYS = frozenset({"env", "headers", "api_key", "token", "password"})
"""Keys whose values are shown redacted (``${VAR}`` references stay: they name, not hold, a secret);
the hash covers the values as written."""


def _redacted(value: Any) -> Any:
    if isinstance(value, dict):
        return {
            k: (
                {n: v if str(v).startswith("${") else "<redacted>" for n, v in item.items()}
                if k in SECRET_KEYS and isinstance(item, dict)
                else "<redacted>"
                if k in SECRET_KEYS and item
                else _redacted(item)
            )
            for k, item in value.items()
        }
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def _shown(value: Any) -> str:
    value = _redacted(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 300 else text[:299] + "…"


def _read(path: Path) -> Any:
    """The file's data (JSON or TOML), its text when it is neither, None when absent."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError):
        return text  # the loaders say what is wrong; trust covers the text as written


def config_posture(data: Any) -> dict[str, Any]:
    """The settings of a project ``runtime_config.json`` that need trust (see the module docstring)."""
    if not isinstance(data, dict):
        return {"(unreadable)": data} if data is not None else {}
    out: dict[str, Any] = {}
    for key in ("base_url", "agents"):
        if data.get(key):
            out[key] = data[key]
    mcp = data.get("mcp")
    if isinstance(mcp, dict) and mcp.get("servers"):
        for name, server in dict(mcp["servers"]).items():
            out[f"mcp.servers.{name}"] = server  # all of it (command, args, env, url, headers)
    notify = data.get("notify")
    if isinstance(notify, dict):
        for key in ("command", "webhook"):
            if notify.get(key):
                out[f"notify.{key}"] = notify[key]
    lanes = data.get("lanes")
    if isinstance(lanes, dict):
        if lanes.get("verify"):
            out["lanes.verify"] = lanes["verify"]
        if lanes.get("backend") not in (None, "local"):  # where lanes run, in what image, as whom
            out["lanes.backend"] = lanes["backend"]
        for key in ("image", "container", "kubernetes"):
            if lanes.get(key):
                out[f"lanes.{key}"] = lanes[key]
    sandbox = data.get("sandbox")
    if isinstance(sandbox, str):
        sandbox = {"mode": sandbox}
    if isinstance(sandbox, dict):
        weak = {
            "mode": sandbox.get("mode") == "off",
            "network": sandbox.get("network") == "all",
            "writable": bool(sandbox.get("writable")),
            "autoAllow": bool(sandbox.get("autoAllow", sandbox.get("auto_allow"))),
            "bwrap": sandbox.get("bwrap") not in (None, "bwrap"),
            "homeVisible": bool(sandbox.get("homeVisible", sandbox.get("home_visible"))),
        }
        for key, is_weak in weak.items():
            if is_weak:
                alias = "home_visible" if key == "homeVisible" else "auto_allow"
                value = sandbox.get(key, sandbox.get(alias))
                out[f"sandbox.{key}"] = value
    return out


def permissions_posture(data: Any) -> dict[str, Any]:
    """The settings of a project permission file that need trust (see the module docstring)."""
    if not isinstance(data, dict):
        return {"(unreadable)": data} if data is not None else {}
    out: dict[str, Any] = {}
    block = data.get("permissions")
    if isinstance(block, dict):
        if block.get("allow"):
            out["permissions.allow"] = block["allow"]
        if block.get("defaultMode") in ("acceptEdits", "bypassPermissions"):
            out["permissions.defaultMode"] = block["defaultMode"]
        if block.get("additionalDirectories"):
            out["permissions.additionalDirectories"] = block["additionalDirectories"]
    for key in ("enableAllProjectMcpServers", "enabledMcpjsonServers"):
        if data.get(key):
            out[key] = data[key]
    return out


def setup_posture(data: Any) -> dict[str, Any]:
    """The commands a lane setup file runs (every setup/install/cleanup/script value, by key path)."""
    out: dict[str, Any] = {}

    def walk(value: Any, where: str) -> None:
        if isinstance(value, dict):
            for key, item in value.items():
                name = f"{where}.{key}" if where else str(key)
                if key in _SETUP_KEYS:
                    out[name] = item
                elif isinstance(item, dict):
                    walk(item, name)

    if isinstance(data, dict):
        walk(data, "")
    elif data is not None:
        out["(unreadable)"] = data
    return out


def file_posture(project_dir: Path, rel: str, path: Path | None = None) -> PostureItem | None:
    """The posture of one file of the project (None when absent or when it sets nothing that needs
    trust); ``path``: read that copy of it instead (a lane's checkout of the file)."""
    data = _read(path if path is not None else project_dir / rel)
    if data is None:
        return None
    if rel == CONFIG_FILE:
        part = config_posture(data)
    elif rel in PERMISSION_FILES:
        part = permissions_posture(data)
    else:
        part = setup_posture(data)
    if not part:
        return None
    fields = tuple((name, _shown(value)) for name, value in part.items())
    return PostureItem(rel, fields, _digest(part))


def project_posture(project_dir: Path) -> list[PostureItem]:
    """Every file of the project that sets something needing trust (absent files are skipped). The
    project's ``runtime_config.json`` is skipped when it is the user's own file."""
    root = Path(os.path.realpath(project_dir))
    items = []
    for rel in (CONFIG_FILE, *PERMISSION_FILES, *SETUP_FILES):
        if rel == CONFIG_FILE and _is_user_file(root / rel):
            continue
        item = file_posture(root, rel)
        if item is not None:
            items.append(item)
    return items


def _is_user_file(path: Path) -> bool:
    with contextlib.suppress(OSError):
        return path.resolve() == paths.user_runtime_config_path().resolve()
    return False


# ---- the records ------------------------------------------------------------------------------------
def trust_path() -> Path:
    """The user's trust records (``trusted-projects.json`` in the state directory)."""
    return paths.state_dir() / TRUST_FILE


def _load() -> dict[str, dict[str, str]]:
    try:
        data = json.loads(trust_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _save(data: dict[str, dict[str, str]]) -> None:
    path = trust_path()
    paths.ensure_dir(path.parent)
    tmp = path.with_name(f".{TRUST_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump(data, out, indent=2, sort_keys=True)
        out.write("\n")
    os.replace(tmp, path)


def _key(project_dir: Path) -> str:
    return os.path.realpath(project_dir)


def is_trusted(project_dir: Path, item: PostureItem) -> bool:
    """True when the user accepted exactly this posture of ``item``'s file."""
    return _load().get(_key(project_dir), {}).get(item.rel) == item.digest


def untrusted(project_dir: Path, only: tuple[str, ...] | None = None) -> list[PostureItem]:
    """The project's posture files not trusted as they are now (``only``: just these files)."""
    records = _load().get(_key(project_dir), {})
    return [
        item
        for item in project_posture(project_dir)
        if (only is None or item.rel in only) and records.get(item.rel) != item.digest
    ]


def require_trusted(project_dir: Path, only: tuple[str, ...] | None = None) -> None:
    """Raise :class:`UntrustedError` when some posture file of the project (``only``: one of these) is
    not trusted as it is now; the error names every untrusted file of the project, so one answer
    covers them all."""
    items = untrusted(project_dir)
    if any(only is None or item.rel in only for item in items):
        raise UntrustedError(Path(os.path.realpath(project_dir)), items)


def require_copy_trusted(project_dir: Path, rel: str, path: Path) -> None:
    """Raise :class:`UntrustedError` unless the copy of ``rel`` at ``path`` (a lane's) sets nothing that
    needs trust or sets exactly what the user trusted in ``project_dir``'s ``rel``."""
    item = file_posture(project_dir, rel, path)
    if item is not None and _load().get(_key(project_dir), {}).get(rel) != item.digest:
        raise UntrustedError(Path(os.path.realpath(project_dir)), [item])


def trust(project_dir: Path, items: list[PostureItem]) -> Path:
    """Record ``items`` as trusted for ``project_dir``; return the records' path."""
    data = _load()
    records = data.setdefault(_key(project_dir), {})
    for item in items:
        records[item.rel] = item.digest
    _save(data)
    return trust_path()


def record_written(project_dir: Path, rel: str) -> None:
    """paragents itself wrote ``rel`` (an "always" answer, a trusted MCP server): its posture as it is
    now is the user's own and is recorded as trusted."""
    item = file_posture(Path(os.path.realpath(project_dir)), rel)
    data = _load()
    records = data.setdefault(_key(project_dir), {})
    if item is None:
        records.pop(rel, None)
    else:
        records[rel] = item.digest
    _save(data)


def trust_key(project_dir: Path, rel: str) -> str | None:
    """The recorded digest of ``rel`` in ``project_dir`` (for entries recorded by name, e.g.
    ``.mcp.json#server``), or None."""
    return _load().get(_key(project_dir), {}).get(rel)


def remember_key(project_dir: Path, rel: str, part: Any) -> None:
    """Record the hash of ``part`` as trusted under ``rel`` (an ``.mcp.json`` server's entry)."""
    data = _load()
    data.setdefault(_key(project_dir), {})[rel] = _digest(part)
    _save(data)


def digest_of(part: Any) -> str:
    """The hash :func:`remember_key` records for ``part``."""
    return _digest(part)


# ---- what the user is told ---------------------------------------------------------------------------
def describe(items: list[PostureItem]) -> str:
    """The untrusted files and what each runs or changes, one setting per line."""
    lines = []
    for item in items:
        lines.append(f"  {item.rel}:")
        lines.extend(f"    {name}: {value}" for name, value in item.fields)
    return "\n".join(lines)


def untrusted_message(project_dir: Path, items: list[PostureItem]) -> str:
    """The refusal naming the files, their settings and the command that trusts them."""
    where = "" if Path.cwd().resolve() == project_dir else f" --dir {shlex.quote(str(project_dir))}"
    return (
        f"the project {project_dir} has files that make paragents run commands or allow more, and they "
        f"are not trusted yet (new, or changed since you trusted them):\n{describe(items)}\n"
        + TRUST_HINT.format(where=where)
    )
