"""Targets of ``eval run --targets``: ``model:NAME`` (a model at the configured endpoint),
``model:NAME@URL`` (that model at another OpenAI-compatible endpoint), ``agent:NAME`` (an external ACP
agent, ``agents.NAME`` or a built-in one), and the runtime each target runs in.

Each target gets its own :class:`~paragents.sessions.runtime.Runtime` over the eval's repository, with its
own store (``OUT/state/<n>.db``) and client, so two targets may use two endpoints. The runtime's
config is the user's config reduced to what shapes a trial (models and their prices, tool rounds,
timeouts, the loop guard, the sandbox), recorded in the run's manifest so a replay uses the same.
Nothing here imports Textual."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from paragents.acp.launch import agent_names
from paragents.eval.errors import EvalError
from paragents.llm import ChatClient
from paragents.sessions import Opened, open_sessions

if TYPE_CHECKING:
    from paragents.config import RuntimeConfig
    from paragents.llm.recording import Recorder
REDACTED = "<redacted>"

SHAPING_KEYS = (
    "max_tool_rounds",
    "command_timeout",
    "max_output_chars",
    "default_context_window",
    "compact_threshold",
    "tools",
    "loop_guard",
    "sandbox",
    "read_timeout",
    "connect_timeout",
    "max_retries",
    "max_retry_wait",
)
"""Config values copied from the user's config into each eval runtime (and into the manifest)."""


@dataclass(frozen=True)
class Target:
    """One target: its ``label`` as given, ``kind``, model or agent ``name``, an ``endpoint`` of its own
    (``model:NAME@URL``) and its 1-based ``index`` (in session names: ``<task>.t<index>.<trial>``)."""

    label: str
    kind: Literal["model", "agent"]
    name: str
    index: int
    endpoint: str | None = None

    @property
    def tag(self) -> str:
        return f"t{self.index}"


_LABEL = re.compile(r"^(model|agent):([^@\s]+)(?:@(\S+))?$")


def parse_targets(text: str) -> list[Target]:
    """Parse ``model:a,model:b@http://127.0.0.1:9/v1,agent:qwen`` (EvalError naming the bad one)."""
    targets: list[Target] = []
    for raw in [t.strip() for t in text.split(",") if t.strip()]:
        match = _LABEL.match(raw)
        if match is None:
            raise EvalError(f"--targets: {raw!r} is not model:NAME, model:NAME@URL or agent:NAME")
        kind, name, endpoint = match.group(1), match.group(2), match.group(3)
        if kind == "agent" and endpoint:
            raise EvalError(f"--targets: {raw!r}: an agent brings its own model (no @URL)")
        if endpoint and urlsplit(endpoint).scheme not in ("http", "https"):
            raise EvalError(f"--targets: {raw!r}: the endpoint must be an http(s) URL")
        if any(t.label == raw for t in targets):
            raise EvalError(f"--targets: {raw!r} is listed twice")
        targets.append(Target(raw, kind, name, len(targets) + 1, endpoint))  # type: ignore[arg-type]
    if not targets:
        raise EvalError("--targets: give at least one target, e.g. --targets model:smollm2")
    return targets


def shaping_config(config: RuntimeConfig) -> dict[str, Any]:
    """The user's config values that shape a trial (:data:`SHAPING_KEYS`, the ``models`` table and the
    ``agents`` table), as JSON-able data without secrets."""
    data = config.model_dump(mode="json")
    out = {k: data[k] for k in SHAPING_KEYS if k in data}
    out["models"] = data.get("models", {})
    agents = data.get("agents", {})
    for agent in agents.values():  # an agent's env may hold its key: kept only as a ${VAR} reference
        env = agent.get("env") or {}
        agent["env"] = {k: v if str(v).startswith("${") else REDACTED for k, v in env.items()}
    out["agents"] = agents
    return out


def agents_config(config: RuntimeConfig) -> dict[str, Any]:
    """The ``agents`` table as configured, secrets included: what the runtimes launch agents with
    (never written to the manifest: :func:`shaping_config` keeps a redacted copy)."""
    return dict(config.model_dump(mode="json").get("agents", {}))


def lanes_config(config: RuntimeConfig) -> dict[str, Any]:
    """Where this machine's container and Pod lanes run: ``lanes.image``, ``lanes.container`` and
    ``lanes.kubernetes`` of the config (what ``eval run --on container|k8s`` and its replay use)."""
    lanes = config.lanes.model_dump(mode="json")
    return {key: lanes[key] for key in ("image", "container", "kubernetes")}


def check_target(target: Target, config: RuntimeConfig) -> None:
    """EvalError when ``target`` names an agent paragents does not know."""
    if target.kind == "agent":
        names = agent_names(config.agents)
        if target.name not in names:
            raise EvalError(
                f"--targets: agent:{target.name} is not a known agent "
                f"(known: {', '.join(sorted(names)) or 'none'}; add agents.{target.name} to the config)"
            )


def endpoint_label(url: str) -> str:
    """The endpoint as kept in the manifest: scheme, host, port and path (never credentials)."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


async def open_target_runtime(
    target: Target,
    *,
    repo: Path,
    db: Path,
    shaping: dict[str, Any],
    agents: dict[str, Any] | None = None,
    base_url: str,
    model: str,
    api_key: str | None,
    extra_headers: dict[str, str],
    rules: dict[str, list[str]],
    parallel: int,
    recorder: Recorder | None,
    retry_base_delay: float | None = None,
    lanes: dict[str, Any] | None = None,
) -> Opened:
    """Open the runtime of ``target`` over ``repo`` (see the module docstring); ``agents`` is the agents
    table with its secrets (else the shaping's); ``lanes`` the lane settings of a container or Pod run.
    Raises ConfigError or PolicyError like ``Runtime.create``."""
    overrides: dict[str, Any] = {k: v for k, v in shaping.items() if k != "agents"}
    if agents or shaping.get("agents"):
        overrides["agents"] = agents or shaping["agents"]
    overrides.update({"base_url": base_url, "model": model, "max_parallel_turns": max(1, parallel)})
    if lanes:
        overrides["lanes"] = lanes
    extra: dict[str, Any] = {}
    if retry_base_delay is not None:
        extra["retry_base_delay"] = retry_base_delay
    client = ChatClient(
        base_url,
        api_key,
        connect_timeout=float(shaping.get("connect_timeout", 10.0)),
        read_timeout=float(shaping.get("read_timeout", 300.0)),
        max_retries=int(shaping.get("max_retries", 3)),
        max_retry_wait=float(shaping.get("max_retry_wait", 30.0)),
        extra_headers=extra_headers,
        recorder=recorder.on_response if recorder is not None else None,
        **extra,
    )
    return await open_sessions(
        repo,
        cli_overrides=overrides,
        db_path=db,
        cli_rules=rules or None,
        env={},
        client=client,
        recorder=recorder,
    )
