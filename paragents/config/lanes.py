"""Lane settings (``lanes``, docs/lanes.md): a git worktree per session, and where it runs."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from paragents.backend_settings import BackendName, ContainerSettings, KubernetesSettings


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
