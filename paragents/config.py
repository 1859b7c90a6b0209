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
from typing import Any, Literal
from urllib.parse import urlparse

from pydantic import (
    AliasChoices,
    BaseModel,
    ConfigDict,
    Field,
    SecretStr,
    ValidationError,
    field_validator,
)

from paragents import paths
from paragents.backend_settings import BackendName, ContainerSettings, KubernetesSettings
from paragents.limits import Budget
from paragents.trust import SETUP_FILES, UntrustedError, require_trusted

CONFIG_FILENAME = "runtime_config.json"


class ConfigError(Exception):
    """A config file or value is invalid. ``str(err)`` is one readable message naming file and field."""


class UntrustedConfig(ConfigError):
    """The project's files that add commands or weaken the sandbox and permissions are not trusted
    (``paragents.trust``); ``items`` are those files, ``str(err)`` names them and ``paragents trust``."""

    def __init__(self, error: UntrustedError) -> None:
        super().__init__(str(error))
        self.project_dir = error.project_dir
        self.items = error.items


class MissingKeyError(ConfigError):
    """``api_key_env`` names an environment variable that is not set (the TUI opens /setup for it)."""


class ModelSettings(BaseModel):
    """Per-model settings, keyed by model name in ``RuntimeConfig.models``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    context_window: int = Field(8192, gt=0, description="Context window of the model, in tokens.")
    tools: bool = Field(
        True,
        description="Send the tool specs to this model. Set false for models or servers that cannot do "
        "tool calling (the session then chats without tools).",
    )
    input_price_per_mtok: float | None = Field(
        None, ge=0, description="Price in USD per million prompt tokens, for cost display (optional)."
    )
    output_price_per_mtok: float | None = Field(
        None, ge=0, description="Price in USD per million completion tokens, for cost display (optional)."
    )
    cached_price_per_mtok: float | None = Field(
        None,
        ge=0,
        description="Price in USD per million prompt tokens read from the server's cache (default: the "
        "input price).",
    )


class SharedResource(BaseModel):
    """A named resource that sessions' commands share (e.g. ``port:8000``); two sessions running
    commands that use the same resource at once conflict."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Resource name shown to the user, e.g. 'port:8000' or 'uv.lock'.")
    commands: tuple[str, ...] = Field(
        description="Bash rule patterns (as in Bash(...) rules, '*' wildcards) of commands that use it."
    )


class AgentCommand(BaseModel):
    """An external ACP agent (``agents.NAME``): how to launch it on stdio (docs/acp.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str = Field(description="The program: a name looked up in PATH, or a path.")
    args: tuple[str, ...] = Field((), description="Its arguments, e.g. ['--acp'].")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment for it.")
    cwd: str | None = Field(None, description="Its working directory (default: the session's).")
    install: str | None = Field(None, description="How to install it, shown when the program is missing.")
    init_timeout: float = Field(60.0, gt=0, description="Seconds it gets to answer initialize.")


class SandboxSettings(BaseModel):
    """How ``run_command`` is confined (docs/sandbox.md). A bare string (``"sandbox": "off"``) sets
    only ``mode``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["off", "auto", "required"] = Field(
        "auto",
        description="off: never confine; auto: use bubblewrap when it works, else warn once and run "
        "unconfined; required: refuse to run commands without it.",
    )
    network: Literal["none", "all"] = Field(
        "none", description="none: no network at all (not even the host's loopback); all: the host's."
    )
    writable: tuple[str, ...] = Field(
        (),
        description="More writable paths besides the working directory (e.g. '../shared-fixtures'). "
        "Commands already get their own caches (UV_CACHE_DIR, npm_config_cache...); do not list a host "
        "cache such as ~/.cache/uv: uv hard-links cache files into virtualenvs.",
    )
    hidden: tuple[str, ...] = Field(
        (),
        description="More paths sandboxed commands never see (~ expanded), besides paragents' own "
        "files, the usual credential places (~/.ssh, ~/.aws, ...) and the host's sockets.",
    )
    env_allow: tuple[str, ...] = Field(
        (),
        validation_alias=AliasChoices("env_allow", "envAllow"),
        description="More variables of your environment that commands get (names or globs such as "
        "'MYAPP_*'), besides the harmless ones (PATH, HOME, LANG, LC_*, ...). A name listed here is "
        "passed even when it looks like a secret.",
    )
    auto_allow: bool = Field(
        False,
        validation_alias=AliasChoices("auto_allow", "autoAllow"),
        description="Sandboxed commands that would ask only because they are commands run without "
        "asking (deny and ask rules, protected paths and writes outside the working directories still "
        "apply).",
    )
    bwrap: str = Field("bwrap", description="The bubblewrap program: a name looked up in PATH, or a path.")


