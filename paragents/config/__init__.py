"""Runtime configuration: frozen, documented pydantic models, one module per settings group, and one
loader with written precedence (:mod:`paragents.config.loader`).

The groups stand alone (``sandbox``, ``lanes``, ``mcp``, ``fanout``, ``agents``, ``budgets``,
``notify``, ``llm``); :mod:`~paragents.config.runtime` gathers them in :class:`RuntimeConfig`;
:mod:`~paragents.config.loader` reads the files and :mod:`~paragents.config.shown` shows the result
(``/show-config``, a reload's notice). Every name is re-exported here: ``from paragents.config import X``
is the way to use them.
"""

from paragents.config.agents import AgentCommand
from paragents.config.budgets import BudgetSettings, LoopGuardSettings
from paragents.config.errors import ConfigError, MissingKeyError, UntrustedConfig
from paragents.config.fanout import FanoutSettings, SessionProfile
from paragents.config.lanes import LaneSettings
from paragents.config.llm import ModelSettings
from paragents.config.loader import (
    CONFIG_FILENAME,
    LoadedConfig,
    config_files,
    has_config,
    load_config,
    read_config_file,
    require_trusted_files,
    save_user_config,
)
from paragents.config.mcp import McpServerSettings, McpSettings
from paragents.config.notify import NotifySettings
from paragents.config.runtime import RuntimeConfig
from paragents.config.sandbox import SandboxSettings, SharedResource
from paragents.config.shown import describe_changes, describe_config, mcp_server_shown, mcp_shown, redact

__all__ = [
    "CONFIG_FILENAME",
    "AgentCommand",
    "BudgetSettings",
    "ConfigError",
    "FanoutSettings",
    "LaneSettings",
    "LoadedConfig",
    "LoopGuardSettings",
    "McpServerSettings",
    "McpSettings",
    "MissingKeyError",
    "ModelSettings",
    "NotifySettings",
    "RuntimeConfig",
    "SandboxSettings",
    "SessionProfile",
    "SharedResource",
    "UntrustedConfig",
    "config_files",
    "describe_changes",
    "describe_config",
    "has_config",
    "load_config",
    "mcp_server_shown",
    "mcp_shown",
    "read_config_file",
    "redact",
    "require_trusted_files",
    "save_user_config",
]
