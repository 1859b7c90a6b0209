"""Commands paragents itself runs in a lane's tree, confined like a session's own commands.

``lanes.verify`` (``/lanes`` ``v``, ``lanes merge``), ``/fanout --verify`` (every candidate), the lane's
setup and install commands and the project step of its environment build all execute code a session
could have written (a ``conftest.py``, a package script, a build hook). :func:`run_in_lane` starts every
one of them, through the same two functions as ``run_command``:

- :func:`paragents.tools.sandbox.bwrap_argv` (after :func:`~paragents.tools.sandbox.check`): the
  lane's worktree and its private cache folder (:func:`cache_dir`) writable, nothing else; the paths
  of Read deny rules hidden; network as ``lanes.verify_network`` says (default none). The session's
  ``sandbox.writable`` paths are *not* added: a command paragents starts gets no more than the lane.
- :func:`paragents.tools.shell.command_env`: the command's environment, without paragents' secrets.

Whatever hardening those two gain applies here without a change. ``sandbox.mode`` decides as it does
for a session: "required" without bubblewrap refuses to run (the command counts as failed), "auto"
without it runs unconfined and says so in the output's first line, "off" runs unconfined.
Nothing here imports Textual."""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from paragents.config import LaneSettings, SandboxSettings
from paragents.lanes.errors import LaneError
from paragents.tools.sandbox import NetworkMode, Prepared, SandboxConfig, SandboxMode, check, prepare
from paragents.tools.shell import command_env, kill_group, settle

OUTPUT_KEEP = 1_000_000
"""Characters of a command's output kept in memory (its end); the rest is only streamed."""
DRAIN = 2.0
"""Seconds to keep reading after the command exited."""
REFUSED_EXIT = 126
"""The exit code a command gets when the sandbox is required but cannot be made (it never ran)."""


def cache_dir(lane: Path) -> Path:
    """The lane's private cache folder (``<lane>.cache`` beside the worktree, never inside it): the
    uv and npm caches of the commands paragents runs there. Writable in their sandbox, removed with
    the lane; never the user's own caches (files in those are hard-linked into other environments)."""
    return lane.parent / f"{lane.name}.cache"


def cache_env(lane: Path) -> dict[str, str]:
    """The variables that point uv, npm and XDG-aware tools at the lane's private cache."""
    root = cache_dir(lane)
    return {
        "UV_CACHE_DIR": str(root / "uv"),
        "npm_config_cache": str(root / "npm"),
        "XDG_CACHE_HOME": str(root / "xdg"),
    }


class LaneRunner(Protocol):
    """Where paragents' own commands run for a lane that is not on this machine (a container, a
    Pod: ``paragents.backends.facet.LaneCommands``); its place is their sandbox."""

    @property
    def where(self) -> str: ...

    async def run(
        self, command: str, *, env: Mapping[str, str], timeout: float, on_output: Callable[[str], None]
    ) -> int | None:
        """Run ``command`` in the lane's root, each output line to ``on_output``; return its exit
        code, None when stopped at ``timeout``. Raises an exception whose text says why it could not
        run (the lane does not answer)."""
        ...


@dataclass(frozen=True)
class LaneSandbox:
    """How commands paragents runs in lanes are confined: the ``sandbox`` settings' mode and bwrap,
    ``lanes.verify_network``, and the Read deny rules to hide (``(root, pattern)`` pairs); or, for a
    lane on a remote backend, the ``runner`` that runs them in its container or Pod."""

    mode: SandboxMode = "auto"
    network: NetworkMode = "none"
    hidden_rules: tuple[tuple[str, str], ...] = ()
    bwrap: str = "bwrap"
    runner: LaneRunner | None = field(default=None, compare=False)
    home_visible: tuple[str, ...] = ()

    @classmethod
    def from_settings(
        cls,
        sandbox: SandboxSettings | None = None,
        lanes: LaneSettings | None = None,
        hidden_rules: tuple[tuple[str, str], ...] = (),
    ) -> LaneSandbox:
        """The lane sandbox of a config (defaults: mode auto, no network)."""
        sandbox = sandbox or SandboxSettings()
        lanes = lanes or LaneSettings()
        return cls(
            sandbox.mode, lanes.verify_network, hidden_rules, sandbox.bwrap, home_visible=sandbox.home_visible
        )

    def config(self, lane: Path) -> SandboxConfig:
        """The sandbox of one command in ``lane``: the worktree and its cache folder writable."""
        return SandboxConfig(
            mode=self.mode,
            network=self.network,
            writable=(str(cache_dir(lane)),),
            hidden_rules=self.hidden_rules,
            root=lane,
            bwrap=self.bwrap,
            home_visible=self.home_visible,
        )