class LaneSettings(BaseModel):
    """Lanes: a git worktree per session (docs/lanes.md). A bare string (``"lanes": "auto"``) sets
    only ``mode``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    mode: Literal["off", "ask", "auto"] = Field(
        "off",
        description="off: sessions share the checkout unless /new --lane; ask: offer a lane for a new "
        "session; auto: a new session gets a lane when another session already writes in the repository.",
    )
    verify: str | None = Field(
        None,
        description="Command a lane must pass before a merge (e.g. 'uv run pytest -q'); run in the lane.",
    )
    setup_timeout: float = Field(
        600.0,
        gt=0,
        description="Seconds a lane's setup script may run before it is stopped and the lane removed.",
    )
    verify_network: Literal["none", "all"] = Field(
        "none",
        description="Network of the commands paragents itself runs in a lane's tree (lanes.verify, "
        "fan-out --verify, the lane's setup and install commands, its environment build), which run in "
        "the same sandbox as a session's commands: none (own empty network namespace) or all.",
    )
    # issue 31: where a lane runs (paragents/backend_settings.py, docs/remote.md)
    backend: BackendName = Field(
        "local",
        description="Where a lane's commands and files live: local (a worktree + bubblewrap), container "
        "(Docker Engine API) or kubernetes (a Pod per lane).",
    )
    image: str | None = Field(
        None,
        description="Image of container/kubernetes lanes; null: the project's devcontainer.json.",
    )
    container: ContainerSettings = Field(
        default_factory=ContainerSettings, description="The container backend (docs/remote.md)."
    )
    kubernetes: KubernetesSettings = Field(
        default_factory=KubernetesSettings, description="The kubernetes backend (docs/remote.md)."
    )


class FanoutSettings(BaseModel):
    """Fan-out: one prompt to several sibling sessions, each in its own lane (docs/fanout.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    max: int = Field(8, ge=1, le=64, description="Most sibling sessions one /fanout may open.")
    verify_timeout: float = Field(
        600.0, gt=0, description="Seconds a candidate's verify command may run before it is stopped."
    )
    judge_model: str | None = Field(None, description="Model of the judge request (default: the model).")


class BudgetSettings(BaseModel):
    """Default budgets (docs in README "Budgets"): each a string like ``"2.00usd"``, ``"500k"``,
    ``"30m"`` or several (``"2usd, 500k"``), or null for no cap. ``/budget`` changes them at run time."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    session: Budget | None = Field(None, description="Cap per session (its whole usage), e.g. '2.00usd'.")
    project_day: Budget | None = Field(
        None, description="Cap per project per local day, summed over every session and process."
    )
    group: Budget | None = Field(None, description="Cap per fan-out group (all its sibling sessions).")


class LoopGuardSettings(BaseModel):
    """The loop guard: pauses a session whose model repeats itself (README "Loop guard")."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    identical_calls: int = Field(
        3,
        ge=0,
        description="Pause at this many identical tool calls in a row (same tool and arguments; 0 off).",
    )
    idle_requests: int = Field(
        6,
        ge=0,
        description="Pause at this many requests in a row whose tool results were all seen before and that "
        "changed no file (0 off).",
    )


