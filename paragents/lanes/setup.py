"""A new lane's setup, read from what the repository already has (first found wins):

1. ``.paragents/worktree.toml``: ``setup`` (a command or a list), ``install``, ``cleanup``, ``timeout``
2. ``conductor.json``: ``scripts.setup`` (with CONDUCTOR_ROOT_PATH, CONDUCTOR_WORKSPACE_PATH, CONDUCTOR_PORT)
3. ``.codex/environments/environment.toml``: ``setup`` / ``cleanup`` (a command, a list, or ``script =``)
4. ``.cursor/worktrees.json``: ``setup-worktree-unix`` or ``setup-worktree`` (ROOT_WORKTREE_PATH set)

Always: ``.worktreeinclude`` (gitignore syntax) names ignored files of the main checkout to copy into
the lane, and dependency folders (``.venv``, ``node_modules``) are symlinked from the main checkout
while the lane's lockfile is byte-identical to the main checkout's; otherwise the setup's ``install``
command runs (or the user is told which command to run). Setup commands are the user's own shell
lines: they run with ``/bin/sh -c`` in the lane, in their own process group, killed at the timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import signal
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pathspec

from paragents import trust
from paragents.config import LaneSettings
from paragents.lanes.errors import LaneError
from paragents.lanes.git import git

DEPENDENCY_DIRS: dict[str, tuple[str, ...]] = {
    ".venv": ("uv.lock", "poetry.lock"),
    "node_modules": ("package-lock.json", "pnpm-lock.yaml", "yarn.lock"),
}
"""Dependency folder -> the lockfiles that decide whether the main checkout's copy fits the lane."""

LOCKFILES: tuple[str, ...] = tuple(name for names in DEPENDENCY_DIRS.values() for name in names)


@dataclass(frozen=True)
class SetupSpec:
    """What a lane's setup runs: ``source`` names the file it came from ('' when none)."""

    source: str = ""
    setup: tuple[str, ...] = ()
    install: tuple[str, ...] = ()
    cleanup: tuple[str, ...] = ()
    timeout: float | None = None
    env: dict[str, str] = field(default_factory=dict)


@dataclass
class SetupOutcome:
    output: str = ""
    notes: list[str] = field(default_factory=list)
    lockfiles: dict[str, str] = field(default_factory=dict)


def _commands(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,) if value.strip() else ()
    if isinstance(value, dict):
        return _commands(value.get("script") or value.get("command") or value.get("commands"))
    if isinstance(value, list):
        return tuple(str(v) for v in value if str(v).strip())
    raise ValueError(f"expected a command or a list of commands, found {type(value).__name__}")


def find_setup(root: Path, lane: Path, port: int) -> SetupSpec:
    """Return the setup of the repository whose main checkout is ``root`` (first file found wins).

    Raises LaneError naming the file when it cannot be read."""
    candidates = (
        ".paragents/worktree.toml",
        "conductor.json",
        ".codex/environments/environment.toml",
        ".cursor/worktrees.json",
    )
    for rel in candidates:
        path = lane / rel
        if not path.is_file():
            path = root / rel
            if not path.is_file():
                continue
        try:  # the commands it runs are the user's to accept, as they are now (paragents.trust)
            trust.require_copy_trusted(root, rel, path)
        except trust.UntrustedError as exc:
            raise LaneError(f"lane setup not run: {exc}") from None
        try:
            text = path.read_text(encoding="utf-8")
            data = tomllib.loads(text) if rel.endswith(".toml") else json.loads(text)
            return _spec(rel, data, root, lane, port)
        except (OSError, ValueError, tomllib.TOMLDecodeError, AttributeError) as exc:
            raise LaneError(f"cannot read the lane setup in {path}: {exc}; fix or remove the file") from exc
    return SetupSpec()


def _spec(rel: str, data: Any, root: Path, lane: Path, port: int) -> SetupSpec:
    if not isinstance(data, dict):
        raise ValueError("the file must hold a table/object at the top")
    if rel == ".paragents/worktree.toml":
        timeout = data.get("timeout")
        return SetupSpec(
            rel,
            _commands(data.get("setup")),
            _commands(data.get("install")),
            _commands(data.get("cleanup")),
            float(timeout) if timeout is not None else None,
        )
    if rel == "conductor.json":
        scripts = data.get("scripts") or {}
        env = {
            "CONDUCTOR_ROOT_PATH": str(root),
            "CONDUCTOR_WORKSPACE_PATH": str(lane),
            "CONDUCTOR_PORT": str(port),
        }
        return SetupSpec(rel, _commands(scripts.get("setup")), (), _commands(scripts.get("archive")), env=env)
    if rel.startswith(".codex"):
        return SetupSpec(rel, _commands(data.get("setup")), (), _commands(data.get("cleanup")))
    setup = data.get("setup-worktree-unix", data.get("setup-worktree"))
    return SetupSpec(rel, _commands(setup), env={"ROOT_WORKTREE_PATH": str(root)})


