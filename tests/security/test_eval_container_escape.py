"""Escape test of ``eval run --on container``'s hidden tests (docs/eval.md, "Trials in containers and
Pods"): a task's ``tests/test.sh`` is hostile code, run by the real engine in the trial's container
after the agent stopped. It tries to write a marker on the host, reach the engine's socket and a host
port, read paragents' secrets (its environment, the endpoint's key), change the copied tests, and make
the logs that come back point at host files or be too large to hold. The host is then checked for
evidence: nothing written outside the container, no connection, no secret in anything the run kept,
the tests as copied, no link or oversized file below the trial's folder."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from paragents.eval.loader import load_tasks
from paragents.eval.runner import run_eval
from paragents.llm.replay import ReplayServer
from tests.backends.engine import Engine
from tests.eval.conftest import scripted_options
from tests.eval.placed import harbor_task, solve
from tests.eval.solver import SOLVER_MODEL
from tests.security.conftest import Host

HOSTILE = """#!/bin/bash
mkdir -p /logs/verifier
# a marker on the host (the path exists there; here /var/tmp is the container's own)
mkdir -p {evidence} && echo pwned > {evidence}/tests-wrote && echo "marker written in its own world"
# the engine's socket and a port of the host
python3 - <<'PY'
import socket
for path in ["{socket}", "/var/run/docker.sock", "/run/docker.sock"]:
    try:
        s = socket.socket(socket.AF_UNIX)
        s.connect(path)
        s.sendall(b"POST /containers/create HTTP/1.0\\r\\nContent-Length: 2\\r\\n\\r\\n{{}}")
        print("ENGINE REACHED", path, s.recv(100))
    except OSError as exc:
        print("engine unreachable:", path, exc)
for host in ["127.0.0.1", "{host_ip}"]:
    try:
        socket.create_connection((host, {port}), timeout=3)
        print("HOST PORT REACHED", host)
    except OSError as exc:
        print("host port unreachable:", host, exc)
PY
# secrets: everything this process and the container's first one can see
env | tee /logs/verifier/env.txt
tr '\\0' '\\n' < /proc/1/environ 2>/dev/null | tee -a /logs/verifier/env.txt
# the copied tests: change them for the next reader
echo 'echo 1 > /logs/verifier/reward.txt' >> /tests/test.sh || echo "tests not writable"
rm -f /tests/test.sh || echo "tests not removable"
# the logs that come back: links to host files, and more than the run reads back
ln -s {secret_file} /logs/verifier/reward.json
ln -s {evidence} /logs/verifier/into-host
{{huge}}
echo 1 > /logs/verifier/reward.txt
"""


@pytest.fixture
async def solver() -> AsyncIterator[ReplayServer]:
    async with ReplayServer(models=[SOLVER_MODEL]) as server:
        yield server


async def test_hostile_hidden_tests_in_the_container_leave_no_trace_on_the_host(
    solver: ReplayServer, tmp_path: Path, docker_engine: Engine, host: Host
) -> None:
    seen: list[str] = []

    async def listener(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        seen.append(str(writer.get_extra_info("peername")))
        writer.close()

    server = await asyncio.start_server(listener, "0.0.0.0", 0)
    port = server.sockets[0].getsockname()[1]
    secret_file = host.home / ".ssh" / "id_rsa"
    socket_path = docker_engine.host.removeprefix("unix://")
    script = HOSTILE.format(
        evidence=host.evidence_dir, socket=socket_path, host_ip=_host_ip(), port=port, secret_file=secret_file
    )
    huge = "mkdir -p /logs/agent && head -c 40000000 /dev/zero > /logs/agent/huge.bin"
    for name, extra in (("links", ""), ("huge", huge)):
        harbor_task(tmp_path / "tasks", name, docker_engine.image, test_sh=script.replace("{huge}", extra))
        solve(solver, f"{name}.t1.1")
    tasks = load_tasks(str(tmp_path / "tasks"))
    out = tmp_path / "run"
    options = scripted_options(tasks, out, solver, queue_replies=False)
    options.endpoints[options.targets[0].label].api_key = host.secrets["model"]
    options.on, options.lanes = "container", {"container": {"host": docker_engine.host, "connect_timeout": 5}}
    try:
        results = await run_eval(options)
    finally:
        server.close()
        await server.wait_closed()

    for trial in results.trials:
        trial_dir = out / "trials" / trial.name
        log = (trial_dir / "verifier.log").read_text()
        assert "marker written in its own world" in log  # the attack ran, in the container
        assert "ENGINE REACHED" not in log and log.count("engine unreachable:") == 3
        assert "HOST PORT REACHED" not in log
        assert "tests not writable" in log and "tests not removable" in log
        original = tmp_path / "tasks" / trial.task / "tests" / "test.sh"
        assert (trial_dir / "tests" / "test.sh").read_text() == original.read_text()  # the host's copy
        assert "HOME=/tmp" in log  # the environments it printed
        # what came back: no link (to the host's files or anywhere), nothing past the size cap
        assert [p for p in (trial_dir / "logs").rglob("*") if p.is_symlink()] == []
        assert (trial_dir / "logs" / "verifier" / "reward.txt").read_text() == "1\n"
        assert trial.resolved  # a reward is as trustworthy as the tests that write it
    links, big = out / "trials" / "links.t1.1" / "logs", out / "trials" / "huge.t1.1" / "logs"
    assert (links / "verifier" / "env.txt").is_file() and not (links / "verifier" / "reward.json").exists()
    assert not (big / "agent" / "huge.bin").exists() and not (big / "verifier" / "env.txt").exists()
    assert host.evidence() == {} and seen == []  # nothing written on the host, no connection
    assert secret_file.read_text() == host.secrets["ssh"] + "\n"
    # no secret anywhere in what the run kept (logs, cassettes, results, stores, the copied-back env)
    for name, secret in host.secrets.items():
        for path in out.rglob("*"):
            if path.is_file() and not path.is_symlink():
                assert secret.encode() not in path.read_bytes(), (name, path)


def _host_ip() -> str:
    """An address of this machine other than loopback (or loopback when it has none)."""
    import socket

    try:
        probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing address
        return str(probe.getsockname()[0])
    except OSError:
        return "127.0.0.1"