@dataclass(frozen=True)
class RunOutcome:
    """One finished command: ``exit_code`` (None when it was stopped at the timeout), its output
    (the end of it when long), the seconds it took and whether it ran in the sandbox."""

    command: str
    exit_code: int | None
    output: str
    seconds: float
    sandboxed: bool

    @property
    def ok(self) -> bool:
        return self.exit_code == 0


async def run_in_lane(
    command: str,
    lane: Path,
    sandbox: LaneSandbox,
    *,
    env: Mapping[str, str] | None = None,
    timeout: float,
    on_output: Callable[[str], None] | None = None,
    cwd: Path | None = None,
) -> RunOutcome:
    """Run ``/bin/sh -c command`` in ``cwd`` (default: the lane's worktree ``lane``) confined to the
    lane (see the module docstring), with :func:`~paragents.tools.shell.command_env` plus ``env`` and
    the lane's cache variables; pass each output line to ``on_output`` (the first one is
    ``$ command``); stop the whole sandbox at
    ``timeout`` seconds. Never raises for the command's own failure. On cancellation the command is
    killed and CancelledError re-raised."""
    if sandbox.runner is not None:
        return await _run_remote(command, sandbox.runner, env=env, timeout=timeout, on_output=on_output)
    started = time.monotonic()
    lane = lane.resolve()
    where = (cwd or lane).resolve()
    config = sandbox.config(lane)
    status = check(config)
    if status.state == "refused":
        text = f"$ {command}\nnot run: {status.message}"
        if on_output:
            for line in text.splitlines():
                on_output(line)
        return RunOutcome(command, REFUSED_EXIT, text, 0.0, False)
    for folder in cache_env(lane).values():
        Path(folder).mkdir(parents=True, exist_ok=True)
    argv = ["/bin/sh", "-c", command]
    lines: deque[str] = deque()
    kept = [0]

    def say(line: str) -> None:
        lines.append(line)
        kept[0] += len(line) + 1
        while kept[0] > OUTPUT_KEEP and len(lines) > 1:
            kept[0] -= len(lines.popleft()) + 1
        if on_output:
            on_output(line)

    say(f"$ {command}")
    sandboxed = bool(status.active and status.bwrap)
    boxed: Prepared | None = None
    if sandboxed:
        assert status.bwrap is not None
        boxed = prepare(status.bwrap, config, where, argv)
        argv = boxed.argv
    elif status.state == "unconfined":
        say(f"({status.message})")
    try:
        code = await _run(argv, where, {**command_env(), **(env or {}), **cache_env(lane)}, timeout, say)
    finally:
        for notice in await settle(boxed):
            say(f"[{notice}]")
    if code == START_FAILED:
        return RunOutcome(command, 127, "\n".join(lines), 0.0, sandboxed)
    return RunOutcome(command, code, "\n".join(lines), round(time.monotonic() - started, 3), sandboxed)


START_FAILED = -1000
"""What :func:`_run` returns when the command could not start (it said why)."""


