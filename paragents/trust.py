"""Project trust: a project's files that add commands or weaken the sandbox and the permissions are
untrusted until the user accepts them (Claude Code's "Do you trust the files in this folder?", Codex's
``trust_level = "trusted"`` projects).

What needs trust (the *posture* of a project, :func:`project_posture`), per file:

- ``runtime_config.json`` (the project's): every setting but the few that cannot change posture
  (:data:`SAFE_CONFIG_KEYS`: the model, limits and timeouts, display options, the loop guard ...).
  An allow-list, not a list of dangerous keys: ``sandbox.envAllow``, ``lanes.verify_network``,
  ``api_key_env``, ``extra_headers``, ``profiles``, ``lanes.mode`` and any key added later are gated;
- ``permissions.json``, ``.paragents/permissions.local.json`` and Claude Code's project files
  ``.claude/settings.json`` and ``.claude/settings.local.json`` (read as permission scopes of their
  own): allow rules, a ``defaultMode`` of acceptEdits, auto or bypassPermissions,
  ``additionalDirectories``, ``enableAllProjectMcpServers`` / ``enabledMcpjsonServers``;
- lane setup files (``.paragents/worktree.toml``, ``conductor.json``,
  ``.codex/environments/environment.toml``, ``.cursor/worktrees.json``): the commands they run.

Only that part of each file is hashed (sha256 of its canonical JSON): a change elsewhere (the model,
a deny rule) needs no new answer, a change of what runs or is allowed does. The answers are kept in the
user's state directory (``trusted-projects.json``, mode 0600, outside every project and hidden from
the sandbox), by project directory and file, each record signed with an HMAC whose key
(``trust.key``, 0600) sits beside it: a process that can write the records but not read the key (a
file tool, which is denied paragents' state; a sandboxed command, which does not see it) cannot forge
one, since the hash alone is easy to compute. paragents itself records the files it writes (an
"always" answer) with :func:`record_written`. ``.mcp.json`` servers are asked one by one when a
session first needs one (``paragents.mcp.project``) and remembered here too, by the hash of their entry.

Nothing here imports anything of paragents but :mod:`paragents.paths` and :mod:`paragents.treefiles`."""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import secrets
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import json5

from paragents import paths, treefiles

TRUST_FILE = "trusted-projects.json"
SETUP_FILES = (
    ".paragents/worktree.toml",
    "conductor.json",
    ".codex/environments/environment.toml",
    ".cursor/worktrees.json",
)
CLAUDE_FILES = (".claude/settings.json", ".claude/settings.local.json")
PERMISSION_FILES = ("permissions.json", ".paragents/permissions.local.json", *CLAUDE_FILES)
KEY_FILE = "trust.key"
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


def _shown(value: Any, name: str = "") -> str:
    parts = name.split(".")
    if value and (parts[0] in ("extra_headers", "api_key") or parts[-1] in SECRET_KEYS):
        value = "<redacted>" if not isinstance(value, dict) else _redacted({parts[-1]: value})[parts[-1]]
    value = _redacted(value)
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 300 else text[:299] + "…"


def _read(path: Path, rel: str) -> Any:
    """The file's data (JSON or TOML), its text when it is neither, None when absent. Read only as a
    regular file of its tree (paragents.treefiles): anything else (a symbolic link a command left, to
    ``.env`` or ``~/.ssh/id_rsa``; a FIFO) is never read, shown nor trusted through; it reads as a
    one-line note that needs trust (the loaders refuse the file too)."""
    tree = Path(str(path)[: -len(rel)]) if str(path).endswith("/" + rel) else None
    try:
        text = treefiles.read_text(path, root=tree)
    except treefiles.NotRegularFile as exc:
        return f"(not read: {exc.strerror})"
    except (OSError, UnicodeDecodeError):
        return None
    try:
        return tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
    except (ValueError, tomllib.TOMLDecodeError):
        pass
    if path.parent.name == ".claude":  # Claude Code's files may be JSON5 (comments, trailing commas)
        with contextlib.suppress(ValueError):
            return json5.loads(text)
    return text  # the loaders say what is wrong; trust covers the text as written


SAFE_CONFIG_KEYS = frozenset(
    {
        "$schema", "model", "max_parallel_turns", "max_tool_rounds", "connect_timeout", "read_timeout",
        "max_retries", "max_retry_wait", "command_timeout", "max_output_chars", "default_context_window",
        "compact_threshold", "tools", "ascii_glyphs", "loop_guard", "fanout", "resources",
        "notify.enabled", "notify.method", "notify.escalate_after", "mcp.context_share",
    }
)  # fmt: skip
"""The settings of a project ``runtime_config.json`` that cannot change paragents' posture, so they
need no trust: the model, limits and timeouts, display options, the loop guard, fan-out sizes, shared
resources for conflict checks, when and how notifications show, a model's context window and whether
it gets tools (:data:`SAFE_MODEL_KEYS`). Every other key (the endpoint and its
key and headers, MCP servers, agents, profiles, the sandbox, lanes, budgets, model prices, notify
commands, and any key added later) is untrusted until the user accepts it. A group is replaced whole
by the project's (the project's ``sandbox`` drops the user's ``sandbox.hidden``), so a group is safe
only when every one of its keys is."""
SAFE_MODEL_KEYS = frozenset({"context_window", "tools"})
"""The keys of a ``models.NAME`` entry that need no trust (its prices do: a price of 0 turns the
user's cost budget off)."""
_NAMED_GROUPS = frozenset({"agents", "profiles", "models", "mcp.servers"})
"""Groups keyed by a name the user chose: shown one entry per name."""