def file_hash(path: Path) -> str | None:
    """SHA-256 of a file's bytes, or None when it does not exist."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError:
        return None


def lockfile_hashes(checkout: Path) -> dict[str, str]:
    """Hashes of the lockfiles present in ``checkout`` (name -> sha256)."""
    hashes = {name: file_hash(checkout / name) for name in LOCKFILES}
    return {name: h for name, h in hashes.items() if h is not None}


def link_dependencies(root: Path, lane: Path) -> tuple[list[str], list[str]]:
    """Symlink each dependency folder of the main checkout into the lane when every lockfile that
    decides it is identical in both; return (linked folders, folders whose lockfile differs)."""
    linked: list[str] = []
    stale: list[str] = []
    for folder, locks in DEPENDENCY_DIRS.items():
        source = root / folder
        if not source.is_dir() or (lane / folder).exists() or (lane / folder).is_symlink():
            continue
        present = [name for name in locks if (root / name).is_file() or (lane / name).is_file()]
        if not present:
            continue
        if all(file_hash(root / name) == file_hash(lane / name) for name in present):
            (lane / folder).symlink_to(source, target_is_directory=True)
            linked.append(folder)
        else:
            stale.append(folder)
    return linked, stale


async def copy_included(root: Path, lane: Path) -> list[str]:
    """Copy the main checkout's ignored files named by ``.worktreeinclude`` into the lane; return
    the relative paths copied (files already in the lane are left alone)."""
    include = root / ".worktreeinclude"
    if not include.is_file():
        return []
    spec = pathspec.GitIgnoreSpec.from_lines(include.read_text(encoding="utf-8").splitlines())
    listed = await git(
        "ls-files",
        "-z",
        "--others",
        "--ignored",
        "--exclude-standard",
        cwd=root,
        what="listing ignored files",
    )
    copied: list[str] = []
    for rel in filter(None, listed.out.split("\0")):
        top = rel.split("/", 1)[0]
        if top in DEPENDENCY_DIRS or not spec.match_file(rel):
            continue
        target = lane / rel
        if target.exists():
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(root / rel, target, follow_symlinks=False)
        copied.append(rel)
    return copied


async def run_commands(
    commands: tuple[str, ...],
    cwd: Path,
    env: dict[str, str],
    timeout: float,
    on_output: Callable[[str], None] | None,
    label: str,
) -> str:
    """Run ``commands`` one after another (``/bin/sh -c``) in ``cwd``; return their joined output.

    Raises LaneError (output kept) when one exits non-zero or the whole run outlasts ``timeout``."""
    lines: list[str] = []
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    for command in commands:
        lines.append(f"$ {command}")
        if on_output:
            on_output(f"$ {command}")
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            command,
            cwd=str(cwd),
            env={**os.environ, **env},
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,
        )

        async def pump(stream: asyncio.StreamReader) -> None:
            async for raw in stream:
                line = raw.decode("utf-8", "replace").rstrip("\n")
                lines.append(line)
                if on_output:
                    on_output(line)

        assert proc.stdout is not None
        try:
            await asyncio.wait_for(asyncio.gather(pump(proc.stdout), proc.wait()), deadline - loop.time())
        except (TimeoutError, asyncio.CancelledError) as exc:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
            if isinstance(exc, asyncio.CancelledError):
                raise
            raise LaneError(
                f"the {label} did not finish within {timeout:g} s (`{command}`): make it finish, or raise "
                "lanes.setup_timeout (or `timeout` in .paragents/worktree.toml)",
                output="\n".join(lines),
            ) from None
        if proc.returncode != 0:
            raise LaneError(
                f"the {label} failed: `{command}` exited with {proc.returncode}; the lane was removed "
                "(its output is kept below)",
                output="\n".join(lines),
                command_exit=proc.returncode,
            )
    return "\n".join(lines)


async def run_setup(
    root: Path,
    lane: Path,
    *,
    port: int,
    settings: LaneSettings,
    on_output: Callable[[str], None] | None = None,
) -> SetupOutcome:
    """Prepare a new lane: copy ``.worktreeinclude`` files, link or install dependencies, run the
    setup script. Raises LaneError (with the output) on a failing or hanging setup."""
    outcome = SetupOutcome()
    spec = find_setup(root, lane, port)
    copied = await copy_included(root, lane)
    if copied:
        outcome.notes.append(f"copied {len(copied)} file(s) named by .worktreeinclude")
    linked, stale = link_dependencies(root, lane)
    if linked:
        outcome.notes.append("linked " + ", ".join(linked) + " from the main checkout (same lockfile)")
    env = {**spec.env, "PARAGENTS_PORT": str(port), "PORT": str(port), "PARAGENTS_ROOT": str(root)}
    timeout = spec.timeout or settings.setup_timeout
    commands: tuple[str, ...] = spec.setup
    if stale:
        if spec.install:
            commands = spec.install + commands
        else:
            outcome.notes.append(
                f"the lockfile differs from the main checkout's, so {', '.join(stale)} was not linked: "
                "install the dependencies in the lane (or set `install` in .paragents/worktree.toml)"
            )
    if commands:
        label = f"lane setup from {spec.source}" if spec.source else "lane setup"
        outcome.output = await run_commands(commands, lane, env, timeout, on_output, label)
        outcome.notes.append(f"ran the setup from {spec.source or 'the install command'}")
    outcome.lockfiles = lockfile_hashes(lane)
    return outcome
