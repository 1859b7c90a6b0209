"""Runtime configuration: frozen, documented pydantic models and one loader with written precedence.

Precedence, lowest to highest: built-in defaults < user file (``<config dir>/runtime_config.json``)
< project file (``./runtime_config.json``) < environment (``PARAGENTS_BASE_URL``, ``PARAGENTS_MODEL``,
``PARAGENTS_API_KEY`` / ``OPENAI_API_KEY``) < command-line flags. :func:`load_config` returns the
effective config plus, for ``/show-config``, where each value came from.

Errors are raised as :class:`ConfigError` with one readable message naming the file and field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from paragents import jsonfile, paths
from paragents.config.budgets import BudgetSettings, LoopGuardSettings
from paragents.config.errors import ConfigError, UntrustedConfig
from paragents.config.fanout import FanoutSettings
from paragents.config.mcp import McpSettings
from paragents.config.notify import NotifySettings
from paragents.config.runtime import RuntimeConfig
from paragents.config.sandbox import SandboxSettings
from paragents.trust import SETUP_FILES, UntrustedError, require_trusted

CONFIG_FILENAME = "runtime_config.json"


@dataclass
class LoadedConfig:
    """The effective config and where each top-level field came from.

    ``sources`` maps field name to 'default', a file path, 'env:NAME' or 'cli'. ``files`` lists the
    files that were read, lowest precedence first."""

    config: RuntimeConfig
    sources: dict[str, str] = field(default_factory=dict)
    files: list[Path] = field(default_factory=list)


def _format_validation(path: str, err: ValidationError) -> str:
    parts = []
    for e in err.errors():
        loc = ".".join(str(p) for p in e["loc"]) or "(top level)"
        msg = e["msg"].removeprefix("Value error, ")
        if e["type"] == "extra_forbidden":
            nested: dict[Any, type[BaseModel]] = {
                ("sandbox",): SandboxSettings,
                ("notify",): NotifySettings,
                ("budgets",): BudgetSettings,
                ("loop_guard",): LoopGuardSettings,
                ("mcp",): McpSettings,
                ("fanout",): FanoutSettings,
            }
            model = nested.get(tuple(e["loc"][:1]), RuntimeConfig)
            known = ", ".join(sorted(model.model_fields))
            msg = f"unknown key (known keys: {known})"
        parts.append(f"{path}: field '{loc}': {msg}")
    return "\n".join(parts)


def read_config_file(path: Path, tree: Path | None = None) -> dict[str, Any]:
    """Read one config file as a dict, validating it on its own; ``tree``: the file is in that tree a
    session can write (the project): read only as a regular file (paragents.treefiles), so a symbolic
    link to another file never puts that file's values into an error message.

    Raises ConfigError naming the file (and line for JSON syntax errors, field for bad values)."""
    try:
        data = jsonfile.load(path, tree=tree)
    except jsonfile.JsonFileError as exc:
        raise ConfigError(str(exc)) from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: the top level must be a JSON object")
    data.pop("$schema", None)
    data = {k: v for k, v in data.items() if not k.startswith("//")}
    try:
        RuntimeConfig.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(_format_validation(str(path), exc)) from exc
    if "api_key" in data and data["api_key"] and os.name == "posix":
        mode = path.stat().st_mode & 0o777
        if mode & 0o077:
            raise ConfigError(
                f"{path}: holds an api_key but is readable by others (mode {mode:o}); run chmod 600 {path}"
            )
    return data


def config_files(project_dir: Path) -> list[Path]:
    """Return the existing config files to merge, lowest precedence first (user, then project)."""
    found = []
    user = paths.user_runtime_config_path()
    if user.is_file():
        found.append(user)
    project = project_dir / CONFIG_FILENAME
    if (project.is_file() or project.is_symlink()) and project.resolve() != user.resolve():
        found.append(project)  # a link (read_config_file refuses it) is named, never silently skipped
    return found


def load_config(
    project_dir: Path,
    cli: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
    *,
    as_if_trusted: bool = False,
) -> LoadedConfig:
    """Load the effective config for ``project_dir``.

    ``cli`` holds values given on the command line (e.g. ``{"base_url": ..., "model": ...}``; None values
    are ignored). Raises ConfigError with a readable message on any bad file or value, and
    :class:`UntrustedConfig` when the project's files add commands or weaken the sandbox or the
    permissions and the user has not trusted them as they are (``paragents.trust``).
    ``as_if_trusted``: read them as the config will be once trusted, for a dry answer that says so
    (``paragents permissions check``); never to run anything."""
    env = os.environ if env is None else env
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    files = config_files(project_dir)
    read = [
        (path, read_config_file(path, None if path == paths.user_runtime_config_path() else project_dir))
        for path in files
    ]
    if not as_if_trusted:
        require_trusted_files(project_dir, (CONFIG_FILENAME, *SETUP_FILES))
    for path, data in read:
        for key, value in data.items():
            merged[key] = value
            sources[key] = str(path)
    for key, var in (("base_url", "PARAGENTS_BASE_URL"), ("model", "PARAGENTS_MODEL")):
        if env.get(var):
            merged[key] = env[var]
            sources[key] = f"env:{var}"
    for key, value in (cli or {}).items():
        if value is not None:
            merged[key] = value
            sources[key] = "cli"
    try:
        config = RuntimeConfig.model_validate(merged)
    except ValidationError as exc:
        raise ConfigError(_format_validation("effective config", exc)) from exc
    for name in RuntimeConfig.model_fields:
        sources.setdefault(name, "default")
    if config.api_key is None and not config.api_key_env:
        for var in ("PARAGENTS_API_KEY", "OPENAI_API_KEY"):
            if env.get(var):
                sources["api_key"] = f"env:{var}"
                break
    return LoadedConfig(config=config, sources=sources, files=files)


def require_trusted_files(project_dir: Path, only: tuple[str, ...] | None = None) -> None:
    """Raise :class:`UntrustedConfig` when a file of the project that runs commands or allows more
    (``only``: one of these; paragents.trust) is not trusted as it is now: what the project's files
    run or allow is the user's to accept. ``Runtime.create`` checks the permission files with
    ``PERMISSION_FILES`` once the policy has read them (so a broken file is reported as broken)."""
    try:
        require_trusted(project_dir, only)
    except UntrustedError as exc:
        raise UntrustedConfig(exc) from None


def has_config(project_dir: Path) -> bool:
    """Return True when a user or project runtime config file exists (else first-run setup is needed)."""
    return bool(config_files(project_dir))


def save_user_config(data: Mapping[str, Any], path: Path | None = None) -> Path:
    """Validate ``data`` and write it as the user runtime config with mode 0600; return the path.

    Raises ConfigError when ``data`` is not a valid config."""
    target = path or paths.user_runtime_config_path()
    clean = {k: v for k, v in data.items() if v not in (None, "", {}, [])}
    try:
        RuntimeConfig.model_validate(clean)
    except ValidationError as exc:
        raise ConfigError(_format_validation(str(target), exc)) from exc
    paths.ensure_dir(target.parent)
    tmp = target.with_suffix(".json.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        json.dump(clean, fh, indent=2)
        fh.write("\n")
    os.chmod(tmp, 0o600)
    os.replace(tmp, target)
    return target
