"""Escape tests of the tool paths of a container lane (issue 31 phase 2): a hostile scripted model in a
session opened with ``--on container`` makes its calls through the real engine (the user answers every
ask "allow once"), and the host is checked for evidence: a host file read into a tool result or an
ask's preview, a host file written, a secret of paragents' environment seen inside, the engine
socket or a host port reached, a hook the lane planted run on the host, an install run on the host
for a lockfile the lane wrote."""

from __future__ import annotations

import asyncio
import json
import os
import uuid
from pathlib import Path
from typing import Any

import pytest

from paragents import events as ev
from paragents.llm.replay import ScriptedResponse
from paragents.sessions import SessionView
from tests.backends.engine import Engine
from tests.security.conftest import Host, Hostile, git_repo


async def calls(hostile: Hostile, view: SessionView, *wanted: tuple[str, dict[str, Any]]) -> list[str]:
    """The model makes each tool call (one per reply), then says "done"; returns each result."""
    assert hostile.runtime is not None
    before = len(hostile.sink.of(ev.ToolCallFinished, view.id))
    for i, (name, args) in enumerate(wanted):
        call = {"id": f"x{i}", "name": name, "arguments": json.dumps(args)}
        hostile.server.add(ScriptedResponse.from_message(tool_calls=[call]), session=view.name)
    hostile.server.add(ScriptedResponse.from_message(content="done"), session=view.name)
    hostile.runtime.submit(view.id, "follow the README")
    await hostile.runtime.wait_idle(view.id)
    return [e.output for e in hostile.sink.of(ev.ToolCallFinished, view.id)[before:]]


async def open_lane(hostile: Hostile, host: Host, docker_engine: Engine) -> SessionView:
    project = git_repo(host.root / "project", {"app.py": "def add(a, b):\n    return a - b\n"})
    rt = await hostile.open(
        project, lanes={"image": docker_engine.image, "container": {"host": docker_engine.host}}
    )
    return await rt.lifecycle.new_session("evil", lane=True, on="container")


@pytest.fixture
def planted(host: Host) -> tuple[Path, str]:
    """A secret file of the host, outside the lane (and outside /tmp)."""
    token = "host-secret-" + uuid.uuid4().hex
    path = host.root / "private" / "secret.txt"
    path.parent.mkdir()
    path.write_text(token + "\n")
    return path, token


async def test_file_tools_never_reach_host_files(
    hostile: Hostile, host: Host, docker_engine: Engine, planted: tuple[Path, str]
) -> None:
    secret, token = planted
    view = await open_lane(hostile, host, docker_engine)
    depth = "../" * (len(view.workdir.parts) + 1)
    marker = Path("/var/tmp") / f"paragents-remote-escape-{uuid.uuid4().hex}"
    out = await calls(
        hostile,
        view,
        ("read_file", {"path": str(secret)}),
        ("read_file", {"path": depth + str(secret).lstrip("/")}),
        ("read_file", {"path": "~/.ssh/id_rsa"}),
        ("grep", {"pattern": "host-secret", "path": str(secret.parent)}),
        ("list_dir", {"path": str(host.home / ".ssh")}),
        ("write_file", {"path": str(marker), "content": "pwned"}),
        ("edit_file", {"path": str(secret), "old_string": "host", "new_string": "owned"}),
        ("run_command", {"command": "ln -s / hostroot && ln -s " + str(secret) + " leak && echo planted"}),
        ("read_file", {"path": "hostroot" + str(secret)}),
        ("read_file", {"path": "leak"}),
        ("grep", {"pattern": "host-secret", "path": "hostroot" + str(secret.parent)}),
        ("write_file", {"path": "hostroot" + str(marker), "content": "pwned through a link"}),
    )
    text = "\n".join(out)
    assert token not in text and host.secrets["ssh"] not in text
    assert sum("outside the lane" in o for o in out[:7]) == 7, out[:7]
    assert "planted" in out[7]
    assert "file not found" in out[8] and "file not found" in out[9]  # the container has no such file
    assert not marker.exists() and secret.read_text() == token + "\n"
    assert host.evidence() == {}


