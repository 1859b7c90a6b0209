"""The settings facet of the session layer (:class:`Settings`): the config as loaded (files, sources),
why the chat client has no key, ``/show-config``'s rows and ``/reload`` (re-read the files, rebuild the
chat client, apply the new values to the open sessions); :func:`make_client` builds the chat client
of a config. Nothing here imports Textual."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Protocol

from paragents import events as ev
from paragents.config import LoadedConfig, RuntimeConfig, describe_config, load_config
from paragents.llm import ChatClient
from paragents.llm.recording import Recorder
from paragents.sessions.controls import SessionControls
from paragents.sessions.core import SessionsCore


def make_client(
    cfg: RuntimeConfig, recorder: Recorder | None = None, env: Mapping[str, str] | None = None
) -> ChatClient:
    """Return the ``ChatClient`` for a ``RuntimeConfig`` (key resolved from ``env``), reporting raw
    responses to ``recorder.on_response`` when a recorder is given. Raises ConfigError (missing key
    env var)."""
    return ChatClient(
        cfg.base_url,
        cfg.resolve_api_key(env),
        connect_timeout=cfg.connect_timeout,
        read_timeout=cfg.read_timeout,
        max_retries=cfg.max_retries,
        max_retry_wait=cfg.max_retry_wait,
        extra_headers=dict(cfg.extra_headers),
        recorder=recorder.on_response if recorder is not None else None,
    )


class Settings(Protocol):
    """The config as clients see and reload it (``runtime.settings``)."""

    @property
    def loaded(self) -> LoadedConfig:
        """The config with the files it was read from (``loaded.config`` is ``runtime.config``)."""
        ...

    @property
    def key_problem(self) -> str | None:
        """Why the chat client has no API key (None: it has one, or needs none)."""
        ...

    def config_rows(self) -> list[tuple[str, str, str]]: ...
    async def reload_config(self) -> list[tuple[str, str, str]]: ...


class SettingsCommands:
    """The :class:`Settings` facet of the sessions of one project."""

    def __init__(self, core: SessionsCore, controls: SessionControls) -> None:
        self.core = core
        self.controls = controls

    @property
    def loaded(self) -> LoadedConfig:
        return self.core.loaded

    @property
    def key_problem(self) -> str | None:
        return self.core.key_problem

    def config_rows(self) -> list[tuple[str, str, str]]:
        """Return ``(field, redacted value, source)`` rows of the effective config for /show-config."""
        return describe_config(self.core.loaded)

    async def reload_config(self) -> list[tuple[str, str, str]]:
        """Re-read the config files (after /setup, /reload) with the command line's values still on top,
        rebuild the chat client and apply the new values to open sessions: a session on the old default
        model follows a new default (stored, with a note); one given its own model keeps it. Returns
        ``(field, old, new)`` for every value that changed (secrets redacted, as /show-config shows
        them). Raises ConfigError naming the file and field; the running config is then left as it was."""
        core = self.core
        loaded = load_config(core.project_dir, core.cli_overrides, core.env)
        cfg = loaded.config
        client = make_client(cfg, core.recorder, core.env)
        before = {name: value for name, value, _source in describe_config(core.loaded, core.env)}
        old_default = core.loaded.config.model
        old = core.client
        core.loaded = loaded
        core.client = client
        core.scheduler.max_parallel = cfg.max_parallel_turns
        for agent in core.agents.values():
            agent.reconfigure(client, cfg)
        core.conflicts.resources = tuple(cfg.resources)
        await core.mcp_pool.reconfigure(cfg.mcp, [f.path for f in getattr(core.policy, "files", [])])
        for view in list(core.sessions.values()):
            follows = bool(cfg.model) and cfg.model != old_default and view.model == old_default
            if follows and not view.read_only and not view.model.startswith("acp:"):
                await self.controls.set_model(view.id, cfg.model)
                was = old_default or "(none)"
                text = f"model {was} -> {cfg.model}: the default changed (/model {was} switches back)"
                core.emit(ev.Notice(view.id, text))
                continue
            model = view.model or cfg.model
            view.apply(ev.ModelChanged(view.id, model, core.context_window(model)))
        await old.aclose()
        after = describe_config(loaded, core.env)
        return [
            (name, before.get(name, ""), value) for name, value, _src in after if before.get(name) != value
        ]
