"""How sessions' commands run: their confinement (``sandbox``, docs/sandbox.md) and the resources
they share (``resources``, checked for conflicts)."""

from __future__ import annotations

from typing import Literal

from pydantic import AliasChoices, BaseModel, ConfigDict, Field


class SharedResource(BaseModel):
    """A named resource that sessions' commands share (e.g. ``port:8000``); two sessions running
    commands that use the same resource at once conflict."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(description="Resource name shown to the user, e.g. 'port:8000' or 'uv.lock'.")
    commands: tuple[str, ...] = Field(
        description="Bash rule patterns (as in Bash(...) rules, '*' wildcards) of commands that use it."
    )


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
    home_visible: tuple[str, ...] = Field(
        (),
        validation_alias=AliasChoices("home_visible", "homeVisible"),
        description="Paths below your home that sandboxed commands see read-only, besides the toolchain "
        "allow-list (~/.cargo, ~/.rustup, ~/.pyenv, uv's Python installs, ~/.local/bin, ~/.nvm, ~/go, "
        "PATH entries...): the rest of your home is hidden from them. '~' shows the whole home (the "
        "usual credential places stay hidden).",
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
