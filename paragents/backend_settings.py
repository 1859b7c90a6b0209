"""Where lanes run: ``lanes.backend``, ``lanes.image`` and the ``container`` / ``kubernetes`` settings
(docs/remote.md). Frozen pydantic models, part of :class:`paragents.config.LaneSettings`."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]?)i?b?\s*$", re.IGNORECASE)
_UNITS = {"": 1, "k": 1024, "m": 1024**2, "g": 1024**3, "t": 1024**4}


def parse_size(text: str | int) -> int:
    """``"4g"`` / ``"512m"`` / ``"2GiB"`` / ``1048576`` -> bytes; ValueError naming the forms accepted."""
    if isinstance(text, int):
        return text
    match = _SIZE.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a size: write e.g. '4g', '512m' or a number of bytes")
    return int(float(match.group(1)) * _UNITS[match.group(2).lower()])


class ContainerSettings(BaseModel):
    """The ``container`` backend: one container per lane through the Docker Engine API."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    host: str | None = Field(
        None,
        description="Docker Engine address (unix://, tcp://, ssh://); null: DOCKER_HOST, then the "
        "current docker context, then the local socket. TLS certificates and SSH keys stay on this "
        "machine: they are used to reach the engine and never enter a lane.",
    )
    cpus: float = Field(2.0, gt=0, description="CPUs a lane's container may use (NanoCpus).")
    memory: str = Field("4g", description="Memory limit of a lane's container (no swap on top), e.g. '4g'.")
    pids_limit: int = Field(1024, gt=0, description="Most processes a lane's container may run.")
    network: Literal["none", "bridge"] = Field(
        "none", description="none: no network in the lane; bridge: the engine's default bridge network."
    )
    user: str = Field(
        "1000:1000", description="uid:gid commands run as (never root: '0' and 'root' are refused)."
    )
    connect_timeout: float = Field(10.0, gt=0, description="Seconds to wait for the engine to answer.")
    max_snapshot_bytes: int = Field(
        200_000_000, gt=0, description="Largest snapshot bundle accepted back from a lane, in bytes."
    )

    @field_validator("memory")
    @classmethod
    def _memory(cls, value: str) -> str:
        parse_size(value)
        return value

    @field_validator("user")
    @classmethod
    def _not_root(cls, value: str) -> str:
        if value.split(":", 1)[0] in ("0", "root", ""):
            raise ValueError("lanes run as a non-root user: give a uid:gid such as '1000:1000'")
        return value

    @property
    def memory_bytes(self) -> int:
        return parse_size(self.memory)


class KubernetesSettings(BaseModel):
    """The ``kubernetes`` backend: one Pod (or agent-sandbox ``Sandbox``) per lane."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kubeconfig: str | None = Field(
        None, description="Path of the kubeconfig; null: KUBECONFIG, then ~/.kube/config, then in-cluster."
    )
    context: str | None = Field(None, description="kubeconfig context; null: the current one.")
    namespace: str | None = Field(None, description="Namespace of lane Pods; null: the context's namespace.")
    requests: dict[str, str] = Field(
        default_factory=lambda: {"cpu": "1", "memory": "2Gi"}, description="Resource requests of a lane."
    )
    limits: dict[str, str] = Field(
        default_factory=lambda: {"cpu": "2", "memory": "4Gi"},
        description="Resource limits of a lane (a GPU lane: {'nvidia.com/gpu': '1'}).",
    )
    node_selector: dict[str, str] = Field(
        default_factory=dict, description="nodeSelector of lane Pods (e.g. {'gpu': 'true'})."
    )
    run_as_user: int = Field(1000, gt=0, description="uid commands run as (never root).")
    sandbox_crd: Literal["auto", "off", "required"] = Field(
        "auto",
        description="auto: an agent-sandbox Sandbox per lane when that CRD is installed, else a Pod; "
        "off: always a Pod; required: refuse without the CRD.",
    )
    network_policy: bool = Field(
        True,
        description="Create a NetworkPolicy denying lane Pods all traffic (enforced when the cluster's "
        "network plugin supports NetworkPolicy).",
    )
    start_timeout: float = Field(300.0, gt=0, description="Seconds to wait for a lane's Pod to run.")
    max_snapshot_bytes: int = Field(
        200_000_000, gt=0, description="Largest snapshot bundle accepted back from a lane, in bytes."
    )


BackendName = Literal["local", "container", "kubernetes"]
"""``lanes.backend``: where a lane's tool calls run (docs/remote.md)."""
