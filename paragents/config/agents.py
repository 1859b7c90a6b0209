"""External ACP agents (``agents.NAME``, docs/acp.md): how to launch each."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field


class AgentCommand(BaseModel):
    """An external ACP agent (``agents.NAME``): how to launch it on stdio (docs/acp.md)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    command: str = Field(description="The program: a name looked up in PATH, or a path.")
    args: tuple[str, ...] = Field((), description="Its arguments, e.g. ['--acp'].")
    env: dict[str, str] = Field(default_factory=dict, description="Extra environment for it.")
    cwd: str | None = Field(None, description="Its working directory (default: the session's).")
    install: str | None = Field(None, description="How to install it, shown when the program is missing.")
    init_timeout: float = Field(60.0, gt=0, description="Seconds it gets to answer initialize.")
