"""What ``/show-config`` and a reload show: every field with its source, secrets redacted, and what
changed."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from paragents.config.errors import ConfigError
from paragents.config.loader import CONFIG_FILENAME, LoadedConfig
from paragents.config.mcp import McpServerSettings, McpSettings
from paragents.config.runtime import RuntimeConfig


def redact(secret: str | None) -> str:
    """Return a secret shown safely: ``sk-…abcd`` (first 3 and last 4 chars at most), or '(none)'."""
    if not secret:
        return "(none)"
    if len(secret) <= 8:
        return "…" + secret[-2:]
    return f"{secret[:3]}…{secret[-4:]}"


def mcp_server_shown(server: McpServerSettings) -> dict[str, Any]:
    """Return ``server`` as JSON-able data with every ``env`` and ``headers`` value redacted (they
    often hold tokens); ``${VAR}`` references stay as written (they name, not hold, the secret)."""
    data = server.model_dump(mode="json", exclude_defaults=True)
    for key in ("env", "headers"):
        if key in data:
            data[key] = {k: v if str(v).startswith("${") else redact(str(v)) for k, v in data[key].items()}
    return data


def mcp_shown(settings: McpSettings) -> dict[str, Any]:
    """Return the ``mcp`` settings for /show-config, secrets redacted (see :func:`mcp_server_shown`)."""
    return {
        "servers": {name: mcp_server_shown(s) for name, s in settings.servers.items()},
        "context_share": settings.context_share,
    }


def describe_changes(changes: list[tuple[str, str, str]], files: list[Path]) -> str:
    """Return the one-paragraph notice of a reload: which files were read and what changed.

    ``changes`` are ``(field, old, new)`` rows as :meth:`Runtime.reload_config` returns them."""
    read = ", ".join(str(f) for f in files) or f"no {CONFIG_FILENAME} (defaults, environment, command line)"
    if not changes:
        return f"Reloaded {read}: nothing changed."

    def short(value: str) -> str:
        return value if len(value) <= 60 else value[:59] + "…"

    def change(name: str, old: str, new: str) -> str:
        """One field's change; for a table (agents, models, mcp...) which of its entries changed."""
        try:
            before, after = json.loads(old or "{}"), json.loads(new or "{}")
        except ValueError:
            before = after = None
        if isinstance(before, dict) and isinstance(after, dict):
            added = [k for k in after if k not in before]
            removed = [k for k in before if k not in after]
            changed = [k for k in after if k in before and after[k] != before[k]]
            what = [f"+{k}" for k in added] + [f"-{k}" for k in removed] + [f"~{k}" for k in changed]
            if what:
                return f"{name}: {short(' '.join(what))}"
        return f"{name}: {short(old)} → {short(new)}"

    parts = [change(name, old, new) for name, old, new in changes]
    return f"Reloaded {read}: " + "; ".join(parts) + "."


def describe_config(loaded: LoadedConfig, env: Mapping[str, str] | None = None) -> list[tuple[str, str, str]]:
    """Return ``(field, shown value, source)`` rows for ``/show-config``; secrets are redacted."""
    cfg = loaded.config
    rows: list[tuple[str, str, str]] = []
    for name in RuntimeConfig.model_fields:
        value = getattr(cfg, name)
        if name == "api_key":
            try:
                shown = redact(cfg.resolve_api_key(env))
            except ConfigError as exc:
                shown = f"(error: {exc})"
        elif isinstance(value, McpSettings):
            shown = json.dumps(mcp_shown(value))
        elif isinstance(value, BaseModel):
            shown = json.dumps(value.model_dump(mode="json"))
        elif isinstance(value, dict | tuple):
            shown = json.dumps(
                {k: (v.model_dump(mode="json") if isinstance(v, BaseModel) else v) for k, v in value.items()}
                if isinstance(value, dict)
                else [v.model_dump(mode="json") if isinstance(v, BaseModel) else v for v in value]
            )
        elif value is None:
            shown = "(not set)"
        elif isinstance(value, bool):
            shown = "true" if value else "false"
        else:
            shown = str(value)
        rows.append((name, shown, loaded.sources.get(name, "default")))
    return rows