class NotifySettings(BaseModel):
    """Notifications when a background session needs you or ends (README "Notifications").
    ``"notify": true`` is short for ``{"enabled": true}``."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    enabled: bool = Field(False, description="Send terminal notifications (and a BEL) at all.")
    method: Literal["auto", "osc9", "osc777", "osc99", "bel", "off"] = Field(
        "auto",
        description="Escape sequence: auto (from the terminal), osc9, osc777, osc99 (kitty), bel, off.",
    )
    webhook: str | None = Field(
        None, description="URL receiving one JSON POST per notification (Slack, Discord and ntfy accept it)."
    )
    command: tuple[str, ...] = Field(
        (), description="Program run per notification, argv without a shell; the text is the last argument."
    )
    escalate_after: float = Field(
        300.0, ge=0, description="Seconds after which one reminder is sent while still blocked (0: never)."
    )


class McpServerSettings(BaseModel):
    """One MCP server (docs/mcp.md): Claude Code's ``.mcp.json`` entry shape (``command``/``args``/``env``
    for stdio, ``type: "http"``/``url``/``headers`` for Streamable HTTP) plus paragents' own keys.
    ``${VAR}`` (and ``${VAR:-default}``) in command, args, env, url and headers expand from the
    environment when the server starts; the values are never written back or shown."""

    model_config = ConfigDict(frozen=True, extra="forbid", populate_by_name=True)

    type: Literal["stdio", "http", "streamable-http", "sse"] | None = Field(
        None, description="Transport: stdio (default when 'command' is set) or http (Streamable HTTP)."
    )
    command: str | None = Field(None, description="Program of a stdio server (looked up in PATH).")
    args: tuple[str, ...] = Field((), description="Arguments of the stdio server's program.")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment of a stdio server.")
    cwd: str | None = Field(None, description="Working directory of a stdio server (default: the project).")
    url: str | None = Field(None, description="URL of a Streamable HTTP server.")
    headers: dict[str, str] = Field(default_factory=dict, description="HTTP headers (e.g. Authorization).")
    enabled: bool = Field(True, description="false: configured but not started and no tools offered.")
    enabled_tools: tuple[str, ...] | None = Field(
        None,
        validation_alias=AliasChoices("enabledTools", "enabled_tools"),
        description="Globs of the tool names offered (default: all).",
    )
    disabled_tools: tuple[str, ...] = Field(
        (),
        validation_alias=AliasChoices("disabledTools", "disabled_tools"),
        description="Globs of tool names never offered (removed from the request's tools).",
    )
    startup_timeout: float = Field(
        30.0,
        gt=0,
        validation_alias=AliasChoices("startupTimeout", "startup_timeout"),
        description="Seconds the server has to start and answer initialize and tools/list.",
    )
    tool_timeout: float = Field(
        120.0,
        gt=0,
        validation_alias=AliasChoices("toolTimeout", "tool_timeout"),
        description="Seconds one tool call may take before it is a tool error.",
    )
    max_output_tokens: int | None = Field(
        None,
        gt=0,
        validation_alias=AliasChoices("maxOutputTokens", "max_output_tokens"),
        description="Cap on one result sent to the model, in tokens (~4 chars); default max_output_chars.",
    )
    scope: Literal["shared", "session"] = Field(
        "shared", description="shared: one process for every session of the project; session: one each."
    )
    concurrent: bool = Field(
        False, description="true: the server takes calls in parallel; false: calls to it are serialised."
    )
    idle_timeout: float = Field(
        600.0,
        ge=0,
        validation_alias=AliasChoices("idleTimeout", "idle_timeout"),
        description="Seconds without a call after which the server is stopped (0: never); it restarts "
        "on the next call.",
    )

    @field_validator("url")
    @classmethod
    def _check_url(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://", "${")):
            raise ValueError("must be an http(s) URL such as http://127.0.0.1:8000/mcp")
        return value

    @property
    def transport(self) -> Literal["stdio", "http", "sse"]:
        """stdio, http (Streamable HTTP) or sse (legacy), from ``type`` or the keys present."""
        if self.type in ("http", "streamable-http"):
            return "http"
        if self.type == "sse":
            return "sse"
        if self.type is None and self.command is None and self.url is not None:
            return "http"
        return "stdio"

    def problem(self) -> str | None:
        """Why this entry cannot start as written (no command for stdio, no url for http), or None."""
        if self.transport == "stdio" and not self.command:
            return "a stdio server needs a 'command' (or set type 'http' and a 'url')"
        if self.transport != "stdio" and not self.url:
            return f"a {self.transport} server needs a 'url'"
        return None


class McpSettings(BaseModel):
    """User-level MCP servers and the pool's settings (docs/mcp.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    servers: dict[str, McpServerSettings] = Field(
        default_factory=dict, description="User-level servers by name (a project .mcp.json adds more)."
    )
    context_share: float = Field(
        0.1,
        gt=0,
        le=1,
        description="/mcp offers to disable the unused tools of a server whose schemas cost more than "
        "this share of the context window.",
    )