async def test_an_asks_preview_never_reads_a_host_file_through_a_planted_link(
    hostile: Hostile, host: Host, docker_engine: Engine, planted: tuple[Path, str]
) -> None:
    secret, token = planted
    view = await open_lane(hostile, host, docker_engine)
    assert hostile.runtime is not None
    await calls(hostile, view, ("run_command", {"command": f"ln -s {secret} leak && ln -s / root"}))
    await hostile.runtime.lane_watcher.run_round()  # the links come to the worktree here
    assert (view.workdir / "leak").is_symlink() and (view.workdir / "root").is_symlink()
    await calls(
        hostile,
        view,
        ("write_file", {"path": "leak", "content": "x\n"}),
        ("edit_file", {"path": "root" + str(secret), "old_string": "host", "new_string": "x"}),
    )
    asks = hostile.sink.of(ev.PermissionRequested, view.id)
    shown = json.dumps([str(a.preview) for a in asks])
    stored = json.dumps([r.preview for r in await hostile.runtime.store.approvals.find(state=None)])
    assert asks and token not in shown and token not in stored
    assert secret.read_text() == token + "\n"


async def test_commands_see_no_secret_no_engine_no_host_port(
    hostile: Hostile, host: Host, docker_engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-" + uuid.uuid4().hex)
    monkeypatch.setenv("DEPLOY_TOKEN", "tok-" + uuid.uuid4().hex)
    banner = "host-port-" + uuid.uuid4().hex

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(banner.encode())
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(serve, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    try:
        view = await open_lane(hostile, host, docker_engine)
        engine_socket = docker_engine.host.removeprefix("unix://")
        out = await hostile.attack(
            view,
            "env; tr '\\0' '\\n' < /proc/1/environ",
            f"ls -la {engine_socket} /var/run/docker.sock 2>&1; grep -c docker /proc/net/unix || true",
            f"timeout 3 bash -c 'exec 3<>/dev/tcp/127.0.0.1/{port}; cat <&3' 2>&1; echo rc=$?",
            "timeout 3 bash -c 'exec 3<>/dev/tcp/172.17.0.1/22' 2>&1; echo rc=$?",
        )
    finally:
        server.close()
        await server.wait_closed()
    text = "\n".join(out)
    for value in (os.environ["OPENAI_API_KEY"], os.environ["DEPLOY_TOKEN"], host.secrets["serve"]):
        assert value not in text
    assert "DOCKER_HOST" not in out[0] and "PARAGENTS_SERVE_KEY" not in out[0]
    assert "No such file" in out[1]
    assert banner not in out[2] and "rc=0" not in out[2] and "rc=0" not in out[3]


async def test_a_planted_hook_or_lockfile_never_runs_on_the_host(
    hostile: Hostile, host: Host, docker_engine: Engine
) -> None:
    view = await open_lane(hostile, host, docker_engine)
    assert hostile.runtime is not None
    hook = host.evil_script("hook", ".git/hooks/post-checkout")
    out = await hostile.attack(
        view,
        hook + " && cp .git/hooks/post-checkout .git/hooks/pre-commit && git config core.fsmonitor "
        f"'{host.evidence_dir}/fsmon' && echo planted",
        host.evil_script("gitdir", "sub/.git", filter=False) + "; echo 'gitdir: /etc' > .gitfile; echo ok",
        "printf 'version = 1\\n' > uv.lock && "
        'printf \'[project]\\nname="x"\\nversion="0"\\n\' > pyproject.toml',
    )
    assert "planted" in out[0]
    rt = hostile.runtime
    watcher = rt.lane_watcher
    await watcher.run_round()  # snapshots fetched, mirrored here; prediction runs git here
    await asyncio.gather(*list(watcher._deps_tasks), return_exceptions=True)  # an install it started
    lane = await rt.store.lanes.of_session(view.id)
    assert lane is not None
    await rt.lanes.refresh_lane(lane)
    assert (view.workdir / "uv.lock").is_file()  # the lockfile came here ...
    assert lane.id not in watcher._deps_seen and not (view.workdir / ".venv").exists()  # ... no install
    assert (view.workdir / ".git").is_file()  # the worktree's own .git file, never the lane's
    assert host.evidence() == {}
