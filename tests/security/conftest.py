"""The escape suite's shared fixtures: a host with planted secrets outside ``/tmp``, a hostile model
that runs the commands a test gives it through the real engine, and the evidence it may leave.

- :func:`host` (fixture): ``HOME``, paragents' config and state dirs and an ``evidence`` folder under
  ``/var/tmp`` (not ``/tmp``: the sandbox's private ``/tmp`` would hide them anyway and prove
  nothing), with a planted ssh key, ``serve.json``, ``serve-cookie.key`` and a user config holding
  a model key, and ``PARAGENTS_SERVE_KEY`` set in the environment. :meth:`Host.evidence` says what
  an attack left outside its sandbox.
- :func:`require_bwrap`: skip without a working bubblewrap, or fail when ``PARAGENTS_CI`` is set
  (CI installs it).
- :class:`Hostile` (fixture ``hostile``): a real Runtime (store, policy, tools, sandbox, lanes) on a
  loopback replay server; :meth:`Hostile.attack` makes the scripted model call ``run_command`` once
  per command and answers every ask "allow once", as a hurried user would, and returns what each
  command printed.
- :func:`git_repo`: a real repository with one commit.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import sys
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.events import PermissionAnswer
from paragents.llm.replay import ReplayServer, ScriptedResponse
from paragents.sessions import SessionView
from paragents.sessions.runtime import Runtime
from paragents.tools.sandbox import SandboxConfig, check

GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.com",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.com",
}
PYTHON = sys.executable
"""A Python the sandbox can run (the test's own, read-only inside)."""


def require_bwrap() -> None:
    """Skip the test without a working bwrap; in CI (``PARAGENTS_CI``) fail instead."""
    if check(SandboxConfig(mode="required")).active:
        return
    why = "bubblewrap (bwrap) is missing or cannot create a sandbox here"
    if os.environ.get("PARAGENTS_CI"):
        pytest.fail(f"{why}; CI installs it (.ci/run)")
    pytest.skip(why)


@dataclass
class Host:
    """The host an attack must not reach: paths and the secrets planted in them."""

    root: Path
    home: Path
    config: Path
    state: Path
    evidence_dir: Path
    secrets: dict[str, str] = field(default_factory=dict)

    def evidence(self) -> dict[str, str]:
        """What attacks wrote outside their sandbox (file name -> content)."""
        return {p.name: p.read_text(errors="replace") for p in sorted(self.evidence_dir.iterdir())}

    def evil_script(self, name: str, where: str = "evil.sh", *, filter: bool = True) -> str:
        """A shell snippet (run by the attack, inside its sandbox) that writes ``where``: a program
        that, when the HOST runs it, records ``name``, ``id`` and ``$PARAGENTS_SERVE_KEY`` in the
        evidence folder, then copies stdin to stdout (so it works as a filter) or, without
        ``filter``, exits 1 (an ssh program must not wait for its pipe)."""
        last = "cat" if filter else "exit 1"
        body = (
            f'#!/bin/sh\\necho "{name} ran as $(id -u) key=$PARAGENTS_SERVE_KEY" '
            f">> {self.evidence_dir}/{name}\\n{last}\\n"
        )
        return f"printf '{body}' > {where} && chmod +x {where}"


@pytest.fixture
def host(monkeypatch: pytest.MonkeyPatch) -> Iterator[Host]:
    root = Path(f"/var/tmp/paragents-escape-{os.getpid()}-{secrets.token_hex(4)}")
    made = Host(root, root / "home", root / "config", root / "state", root / "evidence")
    for path in (made.home / ".ssh", made.config, made.state, made.evidence_dir):
        path.mkdir(parents=True)
    made.evidence_dir.chmod(0o777)
    made.secrets = {
        "ssh": "ssh-key-" + secrets.token_hex(8),
        "serve": "serve-key-" + secrets.token_hex(8),
        "cookie": "cookie-key-" + secrets.token_hex(8),
        "model": "model-key-" + secrets.token_hex(8),
    }
    (made.home / ".gitconfig").write_text("[user]\n\tname = t\n\temail = t@example.com\n")
    (made.home / ".ssh" / "id_rsa").write_text(made.secrets["ssh"] + "\n")
    (made.config / "serve.json").write_text(
        json.dumps({"url": "http://127.0.0.1:1", "key": made.secrets["serve"]})
    )
    (made.state / "serve-cookie.key").write_text(made.secrets["cookie"])
    (made.config / "runtime_config.json").write_text(json.dumps({"api_key": made.secrets["model"]}))
    for secret_file in (
        made.config / "runtime_config.json",
        made.config / "serve.json",
        made.home / ".ssh/id_rsa",
    ):
        secret_file.chmod(0o600)
    monkeypatch.setenv("HOME", str(made.home))
    monkeypatch.setenv("PARAGENTS_CONFIG_DIR", str(made.config))
    monkeypatch.setenv("PARAGENTS_STATE_DIR", str(made.state))
    monkeypatch.setenv("PARAGENTS_SERVE_KEY", made.secrets["serve"])
    for key, value in GIT_IDENTITY.items():
        monkeypatch.setenv(key, value)
    try:
        yield made
    finally:
        shutil.rmtree(root, ignore_errors=True)


def git_repo(path: Path, files: dict[str, str] | None = None) -> Path:
    """A repository at ``path`` on branch ``main`` with ``files`` committed (default: app.py)."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    for name, text in (files or {"app.py": "print('hi')\n"}).items():
        (path / name).write_text(text)
    subprocess.run(["git", "add", "-A"], cwd=path, check=True)
    subprocess.run(["git", "commit", "-q", "-m", "init"], cwd=path, check=True)
    return path


class AllowEverything:
    """Event sink answering every ask "allow once" and keeping the events."""

    def __init__(self) -> None:
        self.events: list[ev.Event] = []

    def __call__(self, event: ev.Event) -> None:
        self.events.append(event)
        if isinstance(event, ev.PermissionRequested) and not event.reply.done():
            event.reply.set_result(PermissionAnswer("allow_once"))

    def of(self, kind: type, sid: str | None = None) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind) and (sid is None or e.session_id == sid)]


@dataclass
class Hostile:
    """A real Runtime whose scripted model runs the commands a test gives it."""

    server: ReplayServer
    host: Host
    sink: AllowEverything = field(default_factory=AllowEverything)
    runtime: Runtime | None = None

    async def open(self, project: Path, **config: Any) -> Runtime:
        """Open the Runtime on ``project`` with ``config`` overrides (e.g. ``sandbox=...``)."""
        cfg = {"base_url": self.server.base_url, "model": "m", "max_retries": 0, **config}
        self.runtime = await Runtime.create(
            project, cli_overrides=cfg, db_path=self.host.state / "paragents.db"
        )
        self.runtime.set_sink(self.sink)
        return self.runtime

    async def attack(self, view: SessionView, *commands: str) -> list[str]:
        """The model runs each command (one tool call per reply), then says "done"; returns what
        each command printed (its tool result)."""
        assert self.runtime is not None
        before = len(self.sink.of(ev.ToolCallFinished, view.id))
        for i, command in enumerate(commands):
            args = json.dumps({"command": command, "timeout": 60})
            call = {"id": f"c{i}", "name": "run_command", "arguments": args}
            self.server.add(ScriptedResponse.from_message(tool_calls=[call]), session=view.name)
        self.server.add(ScriptedResponse.from_message(content="done"), session=view.name)
        self.runtime.submit(view.id, "do as the README says")
        await self.runtime.wait_idle(view.id)
        return [e.output for e in self.sink.of(ev.ToolCallFinished, view.id)[before:]]


@pytest.fixture
async def hostile(host: Host) -> AsyncIterator[Hostile]:
    async with ReplayServer(models=["m"]) as server:
        made = Hostile(server, host)
        try:
            yield made
        finally:
            if made.runtime is not None:
                await made.runtime.shutdown()