class SessionProfile(BaseModel):
    """A session profile (``profiles`` in the config; wt/fanteam): the built-in specialists of
    ``/review`` (security, test, perf, devops, arch, docs, code, review) and any the user adds. A
    field written in the config replaces the built-in one; the others keep the built-in values."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    description: str = Field("", description="One line saying what this specialist looks for.")
    system_prompt: str = Field("", description="Instructions added to the session's system prompt.")
    model: str | None = Field(None, description="Model of the profile's sessions (null: the configured one).")
    allowed_tools: tuple[str, ...] = Field(
        ("read_file", "list_dir", "glob", "grep"),
        description="The tools the profile's sessions may call (others are not offered to the model).",
    )
    read_only: bool = Field(
        True,
        description="Run in plan mode: only reads run, every write and command is denied by the policy.",
    )


class RuntimeConfig(BaseModel):
    """The effective runtime configuration (see ``runtime_config.example.json`` for every field)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    base_url: str = Field(
        "http://127.0.0.1:8080/v1",
        description="Base URL of the OpenAI-compatible API, up to and including /v1.",
    )
    model: str = Field("", description="Model name sent in each request (e.g. 'gpt-4o-mini', 'smollm2').")
    api_key: SecretStr | None = Field(
        None, description="API key. Prefer api_key_env; a key here requires the file to be mode 0600."
    )
    api_key_env: str | None = Field(
        None, description="Name of the environment variable holding the API key (e.g. 'OPENAI_API_KEY')."
    )
    max_parallel_turns: int = Field(4, ge=1, le=64, description="How many sessions may run a turn at once.")
    max_tool_rounds: int = Field(
        25, ge=1, le=1000, description="Max model requests in one turn (the turn limit of the tool loop)."
    )
    connect_timeout: float = Field(10.0, gt=0, description="Seconds to wait for the TCP/TLS connection.")
    read_timeout: float = Field(
        120.0, gt=0, description="Seconds to wait for the first byte and between stream chunks."
    )
    max_retries: int = Field(3, ge=0, le=10, description="Retries on connect errors, 429 and 5xx.")
    max_retry_wait: float = Field(
        60.0, ge=0, description="Longest wait (seconds) honoured from Retry-After; longer is reported."
    )
    command_timeout: float = Field(120.0, gt=0, description="Default timeout of run_command, in seconds.")
    max_output_chars: int = Field(
        30000, gt=0, description="Cap on a tool result sent to the model, in characters."
    )
    default_context_window: int = Field(
        8192, gt=0, description="Context window (tokens) for models not listed in 'models'."
    )
    compact_threshold: float = Field(
        0.8, gt=0, le=1, description="Fraction of the context window at which to compact automatically."
    )
    tools: bool = Field(
        True, description="Send tool specs to models not listed in 'models' (false: chat without tools)."
    )
    models: dict[str, ModelSettings] = Field(default_factory=dict, description="Per-model settings.")
    notify: NotifySettings = Field(
        default_factory=NotifySettings, description="Notifications (true/false is short for enabled)."
    )
    budgets: BudgetSettings = Field(
        default_factory=BudgetSettings, description="Default budgets: session, project_day (group later)."
    )
    loop_guard: LoopGuardSettings = Field(
        default_factory=LoopGuardSettings, description="Pause a session that repeats itself."
    )
    ascii_glyphs: bool = Field(
        False, description="Draw the UI's symbols (status marks, separators, arrows) in plain ASCII."
    )
    resources: tuple[SharedResource, ...] = Field((), description="Shared resources for conflict checks.")
    extra_headers: dict[str, str] = Field(
        default_factory=dict, description="Extra HTTP headers sent with every request (non-secret)."
    )
    sandbox: SandboxSettings = Field(
        default_factory=SandboxSettings, description="Confinement of run_command (docs/sandbox.md)."
    )
    lanes: LaneSettings = Field(
        default_factory=LaneSettings, description="Lanes: a git worktree per session (docs/lanes.md)."
    )
    mcp: McpSettings = Field(
        default_factory=McpSettings, description="MCP servers (user level) and the pool (docs/mcp.md)."
    )
    fanout: FanoutSettings = Field(
        default_factory=FanoutSettings, description="Fan-out groups (docs/fanout.md)."
    )
    agents: dict[str, AgentCommand] = Field(
        default_factory=dict, description="External ACP agents by name, over the built-in ones (docs/acp.md)."
    )
    profiles: dict[str, SessionProfile] = Field(
        default_factory=dict,
        description="Session profiles by name: edit a built-in specialist of /review or add one.",
    )

    @field_validator("notify", mode="before")
    @classmethod
    def _notify_shorthand(cls, value: Any) -> Any:
        return {"enabled": value} if isinstance(value, bool) else value

    @field_validator("sandbox", "lanes", mode="before")
    @classmethod
    def _sandbox_shorthand(cls, value: Any) -> Any:
        return {"mode": value} if isinstance(value, str) else value

    @field_validator("base_url")
    @classmethod
    def _check_url(cls, value: str) -> str:
        parsed = urlparse(value)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError("must be an http(s) URL such as http://127.0.0.1:8080/v1")
        return value.rstrip("/")

    def model_settings(self, model: str | None = None) -> ModelSettings:
        """Return settings for ``model`` (default: the configured model), falling back to defaults."""
        name = model or self.model
        if name in self.models:
            return self.models[name]
        return ModelSettings(context_window=self.default_context_window, tools=self.tools)

    def resolve_api_key(self, env: Mapping[str, str] | None = None) -> str | None:
        """Return the API key: ``api_key``, else ``$api_key_env``, else PARAGENTS_API_KEY / OPENAI_API_KEY.

        Raises ConfigError when ``api_key_env`` names a variable that is not set."""
        env = os.environ if env is None else env
        if self.api_key is not None:
            return self.api_key.get_secret_value()
        if self.api_key_env:
            value = env.get(self.api_key_env)
            if not value:
                raise MissingKeyError(
                    f"api_key_env names ${self.api_key_env}, which is not set: export it or run /setup"
                )
            return value
        return env.get("PARAGENTS_API_KEY") or env.get("OPENAI_API_KEY") or None


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