async def _run(
    argv: list[str], where: Path, full_env: dict[str, str], timeout: float, say: Callable[[str], None]
) -> int | None:
    """Run ``argv`` in ``where``, each output line to ``say``; its exit code, None at the timeout."""
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(where),
            env=full_env,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )
    except OSError as exc:
        say(f"cannot start {argv[0]}: {exc.strerror or exc}")
        return START_FAILED

    async def pump() -> None:
        assert proc.stdout is not None
        async for raw in proc.stdout:
            say(raw.decode("utf-8", "replace").rstrip("\n"))

    reader = asyncio.get_running_loop().create_task(pump())
    code: int | None
    try:
        await asyncio.wait_for(proc.wait(), timeout)
        code = proc.returncode
    except TimeoutError:
        await kill_group(proc, 0.5)
        code = None
    except BaseException:
        reader.cancel()
        with contextlib.suppress(ProcessLookupError):
            await kill_group(proc, 0.1)
        raise
    try:  # the rest of the output (an unconfined background process may hold the pipe: not for long)
        await asyncio.wait_for(reader, DRAIN)
    except TimeoutError:
        say("(background processes still hold the output; what they print later is not shown)")
    return code


async def _run_remote(
    command: str,
    runner: LaneRunner,
    *,
    env: Mapping[str, str] | None,
    timeout: float,
    on_output: Callable[[str], None] | None,
) -> RunOutcome:
    """:func:`run_in_lane` for a lane on a remote backend: the command runs in its place (the lane's
    ports in ``env``; nothing of this machine's environment). A lane that does not answer counts as a
    failed command whose output says why (exit 126, as a refused sandbox)."""
    started = time.monotonic()
    lines: deque[str] = deque()
    kept = [0]

    def say(line: str) -> None:
        lines.append(line)
        kept[0] += len(line) + 1
        while kept[0] > OUTPUT_KEEP and len(lines) > 1:
            kept[0] -= len(lines.popleft()) + 1
        if on_output:
            on_output(line)

    say(f"$ {command}")
    say(f"(runs in {runner.where})")
    try:
        code = await runner.run(command, env=dict(env or {}), timeout=timeout, on_output=say)
    except asyncio.CancelledError:
        raise
    except Exception as exc:  # the lane does not answer: nothing ran
        say(f"not run: {exc}")
        code = REFUSED_EXIT
    return RunOutcome(command, code, "\n".join(lines), round(time.monotonic() - started, 3), True)


async def run_commands(
    commands: Sequence[str],
    lane: Path,
    sandbox: LaneSandbox,
    env: Mapping[str, str],
    timeout: float,
    on_output: Callable[[str], None] | None,
    label: str,
) -> str:
    """Run ``commands`` one after another in the lane (each through :func:`run_in_lane`); return
    their joined output. Raises LaneError (output kept, ``command_exit`` set)
    when one fails, and when the whole run outlasts ``timeout`` seconds."""
    outputs: list[str] = []
    deadline = time.monotonic() + timeout
    for command in commands:
        left = max(deadline - time.monotonic(), 0.001)
        done = await run_in_lane(command, lane, sandbox, env=env, timeout=left, on_output=on_output)
        outputs.append(done.output)
        if done.exit_code is None:
            raise LaneError(
                f"the {label} did not finish within {timeout:g} s (`{command}`): make it finish, or raise "
                "lanes.setup_timeout (or `timeout` in .paragents/worktree.toml)",
                output="\n".join(outputs),
            )
        if not done.ok:
            raise LaneError(
                f"the {label} failed: `{command}` exited with {done.exit_code}",
                output="\n".join(outputs),
                command_exit=done.exit_code,
            )
    return "\n".join(o for o in outputs if o)


def remove_cache(lane: Path) -> None:
    """Remove the lane's private cache folder (with the lane)."""
    import shutil

    folder = cache_dir(lane)
    if folder.is_dir() and not folder.is_symlink():
        shutil.rmtree(folder, ignore_errors=True)
    elif folder.is_symlink():
        with contextlib.suppress(OSError):
            os.unlink(folder)
