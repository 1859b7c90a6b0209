"""A new lane's setup, read from what the repository already has (first found wins):

1. ``.paragents/worktree.toml``: ``setup`` (a command or a list), ``install``, ``cleanup``, ``timeout``
2. ``conductor.json``: ``scripts.setup`` (with CONDUCTOR_ROOT_PATH, CONDUCTOR_WORKSPACE_PATH, CONDUCTOR_PORT)
3. ``.codex/environments/environment.toml``: ``setup`` / ``cleanup`` (a command, a list, or ``script =``)
4. ``.cursor/worktrees.json``: ``setup-worktree-unix`` or ``setup-worktree`` (ROOT_WORKTREE_PATH set)

Always: ``.worktreeinclude`` (gitignore syntax) names ignored files of the main checkout to copy into
the lane, and the lane gets its own environments (:mod:`paragents.lanes.envs`: ``.venv`` from
``uv.lock``, ``node_modules`` from ``package-lock.json``), never a link to the main checkout's. Setup
commands are the repository's shell lines: they run with ``/bin/sh -c`` in the lane's sandbox
(:mod:`paragents.lanes.contained`), killed at the timeout.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pathspec

from paragents import treefiles, trust
from paragents.config import LaneSettings
from paragents.lanes.contained import LaneSandbox, run_commands
from paragents.lanes.envs import build_environments
from paragents.lanes.errors import LaneError
from paragents.lanes.git import git

LOCKFILE_LIMIT = 256 * 1024 * 1024
"""The largest lockfile hashed (256 MiB; a larger one reads as absent)."""

LOCKFILES: tuple[str, ...] = (
    "uv.lock", "poetry.lock", "package-lock.json", "pnpm-lock.yaml", "yarn.lock",
)  # fmt: skip
"""The lockfiles whose change in a lane means its environment needs an install."""


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
    seconds: dict[str, float] = field(default_factory=dict)
    """Seconds each environment step took (host and sandbox, per package manager)."""


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
        if not (path.is_file() or path.is_symlink()):
            path = root / rel
            if not (path.is_file() or path.is_symlink()):
                continue
        try:  # the commands it runs are the user's to accept, as they are now (paragents.trust)
            trust.require_copy_trusted(root, rel, path)
        except trust.UntrustedError as exc:
            raise LaneError(f"lane setup not run: {exc}") from None
        try:
            text = treefiles.read_text(path, root=path.parents[len(Path(rel).parts) - 1])
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
    """SHA-256 of a file's bytes, or None when it does not exist or is not a regular file (a FIFO a
    command named ``uv.lock`` would block the read forever: paragents.treefiles)."""
    try:
        return hashlib.sha256(treefiles.read_bytes(path, limit=LOCKFILE_LIMIT)).hexdigest()
    except OSError:
        return None


def lockfile_hashes(checkout: Path) -> dict[str, str]:
    """Hashes of the lockfiles present in ``checkout`` (name -> sha256)."""
    hashes = {name: file_hash(checkout / name) for name in LOCKFILES}
    return {name: h for name, h in hashes.items() if h is not None}


async def copy_included(root: Path, lane: Path) -> list[str]:
    """Copy the main checkout's ignored files named by ``.worktreeinclude`` into the lane; return
    the relative paths copied (files already in the lane are left alone)."""
    include = root / ".worktreeinclude"
    try:
        text = treefiles.read_text(include)
    except (OSError, UnicodeDecodeError):
        return []  # absent, or not a regular file (a link, a FIFO): nothing is copied
    spec = pathspec.GitIgnoreSpec.from_lines(text.splitlines())
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
        if top in (".venv", "node_modules") or not spec.match_file(rel):
            continue
        target = lane / rel
        if os.path.lexists(target):
            continue
        if not _copy_regular(root, rel, lane):
            continue
        copied.append(rel)
    return copied


def _copy_regular(root: Path, rel: str, lane: Path) -> bool:
    """Copy the regular file ``root/rel`` to ``lane/rel``; False (nothing copied) when it is not one (a
    symbolic link to ``~/.ssh/id_rsa`` or to paragents' state, a FIFO, a device: paragents.treefiles)
    or when a folder on the way in the lane is not a folder of the lane (a link out of it)."""
    try:
        fd = treefiles.open_regular(root / rel, root=root)
    except (OSError, ValueError):
        return False
    with os.fdopen(fd, "rb") as src:
        st = os.fstat(fd)
        target = lane / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        real_lane = os.path.realpath(lane)
        if os.path.commonpath([os.path.realpath(target.parent), real_lane]) != real_lane:
            return False
        try:
            out = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600)
        except OSError:
            return False
        with os.fdopen(out, "wb") as dst:
            shutil.copyfileobj(src, dst)
        os.chmod(target, stat.S_IMODE(st.st_mode))
        os.utime(target, ns=(st.st_atime_ns, st.st_mtime_ns))
    return True


async def run_setup(
    root: Path,
    lane: Path,
    *,
    port: int,
    settings: LaneSettings,
    sandbox: LaneSandbox,
    on_output: Callable[[str], None] | None = None,
) -> SetupOutcome:
    """Prepare a new lane: copy ``.worktreeinclude`` files, build its own environments, run the setup
    script (in the lane's sandbox). Raises LaneError (with the output) on a failing or hanging setup."""
    outcome = SetupOutcome()
    spec = find_setup(root, lane, port)
    copied = await copy_included(root, lane)
    if copied:
        outcome.notes.append(f"copied {len(copied)} file(s) named by .worktreeinclude")
    env = {**spec.env, "PARAGENTS_PORT": str(port), "PORT": str(port), "PARAGENTS_ROOT": str(root)}
    timeout = spec.timeout or settings.setup_timeout
    built = await build_environments(root, lane, sandbox, env=env, timeout=timeout, on_output=on_output)
    outcome.notes += built.notes
    outcome.seconds = built.seconds
    output = list(built.output)
    if spec.setup:
        label = f"lane setup from {spec.source}" if spec.source else "lane setup"
        output.append(await run_commands(spec.setup, lane, sandbox, env, timeout, on_output, label))
        outcome.notes.append(f"ran the setup from {spec.source}")
    outcome.output = "\n".join(output)
    outcome.lockfiles = lockfile_hashes(lane)
    return outcome