def redact(secret: str | None) -> str:
    """Return a secret shown safely: ``sk-…abcd`` (first 3 and last 4 chars at most), or '(none)'."""
    if not secret:
        return "(none)"
    if len(secret) <= 8:
        return "…" + secret[-2:]
    return f"{secret[:3]}…{secret[-4:]}"


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


def read_config_file(path: Path) -> dict[str, Any]:
    """Read one config file as a dict, validating it on its own.

    Raises ConfigError naming the file (and line for JSON syntax errors, field for bad values)."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror})") from exc
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ConfigError(
            f"{path}: line {exc.lineno} column {exc.colno}: not valid JSON ({exc.msg})"
        ) from exc
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
    if project.is_file() and project.resolve() != user.resolve():
        found.append(project)
    return found


def load_config(
    project_dir: Path,
    cli: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> LoadedConfig:
    """Load the effective config for ``project_dir``.

    ``cli`` holds values given on the command line (e.g. ``{"base_url": ..., "model": ...}``; None values
    are ignored). Raises ConfigError with a readable message on any bad file or value, and
    :class:`UntrustedConfig` when the project's files add commands or weaken the sandbox or the
    permissions and the user has not trusted them as they are (``paragents.trust``)."""
    env = os.environ if env is None else env
    merged: dict[str, Any] = {}
    sources: dict[str, str] = {}
    files = config_files(project_dir)
    read = [(path, read_config_file(path)) for path in files]
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
