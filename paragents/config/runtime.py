"""The effective runtime configuration: :class:`RuntimeConfig` gathers every settings group."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator

from paragents.config.agents import AgentCommand
from paragents.config.budgets import BudgetSettings, LoopGuardSettings
from paragents.config.errors import MissingKeyError
from paragents.config.fanout import FanoutSettings, SessionProfile
from paragents.config.lanes import LaneSettings
from paragents.config.llm import ModelSettings
from paragents.config.mcp import McpSettings
from paragents.config.notify import NotifySettings
from paragents.config.sandbox import SandboxSettings, SharedResource


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
    max_retries: int = Field(
        3, ge=0, le=10, description="Retries on connect errors, 429, 5xx and a request the server dropped."
    )
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
