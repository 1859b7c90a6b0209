"""Run a command in a trial lane's sandbox: how the hidden tests (and ``eval validate``'s oracle) run.

The command runs in bubblewrap with the machine read-only, the lane mounted read-write at the task's
working directory (``/app`` for a Harbor task), the hidden tests read-only at ``/tests`` (the oracle at
``/solution``), ``/logs`` writable (``/logs/verifier/reward.txt``), a private ``/tmp``, no
capabilities, its own PID/IPC namespaces and no network unless the task allows it, with the
environment of ``run_command`` (no API keys or tokens: :func:`paragents.tools.shell.command_env`).
Those mount points need not exist on the machine: the sandbox's root is a fresh tmpfs on which every
top-level entry of ``/`` is bound read-only, then the task's mounts. What ``run_command``'s sandbox
hides is hidden here too (paragents' config and state, credential places, runtime sockets:
:mod:`paragents.tools.sandbox_hide`), and user namespaces are refused where bwrap can.

This is one small wrapper over :mod:`paragents.tools.sandbox` (bwrap's flags and its probe) and
:mod:`paragents.tools.shell` (environment, process-group kill): the lanes' own "run a command in a
lane's sandbox" binds the lane at its own path, where Harbor tasks expect ``/app``. Without a
working bubblewrap nothing runs: :class:`SandboxUnavailable` says why. Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import tempfile
import time
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from paragents.tools.sandbox import BASE_FLAGS, SandboxConfig, check, userns_flags
from paragents.tools.sandbox_hide import host_sockets, is_under, secret_paths
from paragents.tools.shell import command_env, kill_group

TAIL_CHARS = 8000
"""The output's last characters kept as evidence."""
RESERVED = frozenset({"proc", "dev", "tmp"})


class SandboxUnavailable(Exception):
    """bubblewrap is missing or cannot create a sandbox here (the message says why and what to do)."""


@dataclass(frozen=True)
class Mount:
    """``source`` (a host path) appears at ``target`` (an absolute path in the sandbox)."""

    source: Path
    target: str
    writable: bool = False


@dataclass(frozen=True)
class CommandResult:
    """A finished sandboxed command: exit code (None when stopped at the timeout), the output's tail,
    seconds it took."""

    exit_code: int | None
    output: str
    seconds: float
    timed_out: bool = False


@lru_cache(maxsize=1)
def _empty_file() -> str:
    """An empty read-only file bound over hidden files (removed at exit)."""
    fd, name = tempfile.mkstemp(prefix="paragents-eval-hidden-")
    os.close(fd)
    os.chmod(name, 0o444)
    atexit.register(_remove, name)
    return name


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        os.unlink(path)


def bwrap_path(bwrap: str = "bwrap") -> str:
    """The bubblewrap program when it can create a sandbox here; else raise SandboxUnavailable."""
    status = check(SandboxConfig(mode="required", bwrap=bwrap))
    if not status.active or status.bwrap is None:
        raise SandboxUnavailable(status.message)
    return status.bwrap


def sandbox_argv(
    bwrap: str, mounts: list[Mount], workdir: str, command: str, *, network: bool = False
) -> list[str]:
    """The bwrap argv running ``bash -c command`` in ``workdir`` with ``mounts`` (see the module)."""
    taken = {m.target.strip("/").split("/", 1)[0] for m in mounts} | RESERVED
    argv = [bwrap]
    for entry in sorted(os.listdir("/")):
        if entry in taken:
            continue
        path = "/" + entry
        if os.path.islink(path):
            argv += ["--symlink", os.readlink(path), path]
        elif os.path.exists(path):
            argv += ["--ro-bind", path, path]
    flags = list(BASE_FLAGS)
    if flags[:3] == ["--ro-bind", "/", "/"]:
        flags = flags[3:]  # the root is the tmpfs above, not the machine's /
    argv += [*flags, *userns_flags(bwrap), "--tmpfs", "/tmp"]
    if not network:
        argv.append("--unshare-net")
    # what run_command hides (paragents' config and state, credentials, runtime sockets) hidden here too
    for path in secret_paths():
        if is_under(path, ["/tmp"]):
            continue  # the private /tmp already hides it
        if os.path.isdir(path):
            argv += ["--perms", "0555", "--tmpfs", path]
        else:
            argv += ["--ro-bind", _empty_file(), path]
    for path in host_sockets():
        argv += ["--ro-bind", _empty_file(), path]
    for mount in sorted(mounts, key=lambda m: m.target.count("/")):
        argv += ["--bind" if mount.writable else "--ro-bind", str(mount.source), mount.target]
    argv += ["--chdir", workdir, "--", "/bin/bash", "-c", command]
    return argv


async def run_in_sandbox(
    command: str,
    *,
    mounts: list[Mount],
    workdir: str,
    env: dict[str, str] | None = None,
    timeout: float = 600.0,
    network: bool = False,
    bwrap: str = "bwrap",
) -> CommandResult:
    """Run ``command`` as described in the module docstring; stop its whole process group after
    ``timeout`` seconds. Never raises for the command's own failure (that is the evidence); raises
    SandboxUnavailable when bubblewrap cannot run here."""
    program = bwrap_path(bwrap)
    argv = sandbox_argv(program, mounts, workdir, command, network=network)
    full_env = command_env()
    full_env.update({"HOME": "/tmp", "TMPDIR": "/tmp", "PYTHONDONTWRITEBYTECODE": "1"})
    full_env.update(env or {})
    start = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        env=full_env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,
    )
    try:
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    except TimeoutError:
        await kill_group(proc, 0.5)
        return CommandResult(
            None, f"stopped after {timeout:g} s", round(time.monotonic() - start, 3), timed_out=True
        )
    except asyncio.CancelledError:
        with contextlib.suppress(ProcessLookupError):
            await kill_group(proc, 0.1)
        raise
    text = out.decode("utf-8", "replace")
    return CommandResult(proc.returncode, text[-TAIL_CHARS:], round(time.monotonic() - start, 3))
