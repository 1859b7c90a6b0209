"""Which external agents paragents can start, and how: the built-in table (the launch commands Toad
ships), the config's ``agents.NAME`` over it, and the presence check with the install command shown
when the program is missing. Nothing here imports Textual."""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from paragents.config import AgentCommand


@dataclass(frozen=True)
class AgentSpec:
    """How to launch one ACP agent: ``command`` and ``args`` (stdio JSON-RPC), extra ``env``, ``cwd``
    (None: the session's working directory), ``install``: the command that installs it, and
    ``init_timeout``: seconds it gets to answer ``initialize`` (and to open its session)."""

    name: str
    command: str
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    cwd: str | None = None
    install: str | None = None
    init_timeout: float = 60.0

    def argv(self) -> list[str]:
        """The command line (program first)."""
        return [self.command, *self.args]


BUILTIN_AGENTS: dict[str, AgentSpec] = {
    spec.name: spec
    for spec in (
        AgentSpec("qwen", "qwen", ("--acp",), install="npm install -g @qwen-code/qwen-code"),
        AgentSpec("opencode", "opencode", ("acp",), install="npm install -g opencode-ai"),
        AgentSpec("claude", "claude-agent-acp", install="npm install -g @zed-industries/claude-agent-acp"),
        AgentSpec("codex", "codex-acp", install="npm install -g @zed-industries/codex-acp"),
        AgentSpec("gemini", "gemini", ("--experimental-acp",), install="npm install -g @google/gemini-cli"),
    )
}
"""The agents known without configuration (the launch commands Toad ships)."""


class AgentUnavailable(Exception):
    """The agent is unknown or its program is missing; ``str()`` says which and how to install it."""


class AcpLaunchError(Exception):
    """The agent could not be started or did not open its session; ``str()`` carries its stderr."""


def agent_names(configured: Mapping[str, AgentCommand]) -> list[str]:
    """Every agent name: the built-in ones, then the configured ones."""
    return list(dict.fromkeys([*BUILTIN_AGENTS, *configured]))


def resolve_agent(name: str, configured: Mapping[str, AgentCommand]) -> AgentSpec:
    """Return the launch spec of agent ``name`` (the config's ``agents.NAME`` wins over the built-in
    table). Raises AgentUnavailable for an unknown name."""
    if name in configured:
        cfg = configured[name]
        builtin = BUILTIN_AGENTS.get(name)
        install = cfg.install or (builtin.install if builtin else None)
        return AgentSpec(
            name, cfg.command, tuple(cfg.args), dict(cfg.env), cfg.cwd, install, cfg.init_timeout
        )
    if name in BUILTIN_AGENTS:
        return BUILTIN_AGENTS[name]
    known = ", ".join(agent_names(configured))
    raise AgentUnavailable(f"unknown agent {name!r}; known agents: {known} (add others under agents.NAME)")


def find_program(spec: AgentSpec, env: Mapping[str, str] | None = None) -> str:
    """Return the absolute path of the agent's program (PATH of ``env`` plus its own ``env``).
    Raises AgentUnavailable naming the program and its install command when it is missing."""
    base = os.environ if env is None else env
    search = spec.env.get("PATH") or base.get("PATH", os.defpath)
    command = os.path.expanduser(spec.command)
    if os.sep in command:
        found = command if os.access(command, os.X_OK) and Path(command).is_file() else None
    else:
        found = shutil.which(command, path=search)
    if found is None:
        how = f"; install it with: {spec.install}" if spec.install else ""
        raise AgentUnavailable(f"agent {spec.name!r}: the program {spec.command!r} was not found{how}")
    return found
