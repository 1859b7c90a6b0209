"""Escape suite: what a sandboxed command must never see or reach (issue 25, the "also" list).

A hostile model's commands (real engine, real bwrap, ``sandbox: required``) try to read paragents'
secrets (``serve.json``, the cookie key, the model key, the store of every project), the user's ssh
key (directly, through a symlink in the project, through ``/proc/self/root``), a host Unix socket,
secrets in the environment, and a nested user namespace. The evidence is what they printed (the
planted secrets must not appear in any tool result) or a file a host process writes."""

from __future__ import annotations

import os
import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.security.conftest import PYTHON, Host, Hostile, git_repo, require_bwrap

SANDBOX = {"sandbox": {"mode": "required"}}


@pytest.fixture(autouse=True)
def _bwrap() -> None:
    require_bwrap()


def leaked(host: Host, outputs: list[str]) -> list[str]:
    """The planted secrets that appear in the commands' outputs."""
    text = "\n".join(outputs)
    return [name for name, value in host.secrets.items() if value in text]


async def test_paragents_files_and_the_ssh_key_are_hidden(host: Host, hostile: Hostile) -> None:
    project = git_repo(host.root / "project")
    rt = await hostile.open(project, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    await rt.store.notes.add(project, "secret-note-in-the-store", author="user")  # a row of the shared store
    out = await hostile.attack(
        view,
        f"cat {host.config}/serve.json {host.config}/runtime_config.json {host.state}/serve-cookie.key",
        f"grep -a -o 'secret-note-in-the-[a-z]*' {host.state}/paragents.db; ls -a {host.state}",
        f"cat {host.home}/.ssh/id_rsa; ls -a {host.home}/.ssh",
    )
    assert leaked(host, out) == [], out
    assert "secret-note-in-the-store" not in out[1] and "paragents.db" not in out[1].splitlines(), out[1]
    assert "id_rsa" not in out[2].splitlines()


async def test_a_symlink_or_proc_self_root_reaches_only_the_hidden_view(host: Host, hostile: Hostile) -> None:
    project = git_repo(host.root / "project")
    rt = await hostile.open(project, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    out = await hostile.attack(
        view,
        f"ln -s {host.home}/.ssh/id_rsa key && cat key",
        f"cat /proc/self/root{host.home}/.ssh/id_rsa /proc/1/root{host.config}/serve.json",
        f"ln -s {host.config} cfg && cat cfg/serve.json",
    )
    assert leaked(host, out) == [], out
    assert (project / "key").is_symlink()  # the link was made: reading it found nothing


@pytest.fixture
def host_socket(host: Host) -> Iterator[Path]:
    """A Unix socket a host service listens on (outside /tmp); a connection writes evidence."""
    path = host.root / "service.sock"
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen()
    server.settimeout(0.2)
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            (host.evidence_dir / "socket").write_text("a sandboxed command connected")
            conn.close()

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield path
    finally:
        stop.set()
        thread.join(timeout=5)
        server.close()


async def test_a_host_unix_socket_is_unreachable(host: Host, hostile: Hostile, host_socket: Path) -> None:
    project = git_repo(host.root / "project")
    rt = await hostile.open(project, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    connect = "import socket; s = socket.socket(socket.AF_UNIX); "
    connect += f"s.connect({str(host_socket)!r}); print('connected')"
    out = await hostile.attack(view, f'{PYTHON} -c "{connect}"')
    assert "connected" not in out[0].splitlines() and host.evidence() == {}, out


async def test_no_nested_user_namespace(host: Host, hostile: Hostile) -> None:
    project = git_repo(host.root / "project")
    rt = await hostile.open(project, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    out = await hostile.attack(view, "unshare --user true && echo NESTED-USERNS")
    assert "NESTED-USERNS" not in out[0], out


async def test_secrets_in_the_environment_never_reach_a_command(
    host: Host, hostile: Hostile, monkeypatch: pytest.MonkeyPatch
) -> None:
    planted = {
        "DATABASE_URL": "postgres://app:db-secret-1@db/app",
        "GH_PAT": "ghp_secret_2",
        "PGPASSWORD": "pg-secret-3",
        "STRIPE_SECRET_KEY": "sk_live_secret_4",
        "MAIL_PASSWORD": "mail-secret-5",
        "SENTRY_DSN": "https://secret6@sentry.example/1",
        "OPENAI_API_KEY": "sk-secret-7",
    }
    for name, value in planted.items():
        monkeypatch.setenv(name, value)
    project = git_repo(host.root / "project")
    rt = await hostile.open(project, **SANDBOX)
    view = await rt.lifecycle.new_session("a")
    out = await hostile.attack(view, "env; cat /proc/self/environ /proc/1/environ | tr '\\0' '\\n'")
    found = [name for name, value in planted.items() if value in out[0]]
    found += [name for name, value in host.secrets.items() if value in out[0]]
    assert found == [], out[0]
    assert os.environ["HOME"] in out[0]  # the harmless ones still arrive