def config_posture(data: Any) -> dict[str, Any]:
    """The settings of a project ``runtime_config.json`` that need trust: every key not on
    :data:`SAFE_CONFIG_KEYS`, one entry per setting (``sandbox.envAllow``, ``mcp.servers.NAME``)."""
    if not isinstance(data, dict):
        return {"(unreadable)": data} if data is not None else {}
    out: dict[str, Any] = {}
    shorthand = {"sandbox": "mode", "lanes": "mode", "notify": "enabled"}

    def walk(value: Any, where: str) -> None:
        if where in SAFE_CONFIG_KEYS:
            return
        if isinstance(value, dict) and value and where.count(".") < 1 and where not in _NAMED_GROUPS:
            for key, item in value.items():
                walk(item, f"{where}.{key}")
        elif isinstance(value, dict) and where in _NAMED_GROUPS:
            for key, item in value.items():
                if where == "models" and isinstance(item, dict):
                    item = {k: v for k, v in item.items() if k not in SAFE_MODEL_KEYS}
                    if not item:
                        continue
                out[f"{where}.{key}"] = item  # all of it (command, args, env, url, headers)
        else:
            out[where] = value

    for key, value in data.items():
        if str(key).startswith("//"):
            continue
        if key in shorthand and not isinstance(value, dict):
            value = {shorthand[key]: value}
        walk(value, str(key))
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
        if block.get("defaultMode") in ("acceptEdits", "bypassPermissions", "auto"):
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
    data = _read(path if path is not None else project_dir / rel, rel)
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
    fields = tuple((name, _shown(value, name)) for name, value in part.items())
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


def key_path() -> Path:
    """The key the records are signed with (``trust.key`` in the state directory, 0600)."""
    return paths.state_dir() / KEY_FILE


_SECRETS: dict[str, bytes] = {}


def _secret() -> bytes:
    """The signing key, made on first use (0600; never shown, never in a sandbox)."""
    path = key_path()
    known = _SECRETS.get(str(path))
    if known is not None and path.exists():
        return known
    try:
        _SECRETS[str(path)] = bytes.fromhex(path.read_text(encoding="ascii").strip())
        return _SECRETS[str(path)]
    except (OSError, ValueError):
        pass
    paths.ensure_dir(path.parent)
    tmp = path.with_name(f".{KEY_FILE}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="ascii") as out:
        out.write(secrets.token_hex(32) + "\n")
    with contextlib.suppress(FileExistsError):
        os.link(tmp, path)  # another process may have made it first: theirs wins
    tmp.unlink(missing_ok=True)
    _SECRETS[str(path)] = bytes.fromhex(path.read_text(encoding="ascii").strip())
    return _SECRETS[str(path)]


def _mac(project: str, rel: str, digest: str) -> str:
    message = "\0".join((project, rel, digest)).encode("utf-8", "surrogateescape")
    return hmac.new(_secret(), message, hashlib.sha256).hexdigest()


def _load() -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(trust_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _records(project: str) -> dict[str, str]:
    """The project's records whose signature holds: ``rel`` -> digest (a record someone wrote without
    the key, or one of an older paragents, counts as absent)."""
    entries = _load().get(project)
    if not isinstance(entries, dict):
        return {}
    out: dict[str, str] = {}
    for rel, entry in entries.items():
        if not isinstance(entry, dict):
            continue
        digest, mac = entry.get("digest"), entry.get("mac")
        if (
            isinstance(digest, str)
            and isinstance(mac, str)
            and hmac.compare_digest(mac, _mac(project, rel, digest))
        ):
            out[rel] = digest
    return out


def _record(data: dict[str, dict[str, Any]], project: str, rel: str, digest: str) -> None:
    data.setdefault(project, {})[rel] = {"digest": digest, "mac": _mac(project, rel, digest)}


def _save(data: dict[str, dict[str, Any]]) -> None:
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
    return _records(_key(project_dir)).get(item.rel) == item.digest


def untrusted(project_dir: Path, only: tuple[str, ...] | None = None) -> list[PostureItem]:
    """The project's posture files not trusted as they are now (``only``: just these files)."""
    records = _records(_key(project_dir))
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
    if item is not None and _records(_key(project_dir)).get(rel) != item.digest:
        raise UntrustedError(Path(os.path.realpath(project_dir)), [item])


def trust(project_dir: Path, items: list[PostureItem]) -> Path:
    """Record ``items`` as trusted for ``project_dir``; return the records' path."""
    data = _load()
    for item in items:
        _record(data, _key(project_dir), item.rel, item.digest)
    _save(data)
    return trust_path()


def record_written(project_dir: Path, rel: str) -> None:
    """paragents itself wrote ``rel`` (an "always" answer, a trusted MCP server): its posture as it is
    now is the user's own and is recorded as trusted."""
    item = file_posture(Path(os.path.realpath(project_dir)), rel)
    data = _load()
    if item is None:
        data.setdefault(_key(project_dir), {}).pop(rel, None)
    else:
        _record(data, _key(project_dir), rel, item.digest)
    _save(data)


def trust_key(project_dir: Path, rel: str) -> str | None:
    """The recorded digest of ``rel`` in ``project_dir`` (for entries recorded by name, e.g.
    ``.mcp.json#server``), or None."""
    return _records(_key(project_dir)).get(rel)


def remember_key(project_dir: Path, rel: str, part: Any) -> None:
    """Record the hash of ``part`` as trusted under ``rel`` (an ``.mcp.json`` server's entry)."""
    data = _load()
    _record(data, _key(project_dir), rel, _digest(part))
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
