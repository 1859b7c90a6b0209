"""The composition root of the session layer: :func:`open_sessions` builds the
:class:`~paragents.sessions.runtime.Runtime` of a project and hands it out as what each client may
use: the :class:`~paragents.sessions.api.SessionsAPI` (its facets), and, for the clients whose own
records live in the store (fan-out groups, the API server's access log, the eval's evidence, the
replay's report), the store and the chat client in force, passed on at their construction. This is
the one module outside ``runtime.py`` that imports it (an import contract in pyproject.toml). Nothing
here imports Textual."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from paragents.llm import ChatClient
from paragents.llm.recording import Recorder
from paragents.sessions.api import SessionsAPI
from paragents.sessions.runtime import Runtime
from paragents.store import Store


@dataclass(frozen=True)
class Opened:
    """A project's session layer as its composition root hands it out."""

    api: SessionsAPI
    """The session API every client drives."""
    store: Store
    """The store the sessions run on (its repositories, for the clients whose records live there)."""
    chat: Callable[[], ChatClient]
    """The chat client in force (``/reload`` replaces it: ask each time, never keep one)."""


def opened(runtime: Runtime) -> Opened:
    """``runtime`` handed out as :class:`Opened` (a runtime a test built with ``Runtime.create``)."""
    return Opened(runtime, runtime.store, lambda: runtime.client)


async def open_sessions(
    project_dir: Path,
    *,
    cli_overrides: Mapping[str, Any] | None = None,
    db_path: Path | None = None,
    cli_rules: dict[str, list[str]] | None = None,
    env: Mapping[str, str] | None = None,
    client: ChatClient | None = None,
    recorder: Recorder | None = None,
    keyless_ok: bool = False,
    unattended_wait: float | None = None,
) -> Opened:
    """Open the session layer of ``project_dir`` (see :meth:`Runtime.create` for the arguments and
    the errors: ConfigError, PolicyError)."""
    runtime = await Runtime.create(
        project_dir,
        cli_overrides=cli_overrides,
        db_path=db_path,
        cli_rules=cli_rules,
        env=env,
        client=client,
        recorder=recorder,
        keyless_ok=keyless_ok,
        unattended_wait=unattended_wait,
    )
    return opened(runtime)
